# Helpers for guest scenario scripts: every check appends one PASS/FAIL line to /results/results.txt.
R=/results/results.txt
pass() { echo "PASS $*" >> $R; echo "== PASS $*"; }
fail() { echo "FAIL $*" >> $R; echo "== FAIL $*"; }

# check NAME COMMAND...: runs the command, logs its output, records the verdict.
check() {
  local name="$1"; shift
  echo "== $name: $*"
  local out rc
  out="$("$@" 2>&1)"; rc=$?
  echo "$out"
  if [ $rc -eq 0 ]; then pass "$name"; else fail "$name (exit $rc: $(echo "$out" | tail -2 | tr '\n' ' '))"; fi
  return $rc
}

# wait_for SECONDS TEST...: polls a condition once a second, bounded.
wait_for() {
  local n="$1"; shift
  for _ in $(seq "$n"); do "$@" && return 0; sleep 1; done
  return 1
}

# step NAME: tell the host this side is ready for NAME, then wait (bounded) until the host says it is done.
step() {
  touch "/results/guest-$1"
  wait_for 300 test -f "/results/host-$1" || { fail "host finished step $1 (see host.log)"; return 1; }
}

# The kernel host's view of a connected jbof target, scenario-independent.
# TRANSPORT (tcp or rdma) picks the kernel host driver.
linux_host_checks() {
  local flags="$1" t="${TRANSPORT:-tcp}"
  modprobe "nvme-$t"
  check "nvme discover -t $t lists $NQN" sh -c "nvme discover -t $t -a $TARGET_ADDR -s $TARGET_PORT $flags | tee /dev/stderr | grep -q 'subnqn: *$NQN'"
  check "nvme connect -t $t $flags" nvme connect -t "$t" -a "$TARGET_ADDR" -s "$TARGET_PORT" -n "$NQN" $flags || return 1
  if ! wait_for 30 test -b /dev/nvme0n2; then fail "namespaces appear as /dev/nvme0n1 and /dev/nvme0n2"; return 1; fi
  pass "namespaces appear as /dev/nvme0n1 and /dev/nvme0n2"
  check "nvme list shows the jbof model" sh -c "nvme list | tee /dev/stderr | grep -q 'jbof'"
  check "nvme id-ctrl: mn, subnqn, sgls" sh -c "nvme id-ctrl /dev/nvme0 | tee /dev/stderr | grep -Eq '^mn +: jbof' && nvme id-ctrl /dev/nvme0 | grep -Eq '^subnqn +: $NQN'"
  check "nvme id-ns: nsze of ns1 is $NS1_BLOCKS blocks" sh -c "nvme id-ns /dev/nvme0n1 | tee /dev/stderr | grep -Eiq '^nsze +: $(printf 0x%x "$NS1_BLOCKS")\$'"
  check "ns1 has 4096-byte and ns2 512-byte logical blocks" sh -c "[ \$(blockdev --getss /dev/nvme0n1) = 4096 ] && [ \$(blockdev --getss /dev/nvme0n2) = 512 ]"
  check "fio randwrite 4k QD16 verify=crc32c on ns1" fio --name=rw4k --filename=/dev/nvme0n1 --rw=randwrite --bs=4k --iodepth=16 \
        --ioengine=libaio --direct=1 --size=48M --verify=crc32c --do_verify=1 --verify_fatal=1 --output-format=terse --minimal
  check "fio randwrite 512..128k verify=crc32c on ns2" fio --name=rwmix --filename=/dev/nvme0n2 --rw=randwrite --bsrange=512-128k \
        --iodepth=8 --ioengine=libaio --direct=1 --size=24M --verify=crc32c --do_verify=1 --verify_fatal=1 --minimal
  check "fio seq write 1M (MDTS splits) verify=crc32c on ns1" fio --name=seq1m --filename=/dev/nvme0n1 --rw=write --bs=1M --iodepth=4 \
        --ioengine=libaio --direct=1 --size=32M --offset=64M --verify=crc32c --do_verify=1 --verify_fatal=1 --minimal
  check "nvme flush" nvme flush /dev/nvme0n1
  check "nvme write-zeroes then reads as zeroes" sh -c "dd if=/dev/urandom of=/dev/nvme0n1 bs=4096 count=8 seek=100 oflag=direct status=none && \
        nvme write-zeroes /dev/nvme0n1 --start-block=100 --block-count=7 && \
        dd if=/dev/nvme0n1 bs=4096 count=8 skip=100 iflag=direct status=none | cmp -n 32768 - /dev/zero"
  check "blkdiscard (Dataset Management) then reads as zeroes" sh -c "dd if=/dev/urandom of=/dev/nvme0n1 bs=1M count=1 seek=10 oflag=direct status=none && \
        blkdiscard -o $((10 << 20)) -l $((1 << 20)) /dev/nvme0n1 && dd if=/dev/nvme0n1 bs=1M count=1 skip=10 iflag=direct status=none | cmp -n 1048576 - /dev/zero"
  dd if=/dev/urandom of=/tmp/pattern bs=1M count=4 status=none
  check "dd write, then read back through the page cache after drop_caches" sh -c "dd if=/tmp/pattern of=/dev/nvme0n1 bs=1M seek=200 conv=fsync status=none && \
        echo 3 > /proc/sys/vm/drop_caches && dd if=/dev/nvme0n1 bs=1M skip=200 count=4 status=none | cmp - /tmp/pattern"
  check "nvme disconnect" sh -c "nvme disconnect -n $NQN | tee /dev/stderr | grep -q 'disconnected 1 controller'"
  check "no nvme errors in dmesg" sh -c "! dmesg | grep -iE 'nvme.*(error|fail|timeout|reset)|nvmet.*(error|fail)'"
}
