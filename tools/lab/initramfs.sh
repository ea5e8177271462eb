#!/usr/bin/env bash
# Builds the lab's initramfs for one unpacked kernel: busybox, the modules
# that mount the host's root over 9p, and init (initramfs-init).
# Usage: initramfs.sh KERNEL_TREE VERSION OUT.cpio.gz
set -euo pipefail
tree=$1 version=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)
busybox=/bin/busybox
[ -x "$busybox" ] && "$busybox" --list | grep -qx switch_root ||
  { echo "lab: needs busybox-static (/bin/busybox with switch_root)" >&2; exit 1; }

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,dev,proc,sys,newroot,modules}
cp "$busybox" "$stage/bin/busybox"
cp "$here/initramfs-init" "$stage/init"
chmod +x "$stage/init"

# Module files in load order, each once: what 9p and virtio_pci need.
: >"$stage/modules/order"
for m in virtio_pci 9pnet_virtio 9p; do
  modprobe -C /dev/null -d "$tree" -S "$version" --show-depends "$m" | awk '$1 == "insmod" {print $2}'
done | awk '!seen[$0]++' | while read -r ko; do
  # busybox's insmod takes plain .ko files; newer Debian kernels (the 6.12
  # of bookworm-backports) ship them compressed.
  name=$(basename "$ko")
  case "$name" in
    *.ko.xz) name=${name%.xz}; xz -dc "$ko" >"$stage/modules/$name" ;;
    *.ko.zst) name=${name%.zst}; zstd -qdc "$ko" >"$stage/modules/$name" ;;
    *) cp "$ko" "$stage/modules/" ;;
  esac
  echo "$name" >>"$stage/modules/order"
done

(cd "$stage" && find . | cpio -o -H newc --quiet | gzip -1) >"$out.part"
mv "$out.part" "$out"
