#!/usr/bin/env bash
# Makes (once) the lab's Debian 13 (trixie) root file system: mmdebstrap
# from Debian's own archive, checked against debian-archive-keyring (which
# in Debian 12 carries trixie's keys), into the lab cache. It holds its own
# kernel (trixie's linux-image-amd64, 6.12), rdma-core 56 (ibv_wr_flush),
# librpma 1.3, perftest and what rpm builds with, and keeps its own apt
# state inside it: the machine's apt sources are never touched.
# Usage: userland.sh CACHE_DIR trixie
#   prints the root folder, its kernel's version.
#   RPM_LAB_MIRROR: the Debian mirror (default http://deb.debian.org/debian).
set -euo pipefail
cache=$1 suite=${2:-}
[ "$suite" = trixie ] || { echo "lab: the only other userland is trixie, not '$suite'" >&2; exit 2; }
mirror=${RPM_LAB_MIRROR:-http://deb.debian.org/debian}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg

packages=(
  linux-image-amd64
  build-essential cmake ninja-build pkg-config ccache
  libpmem-dev libpmem2-dev libibverbs-dev librdmacm-dev rdma-core ibverbs-providers librpma-dev
  libboost-dev libssl-dev openssl zlib1g-dev liburing-dev
  libgtest-dev libgmock-dev libbenchmark-dev nlohmann-json3-dev libcli11-dev libfmt-dev
  iproute2 kmod ndctl jq perftest fio procps python3 nftables file
)
# A new package list makes a new root: the folder is named by its hash.
id=$(printf '%s\n' "$suite" "${packages[@]}" | sha1sum | cut -c1-12)
root=$cache/userland-$suite-$id

if [ ! -f "$root/.ready" ]; then
  command -v mmdebstrap >/dev/null || { echo "lab: mmdebstrap not found (tools/install-deps --lab installs it)" >&2; exit 1; }
  [ -f "$keyring" ] || { echo "lab: $keyring not found (debian-archive-keyring)" >&2; exit 1; }
  mkdir -p "$cache" 2>/dev/null && [ -w "$cache" ] ||
    { echo "lab: the cache folder $cache cannot be created or written (run as root, or set RPM_LAB_CACHE)" >&2; exit 1; }
  # About 1.5 GB once unpacked; 3 GB leaves room for the build folder.
  free_kb=$(df -Pk "$cache" | awk 'NR == 2 { print $4 }')
  [ "$free_kb" -ge $((3 * 1024 * 1024)) ] ||
    { echo "lab: $(df -h --output=avail "$cache" | tail -1 | tr -d ' ') free in $cache; the $suite userland needs about 3 GB" >&2; exit 1; }
  command -v curl >/dev/null && { curl -fsS -m 20 -o /dev/null "$mirror/dists/$suite/Release" ||
    { echo "lab: cannot reach $mirror/dists/$suite/Release (no network to Debian's archive? set RPM_LAB_MIRROR)" >&2; exit 1; }; }
  rm -rf "$root.new"
  echo "lab: making the $suite userland in $root (once: about 600 MB to download)" >&2
  # --variant=apt: essential packages, apt, and what is listed; no
  # recommends. The kernel's own initramfs is not wanted (the lab makes its
  # own from the modules): removed once made.
  mmdebstrap --variant=apt --keyring="$keyring" --include="$(IFS=,; echo "${packages[*]}")" \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
    --aptopt='APT::Install-Recommends "false"' \
    --customize-hook='rm -f "$1"/boot/initrd.img-*' \
    "$suite" "$root.new" "$mirror" >&2 ||
    { echo "lab: mmdebstrap of $suite failed (its messages are above; $(df -h --output=avail "$cache" | tail -1 | tr -d ' ') free in $cache)" >&2; rm -rf "$root.new"; exit 1; }
  mv "$root.new" "$root"
  touch "$root/.ready"
fi
version=$(ls "$root/lib/modules" | sort -V | tail -1)
[ -n "$version" ] && [ -f "$root/boot/vmlinuz-$version" ] || { echo "lab: $root has no kernel" >&2; exit 1; }
echo "$root $version"
