# power-loss: the jbof target runs in the guest on ext4 on a virtio disk (power-loss-direct: the virtio disk
# itself is the namespace, by O_DIRECT). The host's `jbof durability`
# writes to it through a hostfwd while the host cuts the guest's power (kill -9 of qemu: the guest's page
# cache is lost, as on a real power cut), then boots the guest again and checks what survived.
# One boot per run of this script; /results/boot says which, /results/stop ends the last one cleanly.
. /jbof/scripts/vm/guest/lib.sh
boot="$(cat /results/boot)"
modprobe virtio_blk 2>/dev/null; modprobe ext4 2>/dev/null
wait_for 30 test -b /dev/vda || { fail "boot $boot: the virtio disk appears as /dev/vda"; exit 1; }
if [ -n "${POWER_LOSS_DIRECT:-}" ]; then
  # The virtio disk itself is the namespace, by O_DIRECT: no file system and no page cache in between.
  ns="/dev/vda,direct"
else
  if [ "$boot" = 0 ]; then
    check "boot 0: mkfs.ext4 on the virtio disk" mkfs.ext4 -q -F /dev/vda || exit 1
  fi
  mkdir -p /vol
  # After a power cut ext4 replays its journal here.
  check "boot $boot: mount the ext4 volume" mount -t ext4 /dev/vda /vol || exit 1
  ns="/vol/ns1.img:16M"
fi
/usr/lib/jvm/java-17-openjdk-amd64/bin/java -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp /jbof/app/build/jbof.jar \
  io.jbof.target.cli.TargetMain --listen 10.0.2.15:4420 --nqn "$NQN" --namespace "$ns" --allow-any-host \
  > "/results/target-$boot.log" 2>&1 &
tpid=$!
if wait_for 300 grep -q 'listening on' "/results/target-$boot.log"; then touch "/results/ready-$boot"; else fail "boot $boot: jbof target starts"; exit 1; fi
# Until the host cuts the power, or says stop on the last boot.
wait_for "${HOST_TIMEOUT:-900}" test -f /results/stop || { fail "boot $boot: host did not finish in time"; exit 1; }
kill -TERM "$tpid"; wait "$tpid"; rc=$?
[ $rc = 0 ] && pass "boot $boot: jbof target stops on SIGTERM with exit 0" || fail "boot $boot: jbof target exit $rc on SIGTERM"
[ -n "${POWER_LOSS_DIRECT:-}" ] || umount /vol
