# DH-HMAC-CHAP both ways, on a kernel with NVMe in-band authentication (bookworm-backports' 6.12):
# the Linux host authenticates to the jbof target on the host, and the jbof initiator on the host
# authenticates to the Linux target (nvmet) here. Secrets come from the host in /results/env.
. /jbof/scripts/vm/guest/lib.sh
. /jbof/scripts/vm/guest/nvmet.sh
modprobe nvme-tcp; modprobe nvme-auth 2>/dev/null
echo "kernel $(uname -r)"
C="-t tcp -a $TARGET_ADDR -s $TARGET_PORT -n $NQN --hostnqn $DH_HOSTNQN"
check "Linux host: nvme connect with --dhchap-secret and --dhchap-ctrl-secret (bidirectional) to the jbof target" \
  nvme connect $C --dhchap-secret="$DH_HOST_SECRET" --dhchap-ctrl-secret="$DH_CTRL_SECRET"
if wait_for 30 test -b /dev/nvme0n1; then
  pass "the authenticated controller's namespace appears as /dev/nvme0n1"
  check "fio randwrite 4k verify=crc32c over the authenticated connection" fio --name=auth --filename=/dev/nvme0n1 --rw=randwrite \
    --bs=4k --iodepth=8 --ioengine=libaio --direct=1 --size=8M --verify=crc32c --do_verify=1 --verify_fatal=1 --minimal
  check "nvme disconnect" sh -c "nvme disconnect -n $NQN | grep -q 'disconnected 1'"
else
  fail "the authenticated controller's namespace appears"
fi
check "Linux host with the wrong secret is refused" sh -c "! nvme connect $C --dhchap-secret='$DH_WRONG_SECRET'"
check "Linux host without a secret is refused" sh -c "! nvme connect $C"
check "Linux host: the jbof target that does not know the controller secret fails the host's check" \
  sh -c "! nvme connect $C --dhchap-secret='$DH_HOST_SECRET' --dhchap-ctrl-secret='$DH_WRONG_SECRET'"
nvme disconnect-all >/dev/null 2>&1
dmesg | grep -iE 'nvme.*(auth|dhchap)' | tail -20

# The Linux target with a DH-HMAC-CHAP host entry for the jbof initiator.
nvmet_setup tcp 10.0.2.15 4420 || exit 1
c=/sys/kernel/config/nvmet
mkdir -p $c/hosts/$DH_JBOF_HOSTNQN
echo "$DH_JBOF_SECRET" > $c/hosts/$DH_JBOF_HOSTNQN/dhchap_key
echo "$DH_JBOF_CTRL_SECRET" > $c/hosts/$DH_JBOF_HOSTNQN/dhchap_ctrl_key
echo "hmac(sha384)" > $c/hosts/$DH_JBOF_HOSTNQN/dhchap_hash
echo "ffdhe3072" > $c/hosts/$DH_JBOF_HOSTNQN/dhchap_dhgroup
echo 0 > $c/subsystems/$LINUX_NQN/attr_allow_any_host
ln -s $c/hosts/$DH_JBOF_HOSTNQN $c/subsystems/$LINUX_NQN/allowed_hosts/$DH_JBOF_HOSTNQN && pass "nvmet requires DH-HMAC-CHAP (hmac(sha384), ffdhe3072) of $DH_JBOF_HOSTNQN"
touch /results/ready
if wait_for "${HOST_TIMEOUT:-600}" test -f /results/done; then pass "guest saw the host finish"; else fail "host did not finish in time"; fi
dmesg | grep -iE 'nvmet.*(auth|dhchap|host)' | tail -20
rm -f $c/subsystems/$LINUX_NQN/allowed_hosts/$DH_JBOF_HOSTNQN
nvmet_teardown
rmdir $c/hosts/$DH_JBOF_HOSTNQN 2>/dev/null
