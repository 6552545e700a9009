# Header and data digests both ways: Linux host -> jbof target with -g -G; jbof initiator -> nvmet-tcp with -g -G.
. /jbof/scripts/vm/guest/lib.sh
. /jbof/scripts/vm/guest/nvmet.sh
linux_host_checks "--hdr-digest --data-digest"
nvmet_setup tcp 10.0.2.15 4420 || exit 1
touch /results/ready
if wait_for "${HOST_TIMEOUT:-600}" test -f /results/done; then pass "guest saw the host finish"; else fail "host did not finish in time"; fi
check "nvmet logged no digest errors" sh -c "! dmesg | grep -iE 'digest error|nvmet.*error'"
nvmet_teardown
