#!/bin/bash
# PID 1 of the jbof test guest (copied into the root as /jbof-guest-init): mounts, network, one scenario, power off.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mkdir -p /dev/pts /dev/shm && mount -t devpts devpts /dev/pts
ln -sf /proc/self/fd /dev/fd
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
mount -t configfs none /sys/kernel/config 2>/dev/null
opts=trans=virtio,version=9p2000.L,msize=262144
mount -t 9p -o $opts results /results                 # no cache: the host watches and writes files here
mount -t 9p -o $opts,cache=loose,ro jbof /jbof
mount -t 9p -o $opts,cache=loose,ro jvm /usr/lib/jvm 2>/dev/null
modprobe virtio_net
ip link set lo up
ip link set eth0 up
ip addr add 10.0.2.15/24 dev eth0
ip route add default via 10.0.2.2
scenario="$(sed -n 's/.*jbof.scenario=\([^ ]*\).*/\1/p' /proc/cmdline)"
echo "guest: kernel $(uname -r), scenario $scenario" > /results/guest.log
set -a; . /results/env; set +a
timeout "${GUEST_TIMEOUT:-900}" bash /jbof/scripts/vm/guest/"$scenario".sh >> /results/guest.log 2>&1
echo "guest-exit $?" >> /results/guest.log
dmesg > /results/dmesg.txt
sync
echo o > /proc/sysrq-trigger
sleep 30
