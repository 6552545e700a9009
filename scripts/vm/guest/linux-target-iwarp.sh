# The linux-target-rdma scenario over Soft-iWARP (siw0 on eth0, RDMA over TCP) instead of Soft-RoCE.
export RDMA_LINK=siw
. /jbof/scripts/vm/guest/linux-target-rdma.sh
