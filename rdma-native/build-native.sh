#!/usr/bin/env bash
# Builds into $1 (default build/native): libdisni.so (DiSNI 2.1's JNI methods) and libjbofrdma.so
# (jbof's RdmaNative: CM private data, the completion-channel wait, the device list).
# Needs gcc and Debian's libibverbs-dev and librdmacm-dev; without them it says so and builds nothing,
# and the RDMA transport then reports that the library is missing when asked for.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$here/build/native}"
srcdir="$here/src/main/c"
missing=()
command -v gcc >/dev/null || missing+=(gcc)
[ -f /usr/include/infiniband/verbs.h ] || missing+=(libibverbs-dev)
[ -f /usr/include/rdma/rdma_cma.h ] || missing+=(librdmacm-dev)
if [ ${#missing[@]} -gt 0 ]; then
    echo "rdma-native: NOT building libdisni.so and libjbofrdma.so (RDMA transport unavailable): install ${missing[*]} (apt-get install -y ${missing[*]})"
    exit 0
fi
java_home="${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v javac || command -v java)")")")}"
if [ ! -f "$java_home/include/jni.h" ]; then
    echo "rdma-native: NOT building libdisni.so: no jni.h under $java_home/include (set JAVA_HOME to a JDK)"
    exit 0
fi
mkdir -p "$out"
build() { # build LIB SOURCE [CFLAGS]: compiles when the source, the header or this script is newer than the library
  local lib="$out/$1" src="$srcdir/$2"
  mkdir -p "$(dirname "$lib")"
  if [ "$lib" -nt "$src" ] && [ "$lib" -nt "$srcdir/jbof_cm_extra.h" ] && [ "$lib" -nt "$0" ]; then return 0; fi
  gcc -O2 -g -fPIC -shared -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Werror \
      -I"$java_home/include" -I"$java_home/include/linux" \
      ${3:-} -o "$lib.tmp" "$src" -libverbs -lrdmacm
  mv "$lib.tmp" "$lib"
  echo "rdma-native: built $lib"
}
build libdisni.so jbof_disni.c
build libjbofrdma.so jbof_rdma.c
# A libdisni like DiSNI's own (no CM event record), for the test of jbof with a user's own libdisni.
build plain/libdisni.so jbof_disni.c -DJBOF_PLAIN_DISNI
