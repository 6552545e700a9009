# Linux host (nvme-tcp) -> jbof target on the host's loopback (10.0.2.2 from the guest).
. /jbof/scripts/vm/guest/lib.sh
linux_host_checks ""
