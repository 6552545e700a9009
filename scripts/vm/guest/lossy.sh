# Helpers for rdma-lossy: two guests joined by a second NIC (eth1, a qemu UDP socket link of their own), a
# shared /sync folder for the steps, and netem on each side's eth1 in each phase.
NQN=nqn.2024-01.io.jbof:lossy
HOSTNQN=nqn.2024-01.io.jbof:lossy-host
TARGET_IP=10.9.0.1
LOSSY_LINKS="${LOSSY_LINKS:-rxe siw}"   # from JBOF_LOSSY_LINKS on the host (default both: Soft-RoCE, then Soft-iWARP)
LOSSY_RATES="0 1 5"

# lossy_link ADDRESS: eth1 up with ADDRESS/24, /sync mounted, netem loaded.
lossy_link() {
  mkdir -p /sync
  mount -t 9p -o trans=virtio,version=9p2000.L sync /sync || { fail "mount the shared /sync folder"; return 1; }
  ip link set eth1 up && ip addr add "$1/24" dev eth1 || { fail "eth1 up with $1"; return 1; }
  modprobe sch_netem || { fail "modprobe sch_netem"; return 1; }
}

# set_loss PERCENT: what eth1 sends is dropped at PERCENT %, delayed 2 ms and 10 % of it reordered; 0: a clean link.
set_loss() {
  if [ "$1" = 0 ]; then
    tc qdisc del dev eth1 root 2>/dev/null
    return 0
  fi
  tc qdisc replace dev eth1 root netem delay 2ms reorder 10% loss "$1%"
}
