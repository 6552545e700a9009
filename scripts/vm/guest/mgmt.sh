# mgmt: the kernel host stays connected to the jbof target on the host while the host changes the target
# through its management API (scripts/jbof-ctl); each step is a file in /results that the other side waits for.
. /jbof/scripts/vm/guest/lib.sh
modprobe nvme-tcp
check "nvme connect -t tcp" nvme connect -t tcp -a "$TARGET_ADDR" -s "$TARGET_PORT" -n "$NQN" || exit 0
wait_for 30 test -b /dev/nvme0n2 || fail "namespaces appear as /dev/nvme0n1 and /dev/nvme0n2"
step add
if wait_for 30 test -b /dev/nvme0n3; then pass "namespace 3 added live appears as /dev/nvme0n3 without a reconnect"; else fail "namespace 3 added live appears as /dev/nvme0n3"; fi
check "dd to the new namespace and read it back" sh -c "dd if=/dev/urandom of=/tmp/p bs=1M count=2 status=none && dd if=/tmp/p of=/dev/nvme0n3 bs=1M oflag=direct status=none && \
      dd if=/dev/nvme0n3 bs=1M count=2 iflag=direct status=none | cmp - /tmp/p"
step resize
if wait_for 30 sh -c "[ \$(blockdev --getsize64 /dev/nvme0n1) = $((512 << 20)) ]"; then pass "ns1 grown to 512 MiB is seen by the kernel (blockdev --getsize64)"; else fail "ns1 grown to 512 MiB is seen by the kernel ($(blockdev --getsize64 /dev/nvme0n1))"; fi
check "the kernel logged the capacity change" sh -c "dmesg | grep -i 'nvme0n1: detected capacity change'"
check "fio verify past the old end of ns1" fio --name=grown --filename=/dev/nvme0n1 --rw=randwrite --bs=4k --iodepth=8 --ioengine=libaio --direct=1 \
      --offset=$((256 << 20)) --size=64M --verify=crc32c --do_verify=1 --verify_fatal=1 --minimal
step remove
if wait_for 30 sh -c "! test -b /dev/nvme0n2"; then pass "namespace 2 removed live: /dev/nvme0n2 goes"; else fail "namespace 2 removed live: /dev/nvme0n2 goes"; fi
check "ns1 and ns3 still serve I/O" sh -c "dd if=/dev/nvme0n1 of=/dev/null bs=1M count=4 iflag=direct status=none && dd if=/dev/nvme0n3 of=/dev/null bs=1M count=2 iflag=direct status=none"
step subsystem-added
check "nvme discover lists the subsystem added live" sh -c "nvme discover -t tcp -a $TARGET_ADDR -s $TARGET_PORT | tee /dev/stderr | grep -q 'subnqn: *$NQN2'"
step subsystem-removed
check "nvme discover no longer lists the deleted subsystem" sh -c "nvme discover -t tcp -a $TARGET_ADDR -s $TARGET_PORT | tee /dev/stderr | grep -q 'subnqn: *$NQN' && \
      ! nvme discover -t tcp -a $TARGET_ADDR -s $TARGET_PORT | grep -q 'subnqn: *$NQN2'"
check "nvme disconnect" sh -c "nvme disconnect -n $NQN | tee /dev/stderr | grep -q 'disconnected 1 controller'"
check "no nvme errors in dmesg" sh -c "! dmesg | grep -iE 'nvme.*(error|fail|timeout|reset)'"
