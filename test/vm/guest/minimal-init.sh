#!/bin/busybox sh
# /init of the minimal guest: cgroup2 on a busybox initramfs. Mounts the host's root read-only and
# the checkout and job folder read-write over 9p, enables controllers as systemd would, places itself
# in the cgroup the kernel command line names, runs the job chrooted into the host's root (so that
# the host's node and gcc run unchanged) and powers off.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t devtmpfs dev /dev
for m in $(cat /modules/order); do insmod "/modules/$m.ko" || echo "init: insmod $m failed" >&2; done
arg() { sed -n "s/.*attestorm\.$1=\([^ ]*\).*/\1/p" /proc/cmdline; }
checkout=$(arg checkout)
placement=$(arg placement)
opts=trans=virtio,version=9p2000.L,msize=1048576
h=/host
mount -t 9p -o "$opts,ro" hostroot $h || { echo "init: cannot mount the host's root over 9p" >&2; poweroff -f; }
mount -t proc proc $h/proc
mount -t sysfs sys $h/sys
mount -t devtmpfs dev $h/dev
mkdir -p $h/dev/pts $h/dev/shm
mount -t devpts devpts $h/dev/pts
mount -t tmpfs -o mode=1777 tmpfs $h/dev/shm
mount -t tmpfs -o mode=1777 tmpfs $h/tmp
mount -t tmpfs -o mode=1777 tmpfs $h/var/tmp
mount -t tmpfs -o mode=755 tmpfs $h/run
mount -t tmpfs -o mode=700 tmpfs $h/root
mount -t cgroup2 cgroup2 $h/sys/fs/cgroup
# A checkout below /tmp or /run is below one of the tmpfs just mounted: its mount point is made there.
mkdir -p "$h$checkout" 2>/dev/null
mount -t 9p -o "$opts" checkout "$h$checkout"
mkdir -p $h/run/attestorm-job
mount -t 9p -o "$opts" job $h/run/attestorm-job
cp /run-job.sh $h/run/attestorm-run-job
# What systemd does at boot: every controller enabled at the root and for system.slice's children.
cg=$h/sys/fs/cgroup
echo "+cpuset +cpu +io +memory +pids" >$cg/cgroup.subtree_control
mkdir -p $cg/system.slice
echo "+cpuset +cpu +io +memory +pids" >$cg/system.slice/cgroup.subtree_control
case "$placement" in
  root) ;;
  runner-service)
    # PID 1 itself moves, so that the job shares its cgroup with a parent as a runner's step does.
    mkdir -p $cg/system.slice/runner.service
    echo $$ >$cg/system.slice/runner.service/cgroup.procs ;;
  *) echo "init: unknown placement '$placement' (root|runner-service)" >&2 ;;
esac
hostname attestorm-vm
HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin chroot $h /bin/sh /run/attestorm-run-job
sync
poweroff -f
