# rdma-lossy, guest A: the jbof target on eth1, over each fabric in LOSSY_LINKS ("rxe siw"). In each phase that
# guest B (rdma-lossy.sh) announces in /sync, A's side of the link gets the same netem loss as B's.
. /jbof/scripts/vm/guest/lib.sh
. /jbof/scripts/vm/guest/rdma.sh
. /jbof/scripts/vm/guest/lossy.sh
lossy_link $TARGET_IP || exit 1
RDMA_NETDEV=eth1
for link in $LOSSY_LINKS; do
  RDMA_LINK=$link RDMA_DEV=${link}0
  rdma_link_setup || break
  if start_jbof_target target-$link --listen $TARGET_IP:4420 --nqn $NQN --allow-host $HOSTNQN --namespace /tmp/ns-$link.img:256M; then
    pass "$link: jbof target listening on $TARGET_IP:4420 (eth1)"
  else
    fail "$link: jbof target starts on eth1"; break
  fi
  touch /sync/target-$link
  for pct in $LOSSY_RATES; do
    wait_for 900 test -f /sync/phase-$link-$pct || { fail "$link: guest B reached the $pct % phase"; break 2; }
    set_loss $pct && touch /sync/ack-$link-$pct
  done
  wait_for 900 test -f /sync/done-$link || fail "$link: guest B finished its phases"
  set_loss 0
  kill -TERM $JBOF_TARGET_PID
  if wait $JBOF_TARGET_PID; then pass "$link: jbof target exits 0 on SIGTERM after the lossy phases"; else fail "$link: jbof target exit code on SIGTERM"; fi
  cat /tmp/target-$link.log
  rdma link delete $RDMA_DEV
done
touch /sync/target-done
# As in rdma-lossy.sh: rxe's "Failed sending ACK" is a packet the qdisc refused, recovered by retransmission.
check "no RDMA or NVMe errors in guest A's dmesg" sh -c "! dmesg | grep -v -e 'module verification failed' -e 'rdma_rxe: Failed sending ACK' | grep -iE 'rxe.*(error|fail)|siw.*(error|fail)|nvme.*(error|fail)'"
