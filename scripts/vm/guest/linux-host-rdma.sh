# Linux host (nvme-rdma) -> jbof target over RDMA, both inside the guest: Soft-RoCE rxe0, or Soft-iWARP siw0 with RDMA_LINK=siw.
. /jbof/scripts/vm/guest/lib.sh
. /jbof/scripts/vm/guest/rdma.sh
rdma_link_setup || exit 1
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
if [ "$RDMA_LINK" = siw ]; then
  check "the kernel host asked for remote invalidation and, on iWARP, got plain SENDs (it invalidates its own keys)" \
    grep -q 'asks for remote invalidation; responses go by plain SEND' /tmp/target.log
else
  check "the kernel host asked for remote invalidation and got SEND with Invalidate (no 'Bogus remote invalidation' in dmesg)" \
    sh -c "grep -q 'asks for remote invalidation; responses go by SEND with Invalidate' /tmp/target.log && ! dmesg | grep -qi 'bogus remote invalidation'"
fi
if [ "$RDMA_LINK" = siw ]; then
  check "the target found the device iWARP through verbs and registered its RDMA READ sinks with remote write" \
    grep -q 'on an iWARP device (RDMA READ sinks with remote write)' /tmp/target.log
fi
kill -TERM $JBOF_TARGET_PID
if wait $JBOF_TARGET_PID; then pass "jbof target exits 0 on SIGTERM after the kernel host's session"; else fail "jbof target exit code on SIGTERM"; fi
echo "---- target log"; cat /tmp/target.log
