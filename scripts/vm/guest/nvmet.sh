# Configures the kernel's NVMe target through configfs: one subsystem, file-backed namespaces, one port.
nvmet_setup() {
  local trtype="$1" addr="$2" port="$3"
  modprobe nvmet && modprobe "nvmet-$trtype" || { fail "modprobe nvmet nvmet-$trtype"; return 1; }
  # configfs may be a module that nvmet just pulled in: mount it now if the early mount could not.
  mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
  local c=/sys/kernel/config/nvmet
  [ -d $c ] || { fail "nvmet configfs tree at $c"; return 1; }
  truncate -s 256M /tmp/nvmet-ns1.img
  truncate -s 64M /tmp/nvmet-ns2.img
  mkdir -p $c/subsystems/$LINUX_NQN || { fail "create nvmet subsystem"; return 1; }
  echo 1 > $c/subsystems/$LINUX_NQN/attr_allow_any_host
  local i=1
  for f in /tmp/nvmet-ns1.img /tmp/nvmet-ns2.img; do
    mkdir -p $c/subsystems/$LINUX_NQN/namespaces/$i
    echo -n "$f" > $c/subsystems/$LINUX_NQN/namespaces/$i/device_path
    echo 1 > $c/subsystems/$LINUX_NQN/namespaces/$i/buffered_io
    echo 1 > $c/subsystems/$LINUX_NQN/namespaces/$i/enable || { fail "enable nvmet namespace $i"; return 1; }
    i=$((i + 1))
  done
  mkdir -p $c/ports/1
  echo "$trtype" > $c/ports/1/addr_trtype
  echo ipv4 > $c/ports/1/addr_adrfam
  echo "$addr" > $c/ports/1/addr_traddr
  echo "$port" > $c/ports/1/addr_trsvcid
  ln -s $c/subsystems/$LINUX_NQN $c/ports/1/subsystems/$LINUX_NQN || { fail "bind nvmet port"; return 1; }
  pass "nvmet-$trtype target configured on $addr:$port"
}

nvmet_teardown() {
  local c=/sys/kernel/config/nvmet
  rm -f $c/ports/1/subsystems/$LINUX_NQN
  rmdir $c/ports/1 $c/subsystems/$LINUX_NQN/namespaces/* $c/subsystems/$LINUX_NQN 2>/dev/null
}
