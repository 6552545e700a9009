#!/usr/bin/env bash
# Builds (once, cached in .cache/vm) what the qemu guest needs, all from Debian packages:
#   kernel/   the stock Debian 6.1 kernel (nvme-tcp, nvme-rdma, nvmet*, rdma_rxe as modules), or with
#             JBOF_VM_KERNEL=backports bookworm-backports' newer one (6.12: NVMe in-band authentication)
#             JBOF_VM_SUITE=trixie Debian 13's kernel (6.12) and root (NVMe/TCP TLS: ktls-utils' tlshd)
#   rootfs/   a debootstrap minbase root with nvme-cli, fio, rdma-core, kmod, iproute2, libfuse2 + fuse3
#             (trixie: nvme-cli, fio, ktls-utils, keyutils)
#   initrd.gz a busybox initramfs that loads virtio + 9p and switch_roots into rootfs over virtio-9p
#   siw.ko    with JBOF_VM_SIW=1: Soft-iWARP built for the stock kernel (Debian ships no siw module)
# Idempotent: each step leaves a stamp file and is skipped when it is there.
set -euo pipefail
root="$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)"
cache="${JBOF_VM_CACHE:-$root/.cache/vm}"
mirror="${JBOF_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
suite="${JBOF_VM_SUITE:-bookworm}"
mkdir -p "$cache"
log() { echo "vm-prepare: $*" >&2; }

need=()
for p in qemu-system-x86_64:qemu-system-x86 busybox:busybox-static cpio:cpio debootstrap:debootstrap; do
  command -v "${p%%:*}" >/dev/null || [[ -x /usr/sbin/${p%%:*} ]] || need+=("${p#*:}")
done
apt_updated=""
apt_update() { [[ -n "$apt_updated" ]] || { apt-get update -qq >/dev/null; apt_updated=1; }; }
if ((${#need[@]})); then
  log "installing ${need[*]}"
  apt_update
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

# ---- kernel ----
if [[ ! -f "$cache/kernel.stamp" ]]; then
  apt_opts=()
  if [[ "${JBOF_VM_KERNEL:-stable}" == backports || "$suite" != bookworm ]]; then
    # A private apt state listing only bookworm-backports: the host's own sources stay as they are.
    mkdir -p "$cache/apt/lists/partial"
    if [[ "$suite" == bookworm ]]; then dist="$suite-backports"; else dist="$suite"; fi
    echo "deb $mirror $dist main" > "$cache/apt/sources.list"
    apt_opts=(-o "Dir::Etc::SourceList=$cache/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null -o "Dir::State::Lists=$cache/apt/lists")
    apt-get -qq "${apt_opts[@]}" update >/dev/null
  else
    apt_update
  fi
  kpkg="$(apt-cache "${apt_opts[@]}" depends linux-image-amd64 | awk '/Depends: linux-image-[0-9]/{print $2; exit}')"
  [[ -n "$kpkg" ]] || { log "cannot resolve linux-image-amd64 (apt-get update?)"; exit 1; }
  log "downloading $kpkg"
  rm -rf "$cache/dl" "$cache/kernel"; mkdir -p "$cache/dl" "$cache/kernel"
  (cd "$cache/dl" && apt-get "${apt_opts[@]}" download -qq "$kpkg" 2>&1 | grep -v 'unsandboxed' >&2 || true)
  ls "$cache"/dl/linux-image-*.deb >/dev/null 2>&1 || { log "download of $kpkg failed"; exit 1; }
  dpkg -x "$cache"/dl/linux-image-*.deb "$cache/kernel"
  # trixie's kernel package ships its modules under usr/lib (merged /usr)
  if [[ -d "$cache/kernel/usr/lib/modules" && ! -d "$cache/kernel/lib/modules" ]]; then
    mkdir -p "$cache/kernel/lib"; mv "$cache/kernel/usr/lib/modules" "$cache/kernel/lib/modules"
  fi
  kver="$(ls "$cache/kernel/lib/modules")"
  echo "$kver" > "$cache/kver"
  rm -rf "$cache/dl"
  touch "$cache/kernel.stamp"
fi
kver="$(cat "$cache/kver")"

# ---- root file system ----
# The stamp names the package list: a root made with another list is made again.
if [[ "$suite" == bookworm ]]; then
  packages=iproute2,kmod,nvme-cli,fio,procps,util-linux,rdma-core,ibverbs-utils,ibverbs-providers,librdmacm1,rdmacm-utils,libaio1,libfuse2,fuse3
else
  packages=iproute2,kmod,nvme-cli,fio,procps,util-linux,ktls-utils,keyutils
fi
if [[ "$(cat "$cache/rootfs.stamp" 2>/dev/null)" != "$packages" ]]; then
  rm -f "$cache/modules.stamp"
  log "debootstrap $suite minbase into $cache/rootfs (about a minute)"
  rm -rf "$cache/rootfs"
  debootstrap --variant=minbase \
    --include="$packages" \
    "$suite" "$cache/rootfs" "$mirror" >"$cache/debootstrap.log" 2>&1 || { log "debootstrap failed; see $cache/debootstrap.log"; exit 1; }
  echo "$packages" > "$cache/rootfs.stamp"
fi
if [[ ! -f "$cache/modules.stamp" ]]; then
  rm -rf "$cache/rootfs/lib/modules/$kver"
  mkdir -p "$cache/rootfs/lib/modules"
  cp -a "$cache/kernel/lib/modules/$kver" "$cache/rootfs/lib/modules/"
  chroot "$cache/rootfs" /sbin/depmod "$kver"  # the root's own kmod: the host may have none
  # The host's JDK is shared read-only into the guest; its conf links point into /etc/java-17-openjdk.
  [[ -d /etc/java-17-openjdk ]] && cp -a /etc/java-17-openjdk "$cache/rootfs/etc/"
  mkdir -p "$cache/rootfs/jbof" "$cache/rootfs/results" "$cache/rootfs/usr/lib/jvm"
  touch "$cache/modules.stamp"
fi

# ---- Soft-iWARP (JBOF_VM_SIW=1) ----
# Debian's kernels ship rdma_rxe but not siw. Built once for the guest kernel, out of tree, from Debian's
# linux-source and linux-headers packages of the same version, and installed into the root's updates/.
if [[ -n "${JBOF_VM_SIW:-}" && "$suite" == bookworm && "${JBOF_VM_KERNEL:-stable}" == stable ]]; then
  if [[ ! -f "$cache/siw.stamp" ]]; then
    b="$cache/siw-build"; rm -rf "$b"; mkdir -p "$b/dl" "$b/root"
    missing=(); for t in make gcc-12 xz; do command -v $t >/dev/null || missing+=("${t/xz/xz-utils}"); done
    if ((${#missing[@]})); then apt_update; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null; fi
    apt_update
    series="${kver%%.0-*}"   # 6.1
    hver="$(apt-cache show "linux-headers-$kver" 2>/dev/null | awk '/^Version:/{print $2; exit}')"
    [[ -n "$hver" ]] || { log "no linux-headers-$kver package: cannot build siw.ko for the guest kernel"; exit 1; }
    log "building siw.ko for $kver from linux-source-$series $hver (download about 150 MB, once)"
    (cd "$b/dl" && timeout 600 apt-get download -qq "linux-headers-$kver=$hver" "linux-headers-${kver%-*}-common=$hver" \
        "linux-kbuild-$series" "linux-source-$series=$hver" 2>&1 | grep -v unsandboxed >&2 || true)
    for d in "$b"/dl/*.deb; do dpkg -x "$d" "$b/root"; done
    hdr="$b/root/usr/src/linux-headers-$kver"
    [[ -d "$hdr" && -f "$b/root/usr/src/linux-source-$series.tar.xz" ]] || { log "download of the headers or source failed; see above"; exit 1; }
    # The headers' Makefile and links name /usr/src and /usr/lib absolutely: point them into the unpacked tree.
    sed -i "s#/usr/src/linux-headers#$b/root/usr/src/linux-headers#g" "$hdr/Makefile"
    for l in "$hdr"/*; do
      if [[ -L "$l" && "$(readlink "$l")" == /* ]]; then ln -sfn "$b/root$(readlink "$l")" "$l"; fi
    done
    tar -xJf "$b/root/usr/src/linux-source-$series.tar.xz" -C "$b" "linux-source-$series/drivers/infiniband/sw/siw"
    if ! timeout 900 make -s -C "$hdr" M="$b/linux-source-$series/drivers/infiniband/sw/siw" CONFIG_RDMA_SIW=m CC=gcc-12 -j2 modules \
        > "$b/make.log" 2>&1; then
      tail -20 "$b/make.log" >&2; log "building siw.ko failed (full log: $b/make.log)"; exit 1
    fi
    cp "$b/linux-source-$series/drivers/infiniband/sw/siw/siw.ko" "$cache/siw.ko"
    rm -rf "$b"
    touch "$cache/siw.stamp"
  fi
  if ! cmp -s "$cache/siw.ko" "$cache/rootfs/lib/modules/$kver/updates/siw.ko"; then
    mkdir -p "$cache/rootfs/lib/modules/$kver/updates"
    cp "$cache/siw.ko" "$cache/rootfs/lib/modules/$kver/updates/siw.ko"
    chroot "$cache/rootfs" /sbin/depmod "$kver"
  fi
fi

# ---- initramfs ----
if [[ ! -f "$cache/initrd.stamp" || "$root/scripts/vm/initramfs-init" -nt "$cache/initrd.gz" ]]; then
  log "building initramfs"
  ir="$cache/initramfs"
  rm -rf "$ir"; mkdir -p "$ir"/{bin,sbin,proc,sys,dev,newroot,modules}
  cp "$(command -v busybox)" "$ir/bin/busybox"
  for m in virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci netfs fscache 9pnet 9pnet_virtio 9p; do
    f="$(find "$cache/kernel/lib/modules/$kver" -name "$m.ko*" | head -1)"
    if [[ -n "$f" ]]; then
      case "$f" in
        *.xz) xz -dc "$f" > "$ir/modules/$m.ko" ;;
        *.zst) zstd -qdc "$f" > "$ir/modules/$m.ko" ;;
        *) cp "$f" "$ir/modules/$m.ko" ;;
      esac
      echo "$m" >> "$ir/modules/order"
    fi
  done
  cp "$root/scripts/vm/initramfs-init" "$ir/init"
  chmod +x "$ir/init"
  (cd "$ir" && find . | cpio -o -H newc --quiet | gzip -1) > "$cache/initrd.gz"
  touch "$cache/initrd.stamp"
fi
log "ready: kernel $kver, root $cache/rootfs"
