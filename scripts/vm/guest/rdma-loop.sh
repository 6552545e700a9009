# jbof initiator -> jbof target over RDMA inside the guest: Soft-RoCE rxe0, or Soft-iWARP siw0 with RDMA_LINK=siw.
. /jbof/scripts/vm/guest/lib.sh
. /jbof/scripts/vm/guest/rdma.sh
rdma_link_setup || exit 1
NQN=nqn.2024-01.io.jbof:rdma-loop
HOSTNQN=nqn.2024-01.io.jbof:rdma-host
# A test-only secret (bytes 0..31, hash 01): the second host must authenticate with DH-HMAC-CHAP over RDMA.
AUTHHOST=nqn.2024-01.io.jbof:rdma-auth-host
SECRET='DHHC-1:01:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:'
# --max-inflight-bytes: an initiator killed mid-I/O below must give back what its RDMA READs held, or the
# verify after it waits for ever.
TARGET_ARGS=(--listen $RDMA_ADDR:4420 --nqn $NQN --allow-host $HOSTNQN --dhchap-secret "$AUTHHOST=$SECRET"
    --namespace /tmp/ns1.img:128M --namespace /tmp/ns2.img:32M,bs=512 --max-inflight-bytes 2M)
if start_jbof_target target "${TARGET_ARGS[@]}"; then
  pass "jbof target listening over RDMA on $RDMA_ADDR:4420"
else
  fail "jbof target starts over RDMA (see above)"; exit 1
fi
C="-t rdma -a $RDMA_ADDR -s 4420 -n $NQN --hostnqn $HOSTNQN"
check "jbof id-ctrl over RDMA: mn jbof, keyed SGLs" sh -c "jbof() { $JBOF_JAVA io.jbof.app.JbofMain \"\$@\"; }; jbof id-ctrl $C | tee /dev/stderr | grep -Eq '^mn +: jbof'"
check "jbof list over RDMA shows 2 namespaces" sh -c "$JBOF_JAVA io.jbof.app.JbofMain list $C | tee /dev/stderr | grep -c '^ns[12] ' | grep -qx 2"
t0=$(date +%s)
check "jbof verify over RDMA (random sizes to 1 MiB, 2 queues, ns1 64 MiB, every byte compared)" \
  $JBOF_JAVA io.jbof.app.JbofMain verify $C -i 2 -N 1 --size 64M --destroy-data
echo "verify ns1 took $(( $(date +%s) - t0 )) s"
check "jbof verify over RDMA (4 queues, depth 32, ns2 512-byte blocks)" \
  $JBOF_JAVA io.jbof.app.JbofMain verify $C -i 4 -N 2 --size 16M --iodepth 32 --rounds 2 --destroy-data
A="-t rdma -a $RDMA_ADDR -s 4420 -n $NQN --hostnqn $AUTHHOST"
check "DH-HMAC-CHAP over RDMA: the host with its secret authenticates every queue and verifies its data" \
  $JBOF_JAVA io.jbof.app.JbofMain verify $A -S "$SECRET" -i 2 -N 2 --size 8M --destroy-data
check "DH-HMAC-CHAP over RDMA: without its secret the host is told to give one" sh -c "$JBOF_JAVA io.jbof.app.JbofMain id-ctrl $A 2>&1 | grep -q 'dhchap-secret'"
head -c 300001 /dev/urandom > /tmp/pattern
check "jbof write/read at an unaligned offset over RDMA" sh -c "$JBOF_JAVA io.jbof.app.JbofMain write $C --offset 12345 --input /tmp/pattern && \
  $JBOF_JAVA io.jbof.app.JbofMain read $C --offset 12345 --length 300001 --output /tmp/back && cmp /tmp/pattern /tmp/back"
check "the target refuses a host it does not allow (Connect status 0x184)" sh -c "! $JBOF_JAVA io.jbof.app.JbofMain id-ctrl -t rdma -a $RDMA_ADDR -s 4420 -n $NQN --hostnqn nqn.2024-01.io.jbof:stranger 2>&1 | tee /dev/stderr | grep -q '^mn' && \
  grep -q 'stranger' /tmp/target.log"
# The FUSE mount over RDMA: each namespace a file; bytes written through it read back through the library.
mkdir -p /mnt/jbof
modprobe fuse
$JBOF_JAVA io.jbof.app.JbofMain mount $C /mnt/jbof > /tmp/mount.log 2>&1 &
mount_pid=$!
if wait_for 60 grep -q 'jbof mount: mounted' /tmp/mount.log; then
  head -c 1048576 /dev/urandom > /tmp/fuse-pattern
  check "FUSE mount over RDMA: dd into ns1 at an unaligned offset (fsync), read back through the mount" sh -c \
    "dd if=/tmp/fuse-pattern of=/mnt/jbof/ns1 bs=64k seek=4097 oflag=seek_bytes conv=notrunc,fsync status=none && \
     dd if=/mnt/jbof/ns1 bs=64k skip=4097 iflag=skip_bytes count=16 status=none | cmp - /tmp/fuse-pattern"
  check "FUSE mount over RDMA: the same bytes through the initiator library" sh -c \
    "$JBOF_JAVA io.jbof.app.JbofMain read $C --offset 4097 --length 1048576 --output /tmp/fuse-back && cmp /tmp/fuse-back /tmp/fuse-pattern"
  check "jbof umount ends the RDMA mount" $JBOF_JAVA io.jbof.app.JbofMain umount /mnt/jbof
  if wait $mount_pid; then pass "the RDMA mount process flushed, shut down and exited 0"; else fail "the RDMA mount process exit code"; fi
else
  fail "jbof mount -t rdma mounts (see its log)"
fi
cat /tmp/mount.log

# Queue pairs torn down mid-I/O: kill -9 one initiator in the middle of its run while another verifies
# its data on the same target; only the dead one's commands end, and the target serves a new one after.
$JBOF_JAVA io.jbof.app.JbofMain verify $C -i 2 -N 2 --size 16M --iodepth 16 --rounds 3 --destroy-data > /tmp/survivor.log 2>&1 &
survivor=$!
$JBOF_JAVA io.jbof.app.JbofMain bench $C --rw randrw --bs 128k --iodepth 16 --numjobs 2 --runtime 60 -N 1 > /tmp/killed-bench.log 2>&1 &
victim=$!
# Its queues are up and its I/O has begun when it says it is starting its jobs.
wait_for 60 grep -q 'starting 2 job' /tmp/killed-bench.log || echo "the victim did not start its jobs"
rdma res show qp; rdma res show cm_id
if kill -9 $victim; then pass "the victim initiator was mid-run when killed"; else fail "the victim initiator ended before it was killed (see its log below)"; fi
wait $victim 2>/dev/null
echo "---- victim log"; cat /tmp/killed-bench.log
if wait $survivor; then pass "an initiator verifying on the same target while another was killed mid-I/O (kill -9): all its bytes match"; else fail "the surviving initiator's verify (see survivor.log)"; fi
cat /tmp/survivor.log
check "after an initiator died mid-I/O (kill -9; 4 MiB of 128 KiB commands against a 2 MiB in-flight bound), the target serves a new one: verify passes" \
  $JBOF_JAVA io.jbof.app.JbofMain verify $C -i 2 -N 1 --size 16M --destroy-data
# Figures under software emulation (qemu tcg, Soft-RoCE): correctness, not speed.
bench() {
  local name="$1"; shift
  $JBOF_JAVA io.jbof.app.JbofMain bench $C "$@" > /tmp/bench.out 2>&1
  local rc=$?
  cat /tmp/bench.out; grep -E 'IOPS=|lat \(' /tmp/bench.out >> /results/figures.txt
  if [ $rc -eq 0 ] && grep -q 'IOPS=' /tmp/bench.out; then pass "$name"; else fail "$name (exit $rc)"; fi
}
bench "jbof bench over RDMA: 4k randread QD16" --rw randread --bs 4k --iodepth 16 --runtime 10 -N 1
bench "jbof bench over RDMA: 128k sequential read QD8" --rw read --bs 128k --iodepth 8 --runtime 10 -N 1
bench "jbof bench over RDMA: 4k randwrite QD16, verify crc32c" --rw randwrite --bs 4k --iodepth 16 --runtime 10 -N 1 --verify crc32c
# Reconnect over RDMA: the target is killed (kill -9) and started again on the same address while an
# initiator runs with --ctrl-loss-tmo; its I/O is held, resent after the reconnect, and the run ends clean.
$JBOF_JAVA io.jbof.app.JbofMain bench $C --rw randrw --bs 4k --iodepth 8 --runtime 40 -N 1 --verify crc32c \
    --ctrl-loss-tmo 60 --reconnect-delay 1 --timeout 10000 > /tmp/reconnect-bench.log 2>&1 &
rb=$!
wait_for 60 grep -q 'starting 1 job' /tmp/reconnect-bench.log || echo "the reconnecting initiator did not start its job"
kill -9 $JBOF_TARGET_PID; wait $JBOF_TARGET_PID 2>/dev/null
if start_jbof_target target-restarted "${TARGET_ARGS[@]}"; then pass "jbof target restarted over RDMA after kill -9"; else fail "jbof target restarts over RDMA"; fi
if wait $rb; then pass "an initiator with --ctrl-loss-tmo rode out the target's kill -9 and restart over RDMA (bench exit 0, verify clean)"; else fail "the reconnecting initiator (see its log)"; fi
cat /tmp/reconnect-bench.log
check "the initiator reconnected over RDMA and resent its held I/O" grep -q 'reconnected to rdma://' /tmp/reconnect-bench.log

# A user's own libdisni (DiSNI's library keeps no CM private data): the target sizes queues at its
# maximum instead of the host's request, and hosts still connect; the initiator runs on it as well.
PLAIN="$(echo "$JBOF_JAVA" | sed 's#-Djava.library.path=[^ ]*#-Djava.library.path=/jbof/rdma-native/build/native/plain:/jbof/rdma-native/build/native#')"
$PLAIN io.jbof.target.cli.TargetMain -t rdma --listen $RDMA_ADDR:4421 --nqn $NQN --allow-host $HOSTNQN --namespace /tmp/ns3.img:32M > /tmp/plain-target.log 2>&1 &
plain_pid=$!
if wait_for 120 grep -q 'listening on rdma://' /tmp/plain-target.log; then
  P="-t rdma -a $RDMA_ADDR -s 4421 -n $NQN --hostnqn $HOSTNQN"
  check "with a libdisni that keeps no CM private data (like DiSNI's own), target and initiator still work: verify" \
    $PLAIN io.jbof.app.JbofMain verify $P -i 2 -N 1 --size 16M --destroy-data
else
  fail "a target on a libdisni without jbof's CM event record starts"
fi
kill -TERM $plain_pid; wait $plain_pid
cat /tmp/plain-target.log
kill -TERM $JBOF_TARGET_PID
if wait $JBOF_TARGET_PID; then pass "jbof target exits 0 on SIGTERM"; else fail "jbof target exit code on SIGTERM"; fi
echo "---- target log"; cat /tmp/target.log
