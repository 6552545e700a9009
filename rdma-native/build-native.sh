#!/usr/bin/env bash
# Builds jbof's libdisni.so (DiSNI 2.1's JNI methods plus jbof's RdmaNative) into $1 (default build/native).
# Needs gcc and Debian's libibverbs-dev and librdmacm-dev; without them it says so and builds nothing,
# and the RDMA transport then reports that the library is missing when asked for.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$here/build/native}"
src="$here/src/main/c/jbof_disni.c"
missing=()
command -v gcc >/dev/null || missing+=(gcc)
[ -f /usr/include/infiniband/verbs.h ] || missing+=(libibverbs-dev)
[ -f /usr/include/rdma/rdma_cma.h ] || missing+=(librdmacm-dev)
if [ ${#missing[@]} -gt 0 ]; then
    echo "rdma-native: NOT building libdisni.so (RDMA transport unavailable): install ${missing[*]} (apt-get install -y ${missing[*]})"
    exit 0
fi
java_home="${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v javac || command -v java)")")")}"
if [ ! -f "$java_home/include/jni.h" ]; then
    echo "rdma-native: NOT building libdisni.so: no jni.h under $java_home/include (set JAVA_HOME to a JDK)"
    exit 0
fi
mkdir -p "$out"
if [ "$out/libdisni.so" -nt "$src" ] && [ "$out/libdisni.so" -nt "$0" ]; then
    exit 0
fi
gcc -O2 -g -fPIC -shared -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Werror \
    -I"$java_home/include" -I"$java_home/include/linux" \
    -o "$out/libdisni.so.tmp" "$src" -libverbs -lrdmacm
mv "$out/libdisni.so.tmp" "$out/libdisni.so"
echo "rdma-native: built $out/libdisni.so"
