# multipath: Linux's native NVMe multipath over three paths to one jbof subsystem: target A's two listeners
# and target B's one (the same namespace file; controller IDs from separate ranges). fio verify runs all along
# while the host makes A's listeners ANA inaccessible and optimized again, one at a time, then restarts B
# with --drain-timeout. Each step is a file in /results that the other side waits for.
. /jbof/scripts/vm/guest/lib.sh
modprobe nvme-tcp
check "native NVMe multipath is on in the kernel" grep -qx Y /sys/module/nvme_core/parameters/multipath
for p in "$PORT_A1" "$PORT_A2" "$PORT_B"; do
  check "nvme connect to $TARGET_ADDR:$p" nvme connect -t tcp -a "$TARGET_ADDR" -s "$p" -n "$NQN" --reconnect-delay=1 --ctrl-loss-tmo=120 || exit 0
done
wait_for 30 test -b /dev/nvme0n1 || { fail "/dev/nvme0n1 appears"; exit 0; }
SUBSYS=/sys/class/nvme-subsystem/nvme-subsys0
# The subsystem's controllers (nvme0, nvme1, ...; its folder also holds the shared disk nvme0n1).
ctrls() { ls -d "$SUBSYS"/nvme* | grep -E '/nvme[0-9]+$'; }
check "one /dev/nvme0n1 over three controllers, no second disk" sh -c "$(declare -f ctrls); SUBSYS=$SUBSYS; ctrls | tee /dev/stderr | wc -l | grep -qx 3 && ! test -e /dev/nvme1n1"
# path PORT: the path device (nvme0cXn1) of the controller connected to PORT
path() {
  for c in $(ctrls); do
    grep -q "trsvcid=$1\(,\|\$\)" "$c/address" && echo "nvme0c${c##*/nvme}n1"
  done
}
state_is() { [ "$(cat /sys/block/$(path "$1")/ana_state 2>/dev/null)" = "$2" ]; }
live() { for c in $(ctrls); do grep -q "trsvcid=$1\(,\|\$\)" "$c/address" && [ "$(cat "$c/state")" = live ] && return 0; done; return 1; }
for p in "$PORT_A1" "$PORT_A2" "$PORT_B"; do
  check "the kernel reads ANA: the path on port $p ($(path "$p")) is optimized" state_is "$p" optimized
done
# Round robin over the optimized paths: every path carries I/O, so a path coming back is used again.
echo round-robin > "$SUBSYS/iopolicy"
fio --name=multipath --filename=/dev/nvme0n1 --rw=randwrite --bs=4k --iodepth=16 --ioengine=libaio --direct=1 --size=64M \
    --time_based --runtime="${FIO_SECONDS:-150}" --verify=crc32c --verify_backlog=512 --verify_fatal=1 \
    --output-format=json --output=/results/fio.json > /results/fio.log 2>&1 &
fio_pid=$!
expect_state() {
  if wait_for 30 state_is "$1" "$2"; then pass "$3: the kernel sees the path on port $1 $2"; else fail "$3: the path on port $1 reads $2 (it reads $(cat /sys/block/$(path "$1")/ana_state))"; fi
}
step a1-off && expect_state "$PORT_A1" inaccessible "A's first listener set inaccessible"
step a1-on && expect_state "$PORT_A1" optimized "A's first listener set optimized again"
step a2-off && expect_state "$PORT_A2" inaccessible "A's second listener set inaccessible"
step a2-on && expect_state "$PORT_A2" optimized "A's second listener set optimized again"
step b-restart
if wait_for 60 sh -c "$(declare -f ctrls path state_is live); SUBSYS=$SUBSYS; live $PORT_B && state_is $PORT_B optimized"; then
  pass "target B restarted with drain: its path is live and optimized again"
else
  fail "target B's path came back after its restart"
fi
step b-back
check "fio was still running after every step" kill -0 "$fio_pid"
wait "$fio_pid"; rc=$?
cat /results/fio.log
if [ $rc -eq 0 ] && grep -q '"error" : 0' /results/fio.json; then pass "fio randwrite verify=crc32c over the path changes: 0 errors"; else fail "fio over the path changes (exit $rc, see fio.json)"; fi
check "no I/O errors in dmesg" sh -c "! dmesg | grep -iE 'I/O error|critical (medium|target) error|Buffer I/O'"
check "nvme disconnect the three controllers" sh -c "nvme disconnect -n $NQN | tee /dev/stderr | grep -q 'disconnected 3 controller'"
