# Linux host (nvme-rdma) -> jbof target over RDMA (Soft-RoCE rxe0), both inside the guest.
. /jbof/scripts/vm/guest/lib.sh
. /jbof/scripts/vm/guest/rdma.sh
rxe_setup || exit 1
NQN=nqn.2024-01.io.jbof:interop
TRANSPORT=rdma TARGET_ADDR=$RDMA_ADDR TARGET_PORT=4420 NS1_BLOCKS=$(( (256 << 20) / 4096 ))
if start_jbof_target target -v --listen $RDMA_ADDR:4420 --nqn $NQN --allow-any-host \
    --namespace /tmp/ns1.img:256M --namespace /tmp/ns2.img:64M,bs=512; then
  pass "jbof target listening over RDMA on $RDMA_ADDR:4420"
else
  fail "jbof target starts over RDMA"; exit 1
fi
# KATO 15 s instead of nvme-cli's 5: here the target's JVM shares two emulated vCPUs with the kernel host
# and fio, and one CI run saw a Keep Alive answered later than 5 s (a pause of the whole JVM under qemu tcg).
linux_host_checks "--keep-alive-tmo=15"
check "the kernel host asked for remote invalidation and got SEND with Invalidate (no 'Bogus remote invalidation' in dmesg)" \
  sh -c "grep -q 'SEND with Invalidate' /tmp/target.log && ! dmesg | grep -qi 'bogus remote invalidation'"
kill -TERM $JBOF_TARGET_PID
if wait $JBOF_TARGET_PID; then pass "jbof target exits 0 on SIGTERM after the kernel host's session"; else fail "jbof target exit code on SIGTERM"; fi
echo "---- target log"; cat /tmp/target.log
