#!/bin/sh
# Builds the cgroup-v2 guests of the VM test bed and caches them outside the clone; prints the
# flavour's cache folder. Usage: build-image.sh minimal|systemd
#   minimal: a busybox initramfs (host root and checkout shared over 9p, cgroup2 mounted by /init).
#   systemd: a debootstrap'd bookworm root filesystem as an ext4 image, systemd as PID 1.
# The cache is keyed by RECIPE: change the flavour's whenever what this script builds for it or its
# guest files change, so that every clone rebuilds instead of booting a stale guest.
set -eu

# One recipe number per flavour, so that a change to one guest rebuilds only that one.
case "${1:-}" in
  minimal) RECIPE=9 ;;
  *) RECIPE=8 ;;
esac
# The guest kernel: the newest in /boot (Debian's linux-image-amd64), unless the caller names one.
KVER=${ATTESTORM_VM_KERNEL:-$(ls /boot | sed -n 's/^vmlinuz-//p' | sort -V | tail -n 1)}
CACHE=${ATTESTORM_VM_CACHE:-/var/cache/attestorm/vm}
HERE=$(cd "$(dirname "$0")" && pwd)
flavour=${1:?usage: build-image.sh minimal|systemd}
out="$CACHE/$flavour-r$RECIPE-$KVER"

# A finished build leaves its marker last; a half-built folder (killed build) is rebuilt.
if [ -e "$out/ready" ]; then echo "$out"; exit 0; fi
[ "$(id -u)" = 0 ] || { echo "build-image.sh: must run as root (debootstrap, device nodes)" >&2; exit 1; }
[ -n "$KVER" ] && [ -d "/lib/modules/$KVER" ] || { echo "build-image.sh: /lib/modules/$KVER missing (apt-get install linux-image-amd64)" >&2; exit 1; }
# One build of a flavour at a time: .ci/run starts the builds early in the background, and a test that
# needs the guest meanwhile waits here, then finds it ready.
mkdir -p "$CACHE"
exec 9>"$CACHE/.build-$flavour.lock"
flock 9
if [ -e "$out/ready" ]; then echo "$out"; exit 0; fi
# A build killed inside debootstrap can leave its proc and sys mounted in the half-built root: unmount
# them before deleting anything, so that rm never walks into a live /proc or /sys.
unmount_below() { grep -o " $1/[^ ]*" /proc/mounts | sort -r | while read -r m; do umount -l "$m"; done; }
unmount_below "$out.tmp"
rm -rf "$out" "$out.tmp"
mkdir -p "$out.tmp"
tmp="$out.tmp"
trap 'unmount_below "$tmp"; rm -rf "$tmp"' EXIT

# The 9p stack, in dependency order (the kernel builds them as modules).
NINEP_MODULES="virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci 9pnet 9pnet_virtio netfs fscache 9p"

build_minimal() {
  root="$tmp/initramfs"
  # The initramfs has no libraries: a dynamically linked busybox would not start.
  if ldd /bin/busybox >/dev/null 2>&1; then echo "build-image.sh: /bin/busybox is dynamically linked (apt-get install busybox-static)" >&2; exit 1; fi
  mkdir -p "$root/bin" "$root/modules" "$root/proc" "$root/sys" "$root/dev" "$root/host"
  cp /bin/busybox "$root/bin/busybox"
  for m in $NINEP_MODULES; do
    ko=$(find "/lib/modules/$KVER/kernel" -name "$m.ko" -o -name "$m.ko.xz" -o -name "$m.ko.zst" | head -n 1)
    [ -n "$ko" ] || { echo "build-image.sh: module $m not found under /lib/modules/$KVER" >&2; exit 1; }
    case "$ko" in
      *.xz) xz -dc "$ko" >"$root/modules/$m.ko" ;;
      *.zst) zstd -qdc "$ko" >"$root/modules/$m.ko" ;;
      *) cp "$ko" "$root/modules/$m.ko" ;;
    esac
  done
  echo "$NINEP_MODULES" >"$root/modules/order"
  cp "$HERE/guest/minimal-init.sh" "$root/init"
  cp "$HERE/guest/run-job.sh" "$root/run-job.sh"
  chmod 755 "$root/init"
  (cd "$root" && find . | cpio -o -H newc --quiet) | gzip -1 >"$tmp/initramfs.gz"
  rm -rf "$root"
}

build_systemd() {
  root="$tmp/root"
  mirror=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | grep -v security | head -n 1)
  [ -n "$mirror" ] || mirror=http://deb.debian.org/debian
  # The host's suite, so that the host's node binary finds the glibc it was linked against.
  suite=$(. /etc/os-release && echo "$VERSION_CODENAME")
  debootstrap --variant=minbase \
    --include=systemd,systemd-sysv,udev,dbus,dbus-user-session,libpam-systemd,sudo,procps,util-linux,iproute2,kmod,gcc,libc6-dev,findutils,login,passwd,docker.io,xz-utils \
    "$suite" "$root" "$mirror" >"$tmp/debootstrap.log" 2>&1 ||
    { tail -n 30 "$tmp/debootstrap.log" >&2; exit 1; }
  # Node 20 and npm from the host: the same binary the host's tests run.
  cp /usr/bin/node "$root/usr/bin/node"
  mkdir -p "$root/usr/lib/node_modules"
  cp -a /usr/lib/node_modules/npm "$root/usr/lib/node_modules/npm"
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/bin/npx"
  mkdir -p "$root/lib/modules"
  cp -a "/lib/modules/$KVER" "$root/lib/modules/$KVER"
  cp -a "$HERE/guest/systemd/." "$root/"
  chroot "$root" /bin/sh -eu <<'EOF'
useradd -m -u 1000 -s /bin/bash tester
passwd -d tester >/dev/null
echo 'tester ALL=(ALL) NOPASSWD:ALL' >/etc/sudoers.d/tester
chmod 440 /etc/sudoers.d/tester
echo attestorm-vm >/etc/hostname
printf '127.0.0.1 localhost\n127.0.1.1 attestorm-vm\n' >/etc/hosts
# A fixed machine id: an empty one makes every (snapshot) boot a first boot.
echo 4174746573746f726d2d766d2d303031 >/etc/machine-id

systemctl enable attestorm-shares.service attestorm-zram.service attestorm-job.service >/dev/null 2>&1
# Nothing a job needs: timers and helpers that only cost boot time under emulation.
systemctl mask apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer e2scrub_reap.service \
  fstrim.timer systemd-timesyncd.service getty@tty1.service >/dev/null 2>&1 || true
# Docker only for the container job, which starts it: not on every boot.
systemctl disable docker.service docker.socket containerd.service >/dev/null 2>&1 || true
apt-get clean
EOF
  rm -rf "$root/var/lib/apt/lists"/* "$root/var/cache/apt"/*.bin
  mkdir -p "$root/attestorm-job"
  size=$(du -sm "$root" | cut -f1)
  # Room for the job's writes: logs, gcc's output, and Docker's copy of the container job's image
  # (the guest's own root). The file is sparse, and the guest writes to a snapshot overlay.
  mkfs.ext4 -q -F -L attestorm-root -d "$root" "$tmp/root.ext4" "$((size + 3072))M"
  rm -rf "$root"
}

case "$flavour" in
  minimal) build_minimal ;;
  systemd) build_systemd ;;
  *) echo "build-image.sh: unknown flavour '$flavour' (minimal|systemd)" >&2; exit 2 ;;
esac
echo "$RECIPE $KVER $(date -u +%FT%TZ)" >"$tmp/ready"
trap - EXIT
mv "$tmp" "$out"
echo "$out"
