# rdma-lossy, guest B: the jbof initiator on eth1 against guest A's target, over each fabric in LOSSY_LINKS, with
# both sides' eth1 clean, then dropping 1 % and 5 % (netem, with 2 ms delay and 10 % reordering) in each phase:
# every byte verified, the run bounded, and the throughput at each loss rate recorded.
. /jbof/scripts/vm/guest/lib.sh
. /jbof/scripts/vm/guest/rdma.sh
. /jbof/scripts/vm/guest/lossy.sh
lossy_link 10.9.0.2 || exit 1
RDMA_NETDEV=eth1
J="$JBOF_JAVA io.jbof.app.JbofMain"
for link in $LOSSY_LINKS; do
  RDMA_LINK=$link RDMA_DEV=${link}0
  rdma_link_setup || break
  wait_for 600 test -f /sync/target-$link || { fail "$link: guest A's target came up"; break; }
  C="-t rdma -a $TARGET_IP -s 4420 -n $NQN --hostnqn $HOSTNQN"
  for pct in $LOSSY_RATES; do
    set_loss $pct; touch /sync/phase-$link-$pct
    wait_for 120 test -f /sync/ack-$link-$pct || { fail "$link: guest A set its side to $pct % loss"; break 2; }
    # Bounded: a command lost for good would end in the initiator's timeout, never in a hang.
    check "$link, $pct % loss: jbof verify (2 queues, depth 16, sizes to 1 MiB, every byte compared) ends within 10 min" \
      timeout 600 $J verify $C -i 2 -N 1 --size 16M --iodepth 16 --destroy-data
    timeout 300 $J bench $C --rw randrw --bs 4k --iodepth 16 --runtime 10 -N 1 --verify crc32c > /tmp/bench.out 2>&1
    rc=$?; cat /tmp/bench.out
    if [ $rc -eq 0 ] && grep -q 'IOPS=' /tmp/bench.out; then
      pass "$link, $pct % loss: jbof bench 4K randrw QD16 with crc32c verify"
      echo "rdma-lossy $link loss $pct %: $(grep -m2 'IOPS=' /tmp/bench.out | tr -s ' ' | tr '\n' ' ')" >> /results/figures.txt
    else
      fail "$link, $pct % loss: jbof bench 4K randrw QD16 with crc32c verify (exit $rc)"
    fi
    tc -s qdisc show dev eth1 | tee -a /tmp/netem.txt
  done
  set_loss 0
  touch /sync/done-$link
  rdma link delete $RDMA_DEV
done
# rxe logs "Failed sending ACK" when the qdisc refuses a packet (netem being replaced between phases): one more
# packet lost, which the sender's retransmission recovers, as the verified phases show.
check "no RDMA or NVMe errors in dmesg" sh -c "! dmesg | grep -v -e 'module verification failed' -e 'rdma_rxe: Failed sending ACK' | grep -iE 'rxe.*(error|fail)|siw.*(error|fail)|nvme.*(error|fail)'"
