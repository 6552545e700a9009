# csi-node: scripts/jbof-csi in the guest (controller and node, --attach kernel) against the jbof target on the
# host (two listeners: two portals), driven by `jbof-csi call` as Kubernetes drives a driver: create, publish,
# stage through the kernel's nvme-tcp (one multipath head over both paths, found by namespace UUID), publish,
# write, grow online, raw block with DH-HMAC-CHAP, a second volume beside the first, unstage leaving no device, delete.
. /jbof/scripts/vm/guest/lib.sh
JAVA="/usr/lib/jvm/java-17-openjdk-amd64/bin/java -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp /jbof/csi/build/jbof-csi.jar io.jbof.csi.CsiMain"
NODE=nqn.2014-08.org.nvmexpress:uuid:6a626f66-0000-4000-8000-0000000000c5
SOCK=/tmp/csi.sock
MIB=1048576
modprobe nvme-tcp
$JAVA --endpoint unix://$SOCK --node-id $NODE --attach kernel --state-dir /tmp/csi-state \
  --storage-host "s1=http://10.0.2.2:$RPC_PORT,token=@/results/token,portal=10.0.2.2:$PORT1,portal=10.0.2.2:$PORT2,dir=$VOL_DIR" \
  > /tmp/driver.log 2>&1 &
driver=$!
if wait_for 180 grep -q 'serving Identity, Controller, Node' /tmp/driver.log; then
  pass "jbof-csi --attach kernel serves Identity, Controller, Node"
else
  cat /tmp/driver.log; fail "jbof-csi --attach kernel serves (see guest.log)"; exit 1
fi
call() { $JAVA call --endpoint unix://$SOCK "$@"; }
field() { sed -n "s/.*\"$1\": \"\([^\"]*\)\".*/\1/p" | head -1; }
MOUNT='{"mount":{"fsType":"ext4"},"accessMode":{"mode":"SINGLE_NODE_WRITER"}}'
BLOCK='{"block":{},"accessMode":{"mode":"SINGLE_NODE_WRITER"}}'
check "GetPluginCapabilities: ONLINE expansion with the kernel's nvme-tcp" sh -c "$JAVA call --endpoint unix://$SOCK Identity GetPluginCapabilities | grep -q '\"type\": \"ONLINE\"'"

# provision NAME CAPABILITY [SECRETS]: CreateVolume (64 MiB) and ControllerPublishVolume (with SECRETS, a JSON
# "secrets" member and comma, passed as @FILE so no secret is on a command line); sets ID, NQN_V, PORTALS, UUID.
provision() {
  local out
  out="$(call Controller CreateVolume "{\"name\":\"$1\",\"capacityRange\":{\"requiredBytes\":\"$((64 * MIB))\"},\"volumeCapabilities\":[$2]}")" || return 1
  ID="$(echo "$out" | field volumeId)"
  echo "{${3:-}\"volumeId\":\"$ID\",\"nodeId\":\"$NODE\",\"volumeCapability\":$2}" > /tmp/publish.json
  out="$(call Controller ControllerPublishVolume @/tmp/publish.json)" || return 1
  echo "$out"
  NQN_V="$(echo "$out" | field nqn)"; PORTALS="$(echo "$out" | field portals)"; UUID="$(echo "$out" | field uuid)"
  [ -n "$ID" ] && [ -n "$NQN_V" ] && [ -n "$UUID" ]
}
# paths NQN: the namespace path devices (nvmeXcYnZ, hidden behind a multipath head) of the subsystem's controllers.
paths() { for c in /sys/class/nvme/nvme*; do [ "$(cat $c/subsysnqn 2>/dev/null)" = "$1" ] && ls -d $c/nvme*c*n* 2>/dev/null; done | wc -l; }
device() { for d in /sys/block/nvme*n*; do case "${d##*/}" in *c*) continue ;; esac; [ "$(cat $d/uuid 2>/dev/null)" = "$1" ] && echo "${d##*/}"; done; }

# provision sets variables, so it runs here rather than in check's subshell.
if provision pvc-k1 "$MOUNT"; then pass "CreateVolume and ControllerPublishVolume (pvc-k1, ext4)"; else fail "CreateVolume and ControllerPublishVolume (pvc-k1)"; exit 1; fi
ID1=$ID NQN1=$NQN_V UUID1=$UUID P1=$PORTALS
check "the publish context names both portals" sh -c "echo '$P1' | grep -q ',' "
STAGE1="{\"volumeId\":\"$ID1\",\"publishContext\":{\"nqn\":\"$NQN1\",\"portals\":\"$P1\",\"uuid\":\"$UUID1\"},\"stagingTargetPath\":\"/tmp/staging1\",\"volumeCapability\":$MOUNT}"
check "NodeStageVolume: nvme-tcp to both portals, ext4 made and mounted" call Node NodeStageVolume "$STAGE1"
check "two controllers (one per portal) for the volume's subsystem" sh -c "[ \$(for c in /sys/class/nvme/nvme*; do cat \$c/subsysnqn; done | grep -cx '$NQN1') = 2 ]"
DEV1="$(device "$UUID1")"
check "one block device carries the namespace UUID: the multipath head /dev/$DEV1 over 2 paths" sh -c "[ -n '$DEV1' ] && [ \$(echo '$DEV1' | wc -w) = 1 ] && [ $(paths "$NQN1") = 2 ]"
check "the staging path holds ext4 on /dev/$DEV1" sh -c "grep -q '^/dev/$DEV1 /tmp/staging1 ext4 ' /proc/mounts"
check "NodeStageVolume again (a retry) changes nothing" sh -c "$JAVA call --endpoint unix://$SOCK Node NodeStageVolume '{\"volumeId\":\"$ID1\",\"publishContext\":{\"nqn\":\"$NQN1\",\"portals\":\"$P1\",\"uuid\":\"$UUID1\"},\"stagingTargetPath\":\"/tmp/staging1\",\"volumeCapability\":$MOUNT}' >/dev/null && [ \$(grep -c ' /tmp/staging1 ' /proc/mounts) = 1 ] && [ \$(for c in /sys/class/nvme/nvme*; do cat \$c/subsysnqn; done | grep -cx '$NQN1') = 2 ]"
check "NodePublishVolume (bind mount), write, read back" sh -c "$JAVA call --endpoint unix://$SOCK Node NodePublishVolume '{\"volumeId\":\"$ID1\",\"stagingTargetPath\":\"/tmp/staging1\",\"targetPath\":\"/tmp/pod1\",\"volumeCapability\":$MOUNT}' && \
  head -c 1048576 /dev/urandom > /tmp/data && cp /tmp/data /tmp/pod1/data && sync && echo 3 > /proc/sys/vm/drop_caches && cmp /tmp/data /tmp/pod1/data"
before=$(df -B1 --output=size /tmp/pod1 | tail -1)
check "ControllerExpandVolume to 128 MiB while published" sh -c "$JAVA call --endpoint unix://$SOCK Controller ControllerExpandVolume '{\"volumeId\":\"$ID1\",\"capacityRange\":{\"requiredBytes\":\"$((128 * MIB))\"}}' | grep -q '\"nodeExpansionRequired\": true'"
check "NodeExpandVolume online: the device is 128 MiB" sh -c "$JAVA call --endpoint unix://$SOCK Node NodeExpandVolume '{\"volumeId\":\"$ID1\",\"volumePath\":\"/tmp/pod1\",\"stagingTargetPath\":\"/tmp/staging1\",\"capacityRange\":{\"requiredBytes\":\"$((128 * MIB))\"}}' | grep -q '\"capacityBytes\": \"$((128 * MIB))\"' && [ \$(blockdev --getsize64 /dev/$DEV1) = $((128 * MIB)) ]"
after=$(df -B1 --output=size /tmp/pod1 | tail -1)
check "the mounted ext4 grew online ($before -> $after bytes) and kept its data" sh -c "[ $after -gt \$(( $before + 32 * $MIB )) ] && cmp /tmp/data /tmp/pod1/data"

SECRETS="\"secrets\":{\"dhchap-secret\":\"$(cat /results/dhchap.key)\"},"
if provision pvc-k2 "$BLOCK" "$SECRETS"; then pass "CreateVolume and ControllerPublishVolume with a DH-HMAC-CHAP secret (pvc-k2, raw block)"; else fail "CreateVolume and ControllerPublishVolume (pvc-k2)"; exit 1; fi
ID2=$ID NQN2=$NQN_V UUID2=$UUID P2=$PORTALS
STAGE2="\"volumeId\":\"$ID2\",\"publishContext\":{\"nqn\":\"$NQN2\",\"portals\":\"$P2\",\"uuid\":\"$UUID2\"},\"stagingTargetPath\":\"/tmp/staging2\",\"volumeCapability\":$BLOCK"
echo "{$STAGE2}" > /tmp/stage2-nosecret.json
echo "{$SECRETS$STAGE2}" > /tmp/stage2.json
# The refused connect below makes the kernel log failures on purpose: the log is checked up to here, then cleared.
check "no nvme errors in dmesg before the refused connect" sh -c "! dmesg | grep -iE 'nvme.*(error|fail|timeout|reset)'"
check "NodeStageVolume without the secret: the kernel's connect is refused (UNAVAILABLE), nothing is left connected" sh -c "$JAVA call --endpoint unix://$SOCK Node NodeStageVolume @/tmp/stage2-nosecret.json 2>&1 | tee /dev/stderr | grep -q '^jbof-csi call: UNAVAILABLE' && \
  [ -z \"\$(for c in /sys/class/nvme/nvme*; do cat \$c/subsysnqn 2>/dev/null; done | grep -x '$NQN2')\" ]"
dmesg | grep -i nvme | tail -5; dmesg -C
check "NodeStageVolume with the secret (DH-HMAC-CHAP on both paths) and NodePublishVolume of a raw block volume: a device file" sh -c "$JAVA call --endpoint unix://$SOCK Node NodeStageVolume @/tmp/stage2.json && \
  [ \$(for c in /sys/class/nvme/nvme*; do cat \$c/subsysnqn; done | grep -cx '$NQN2') = 2 ] && \
  $JAVA call --endpoint unix://$SOCK Node NodePublishVolume '{\"volumeId\":\"$ID2\",\"stagingTargetPath\":\"/tmp/staging2\",\"targetPath\":\"/tmp/pod2dev\",\"volumeCapability\":$BLOCK}' && \
  [ \$(blockdev --getsize64 /tmp/pod2dev) = $((64 * MIB)) ]"
check "raw block: bytes written at 1 MiB read back" sh -c "head -c 65536 /dev/urandom > /tmp/blk && dd if=/tmp/blk of=/tmp/pod2dev bs=64k seek=16 oflag=direct status=none && \
  dd if=/tmp/pod2dev bs=64k skip=16 count=1 iflag=direct status=none | cmp - /tmp/blk"
check "NodeUnpublish and NodeUnstage of the block volume" sh -c "$JAVA call --endpoint unix://$SOCK Node NodeUnpublishVolume '{\"volumeId\":\"$ID2\",\"targetPath\":\"/tmp/pod2dev\"}' && \
  $JAVA call --endpoint unix://$SOCK Node NodeUnstageVolume '{\"volumeId\":\"$ID2\",\"stagingTargetPath\":\"/tmp/staging2\"}'"
check "its controllers and device are gone; the other volume's two paths stay and serve" sh -c "[ -z \"\$(for c in /sys/class/nvme/nvme*; do cat \$c/subsysnqn 2>/dev/null; done | grep -x '$NQN2')\" ] && \
  [ -z '$(device "$UUID2")' ] && [ $(paths "$NQN1") = 2 ] && echo 3 > /proc/sys/vm/drop_caches && cmp /tmp/data /tmp/pod1/data"

check "NodeUnpublish and NodeUnstage of the ext4 volume" sh -c "$JAVA call --endpoint unix://$SOCK Node NodeUnpublishVolume '{\"volumeId\":\"$ID1\",\"targetPath\":\"/tmp/pod1\"}' && \
  $JAVA call --endpoint unix://$SOCK Node NodeUnstageVolume '{\"volumeId\":\"$ID1\",\"stagingTargetPath\":\"/tmp/staging1\"}'"
check "unstage leaves no controller, device or mount behind" sh -c "[ -z \"\$(for c in /sys/class/nvme/nvme*; do cat \$c/subsysnqn 2>/dev/null; done | grep -x '$NQN1')\" ] && \
  [ ! -e /sys/block/$DEV1 ] && ! grep -q ' /tmp/staging1 ' /proc/mounts && [ -z \"\$(ls /tmp/csi-state)\" ]"
check "stage and publish again: the data is there (not formatted again)" sh -c "$JAVA call --endpoint unix://$SOCK Node NodeStageVolume '{\"volumeId\":\"$ID1\",\"publishContext\":{\"nqn\":\"$NQN1\",\"portals\":\"$P1\",\"uuid\":\"$UUID1\"},\"stagingTargetPath\":\"/tmp/staging1\",\"volumeCapability\":$MOUNT}' && \
  $JAVA call --endpoint unix://$SOCK Node NodePublishVolume '{\"volumeId\":\"$ID1\",\"stagingTargetPath\":\"/tmp/staging1\",\"targetPath\":\"/tmp/pod1\",\"volumeCapability\":$MOUNT}' && cmp /tmp/data /tmp/pod1/data"
check "unpublish, unstage, DeleteVolume both" sh -c "$JAVA call --endpoint unix://$SOCK Node NodeUnpublishVolume '{\"volumeId\":\"$ID1\",\"targetPath\":\"/tmp/pod1\"}' && \
  $JAVA call --endpoint unix://$SOCK Node NodeUnstageVolume '{\"volumeId\":\"$ID1\",\"stagingTargetPath\":\"/tmp/staging1\"}' && \
  $JAVA call --endpoint unix://$SOCK Controller DeleteVolume '{\"volumeId\":\"$ID1\"}' && $JAVA call --endpoint unix://$SOCK Controller DeleteVolume '{\"volumeId\":\"$ID2\"}' && \
  [ -z \"\$(ls /sys/class/nvme 2>/dev/null)\" ]"
kill $driver; wait $driver
echo "== driver log"; cat /tmp/driver.log
check "no nvme errors in dmesg after the refused connect" sh -c "! dmesg | grep -iE 'nvme.*(error|fail|timeout|reset)'"
