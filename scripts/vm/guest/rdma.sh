# Helpers for the RDMA scenarios: Soft-RoCE or Soft-iWARP on eth0, and jbof run from the shared (read-only) tree.
JBOF_JAVA="/usr/lib/jvm/java-17-openjdk-amd64/bin/java --add-exports java.base/sun.nio.ch=ALL-UNNAMED -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.library.path=/jbof/rdma-native/build/native -cp /jbof/app/build/jbof.jar ${JBOF_GUEST_JAVA_OPTS:-}"
RDMA_ADDR=10.0.2.15
jbof() { $JBOF_JAVA io.jbof.app.JbofMain "$@"; }

# rdma_link_setup: an RDMA device on RDMA_NETDEV (eth0), by RDMA_LINK: rxe (Soft-RoCE, the default) or siw
# (Soft-iWARP, a module the harness built for this kernel: scripts/vm/prepare.sh with JBOF_VM_SIW=1), named RDMA_DEV.
RDMA_LINK="${RDMA_LINK:-rxe}"
RDMA_DEV="${RDMA_LINK}0"
RDMA_NETDEV="${RDMA_NETDEV:-eth0}"
rdma_link_setup() {
  local mod=rdma_rxe transport="InfiniBand"
  [ "$RDMA_LINK" = siw ] && { mod=siw; transport="iWARP"; }
  # Registered memory is locked memory; siw holds even root to RLIMIT_MEMLOCK (8 MiB by default), rxe does not.
  ulimit -l unlimited
  modprobe $mod && modprobe ib_uverbs && modprobe rdma_ucm || { fail "modprobe $mod ib_uverbs rdma_ucm"; return 1; }
  rdma link add $RDMA_DEV type $RDMA_LINK netdev $RDMA_NETDEV || { fail "rdma link add $RDMA_DEV type $RDMA_LINK netdev $RDMA_NETDEV"; return 1; }
  check "$RDMA_LINK device $RDMA_DEV on $RDMA_NETDEV, transport $transport" sh -c "ibv_devinfo -d $RDMA_DEV | tee /dev/stderr | grep -q 'transport:.*$transport'"
}

# start_jbof_target NAME ARGS...: a jbof target over RDMA in the background; waits for its listening line.
start_jbof_target() {
  local log="/tmp/$1.log"; shift
  $JBOF_JAVA io.jbof.target.cli.TargetMain -t rdma "$@" > "$log" 2>&1 &
  JBOF_TARGET_PID=$!
  if wait_for 120 grep -q 'listening on rdma://' "$log"; then
    cat "$log"; return 0
  fi
  cat "$log"; return 1
}
