# NVMe/TCP over TLS 1.3 with a pre-shared key, on Debian 13 (kernel 6.12 with NVME_TCP_TLS and
# NVME_TARGET_TCP_TLS, ktls-utils' tlshd for the kernel's handshakes, nvme-cli 2.13 / libnvme 1.13):
# the Linux host connects to the jbof target on the host over TLS, and the jbof initiator on the host
# connects to the Linux target (nvmet, treq required, tsas tls1.3) here. Keys come from /results/env.
. /jbof/scripts/vm/guest/lib.sh
. /jbof/scripts/vm/guest/nvmet.sh
modprobe tls; modprobe nvme-tcp
echo "kernel $(uname -r); $(nvme version | tr '\n' ' ')"
# The host's JRE is shared in read-only; the jbof jar too.
J=jbof
jbof() { /usr/lib/jvm/java-17-openjdk-amd64/bin/java -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp /jbof/app/build/jbof.jar io.jbof.app.JbofMain "$@"; }

# tlshd does the kernel's TLS handshakes (host and target); it finds PSKs in the .nvme keyring.
cat > /tmp/tlshd.conf <<CONF
[debug]
loglevel=1
tls=0
nl=0
[authenticate]
keyrings=.nvme
[authenticate.client]
[authenticate.server]
CONF
tlshd -s -c /tmp/tlshd.conf > /results/tlshd.log 2>&1 &
tlshd_pid=$!
keyctl link %:.nvme @s >/dev/null 2>&1  # so this shell may read the keys libnvme puts there
wait_for 10 sh -c "grep -q '.nvme' /proc/keys" && pass "the .nvme keyring exists (nvme-tcp loaded) and tlshd runs" || fail "the .nvme keyring exists"

# libnvme derives the PSK identity and TLS PSK from the configured key and puts them in the keyring
# (the kernel's "psk" keys cannot be read back from user space): jbof must name the same identity,
# and the handshakes below prove the PSKs equal.
insert_key() { # KEY HOSTNQN SUBNQN VERSION -> key serial (hex)
  nvme check-tls-key --keydata="$1" --hostnqn="$2" --subsysnqn="$3" --identity="$4" --insert 2>&1 | sed -n 's/.*Inserted TLS key \([0-9a-fA-F]*\).*/\1/p'
}
for v in 0 1; do
  serial="$(insert_key "$TLS_KEY" "$TLS_HOSTNQN" "$NQN" $v)"
  if [ -z "$serial" ]; then fail "nvme check-tls-key --insert (identity $v)"; continue; fi
  desc="$(keyctl rdescribe $((16#$serial)) 2>/dev/null | cut -d';' -f5-)"
  ours="$($J gen-tls-key -d "$TLS_KEY" -n "$TLS_HOSTNQN" -c "$NQN" -I $v)"
  echo "libnvme identity $v: $desc"; echo "jbof: $ours"
  if echo "$ours" | grep -qx "identity: $desc"; then
    pass "jbof derives libnvme's PSK identity (version $v, SHA-256)"
  elif $J gen-tls-key -d "$TLS_KEY" -n "$TLS_HOSTNQN" -c "$NQN" -I $v --hkdf rfc8446 | grep -qx "identity: $desc"; then
    fail "jbof derives libnvme's PSK identity (version $v): this libnvme matches jbof's --hkdf rfc8446, not the default"
  else
    fail "jbof derives libnvme's PSK identity (version $v)"
  fi
done
for v in 0 1; do insert_key "$TLS_KEY384" "$TLS_HOSTNQN384" "$NQN" $v >/dev/null; done
insert_key "$TLS_KEY" "$TLS_HOSTNQN" nqn.2014-08.org.nvmexpress.discovery 1 >/dev/null
keyctl show %:.nvme

# ---- the Linux host to the jbof target (TLS required there) ----
C="-t tcp -a $TARGET_ADDR -s $TARGET_PORT --hostnqn $TLS_HOSTNQN"
check "Linux host: nvme discover --tls lists $NQN (treq required, sectype tls1.3)" \
  sh -c "nvme discover $C --tls | tee /dev/stderr | grep -q 'subnqn: *$NQN'"
check "Linux host: nvme discover shows the port requires TLS 1.3" sh -c "nvme discover $C --tls | grep -Eiq 'treq: *required' && nvme discover $C --tls | grep -Eiq 'sectype: *tls'"
check "Linux host: nvme connect --tls to the jbof target" nvme connect $C -n "$NQN" --tls
if wait_for 30 test -b /dev/nvme0n1; then
  pass "the TLS controller's namespace appears as /dev/nvme0n1"
  check "the kernel reports the queue's TLS key" sh -c "cat /sys/class/nvme/nvme0/tls_key 2>/dev/null || dmesg | grep -i 'tls'"
  check "fio randwrite 4k QD16 verify=crc32c over TLS" fio --name=tls4k --filename=/dev/nvme0n1 --rw=randwrite --bs=4k --iodepth=16 \
    --ioengine=libaio --direct=1 --size=24M --verify=crc32c --do_verify=1 --verify_fatal=1 --minimal
  check "fio seq write 1M verify=crc32c over TLS (records of many PDUs)" fio --name=tls1m --filename=/dev/nvme0n1 --rw=write --bs=1M \
    --iodepth=4 --ioengine=libaio --direct=1 --size=32M --offset=64M --verify=crc32c --do_verify=1 --verify_fatal=1 --minimal
  out="$(fio --name=tlsrr --filename=/dev/nvme0n1 --rw=randread --bs=4k --iodepth=16 --ioengine=libaio --direct=1 --size=64M \
    --time_based --runtime=10 --output-format=terse --terse-version=3 2>/dev/null)"
  echo "kernel host over TLS, 4k randread QD16: $(echo "$out" | cut -d';' -f8) IOPS" | tee -a /results/figures.txt
  check "nvme disconnect" sh -c "nvme disconnect -n $NQN | grep -q 'disconnected 1'"
else
  fail "the TLS controller's namespace appears"
fi
check "Linux host with a SHA-384 key: nvme connect --tls, 4k write+verify" sh -c "nvme connect -t tcp -a $TARGET_ADDR -s $TARGET_PORT \
  --hostnqn $TLS_HOSTNQN384 -n $NQN --tls && for i in \$(seq 30); do [ -b /dev/nvme0n1 ] && break; sleep 1; done && \
  fio --name=tls384 --filename=/dev/nvme0n1 --rw=randwrite --bs=4k --iodepth=8 --ioengine=libaio --direct=1 --size=4M \
  --offset=128M --verify=crc32c --do_verify=1 --verify_fatal=1 --minimal && nvme disconnect -n $NQN"
nvme disconnect-all >/dev/null 2>&1
check "Linux host without --tls is refused by the TLS-only jbof target" sh -c "! nvme connect $C -n $NQN"
nvme disconnect-all >/dev/null 2>&1

# ---- the jbof initiator to the Linux target with TLS required ----
nvmet_setup tcp 10.0.2.15 4420 || exit 1
c=/sys/kernel/config/nvmet
rm -f $c/ports/1/subsystems/$LINUX_NQN
echo tls1.3 > $c/ports/1/addr_tsas && echo required > $c/ports/1/addr_treq && pass "nvmet port requires TLS 1.3 (addr_tsas tls1.3, addr_treq required)" \
  || fail "nvmet port takes addr_tsas tls1.3"
ln -s $c/subsystems/$LINUX_NQN $c/ports/1/subsystems/$LINUX_NQN
echo 0 > $c/subsystems/$LINUX_NQN/attr_allow_any_host
mkdir -p $c/hosts/$TLS_JBOF_HOSTNQN
ln -s $c/hosts/$TLS_JBOF_HOSTNQN $c/subsystems/$LINUX_NQN/allowed_hosts/$TLS_JBOF_HOSTNQN
mkdir -p $c/hosts/$TLS_JBOF_HOSTNQN384
ln -s $c/hosts/$TLS_JBOF_HOSTNQN384 $c/subsystems/$LINUX_NQN/allowed_hosts/$TLS_JBOF_HOSTNQN384
for v in 0 1; do
  [ -n "$(insert_key "$TLS_JBOF_KEY" "$TLS_JBOF_HOSTNQN" "$LINUX_NQN" $v)" ] || fail "insert the jbof host's TLS PSK (identity $v) for nvmet"
  [ -n "$(insert_key "$TLS_JBOF_KEY384" "$TLS_JBOF_HOSTNQN384" "$LINUX_NQN" $v)" ] || fail "insert the jbof host's SHA-384 TLS PSK (identity $v)"
done
insert_key "$TLS_JBOF_KEY" "$TLS_JBOF_HOSTNQN" nqn.2014-08.org.nvmexpress.discovery 1 >/dev/null
keyctl show %:.nvme
touch /results/ready
if wait_for "${HOST_TIMEOUT:-900}" test -f /results/done; then pass "guest saw the host finish"; else fail "host did not finish in time"; fi
dmesg | grep -iE 'nvme|tls|handshake' | tail -30
rm -f $c/subsystems/$LINUX_NQN/allowed_hosts/$TLS_JBOF_HOSTNQN $c/subsystems/$LINUX_NQN/allowed_hosts/$TLS_JBOF_HOSTNQN384
nvmet_teardown
rmdir $c/hosts/$TLS_JBOF_HOSTNQN $c/hosts/$TLS_JBOF_HOSTNQN384 2>/dev/null
kill $tlshd_pid 2>/dev/null
