# jbof initiator (on the host) -> Linux target (nvmet-tcp) in the guest, reached through a qemu hostfwd.
. /jbof/scripts/vm/guest/lib.sh
. /jbof/scripts/vm/guest/nvmet.sh
nvmet_setup tcp 10.0.2.15 4420 || exit 1
touch /results/ready
if wait_for "${HOST_TIMEOUT:-600}" test -f /results/done; then pass "guest saw the host finish"; else fail "host did not finish in time"; fi
nvmet_teardown
