# jbof initiator -> Linux target (nvmet-rdma) over RDMA inside the guest: Soft-RoCE rxe0, or Soft-iWARP siw0 with RDMA_LINK=siw.
. /jbof/scripts/vm/guest/lib.sh
. /jbof/scripts/vm/guest/nvmet.sh
. /jbof/scripts/vm/guest/rdma.sh
rdma_link_setup || exit 1
nvmet_setup rdma $RDMA_ADDR 4420 || exit 1
C="-t rdma -a $RDMA_ADDR -s 4420 -n $LINUX_NQN"
J="$JBOF_JAVA io.jbof.app.JbofMain"
check "jbof discover -t rdma on nvmet lists $LINUX_NQN" sh -c "$J discover -t rdma -a $RDMA_ADDR -s 4420 | tee /dev/stderr | grep -q 'subnqn: *$LINUX_NQN'"
check "jbof id-ctrl over RDMA on nvmet: mn Linux, subnqn" sh -c "$J id-ctrl $C > /tmp/idctrl; cat /tmp/idctrl; grep -Eq '^mn +: Linux' /tmp/idctrl && grep -Eq '^subnqn +: $LINUX_NQN' /tmp/idctrl"
check "jbof list over RDMA on nvmet shows 2 namespaces" sh -c "$J list $C > /tmp/list; cat /tmp/list; [ \$(grep -c '^ns[12] ' /tmp/list) = 2 ]"
check "jbof verify over RDMA on nvmet ns1 (random sizes, 2 queues)" $J verify $C -i 2 -N 1 --size 64M --destroy-data
check "jbof verify over RDMA on nvmet ns2 (depth 32)" $J verify $C -i 2 -N 2 --size 32M --iodepth 32 --rounds 2 --destroy-data
head -c 300001 /dev/urandom > /tmp/pattern
check "jbof write/read at an unaligned offset over RDMA on nvmet" sh -c "$J write $C --offset 12345 --input /tmp/pattern && \
  $J read $C --offset 12345 --length 300001 --output /tmp/back && cmp /tmp/pattern /tmp/back"
check "no nvmet errors in dmesg" sh -c "! dmesg | grep -iE 'nvmet.*(error|fail)|rdma.*(error|fail)'"
nvmet_teardown
