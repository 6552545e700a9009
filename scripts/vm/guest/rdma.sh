# Helpers for the RDMA scenarios: Soft-RoCE on eth0, and jbof run from the shared (read-only) tree.
JBOF_JAVA="/usr/lib/jvm/java-17-openjdk-amd64/bin/java --add-exports java.base/sun.nio.ch=ALL-UNNAMED -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.library.path=/jbof/rdma-native/build/native -cp /jbof/app/build/jbof.jar"
RDMA_ADDR=10.0.2.15
jbof() { $JBOF_JAVA io.jbof.app.JbofMain "$@"; }

rxe_setup() {
  modprobe rdma_rxe && modprobe ib_uverbs && modprobe rdma_ucm || { fail "modprobe rdma_rxe ib_uverbs rdma_ucm"; return 1; }
  rdma link add rxe0 type rxe netdev eth0 || { fail "rdma link add rxe0 type rxe netdev eth0"; return 1; }
  check "Soft-RoCE device rxe0 on eth0" sh -c "ibv_devices | tee /dev/stderr | grep -q rxe0"
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
