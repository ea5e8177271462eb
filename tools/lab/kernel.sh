#!/usr/bin/env bash
# Downloads (once) the stock Debian kernel that linux-image-amd64 depends on,
# unpacks it into the lab cache and indexes its modules.
# Usage: kernel.sh CACHE_DIR     prints the unpacked folder and the version
#   RPM_LAB_KERNEL_PKG=linux-image-...   picks another package (for example
#   the bookworm-backports 6.12 kernel, if that suite is configured).
set -euo pipefail
cache=$1
mkdir -p "$cache"

package=${RPM_LAB_KERNEL_PKG:-}
resolve() {  # the meta package names the real one; its version is the kernel's ABI name
  apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}'
}
if [ -z "$package" ]; then
  package=$(resolve)
  # A fresh machine may have no package lists yet.
  [ -n "$package" ] || { apt-get update -qq >&2 && package=$(resolve); }
fi
[ -n "$package" ] || { echo "lab: cannot resolve the kernel package of linux-image-amd64 (run apt-get update?)" >&2; exit 1; }
version=${package#linux-image-}
tree=$cache/kernel-$version

if [ ! -f "$tree/.ready" ]; then
  deb=$(ls "$cache"/"$package"_*.deb 2>/dev/null | head -1 || true)
  if [ -z "$deb" ]; then
    echo "lab: downloading $package" >&2
    # apt's sandbox user cannot write to root's cache folder: download as root on purpose.
    (cd "$cache" && apt-get download -o APT::Sandbox::User=root "$package" >&2)
    deb=$(ls "$cache"/"$package"_*.deb | head -1)
  fi
  rm -rf "$tree"
  dpkg -x "$deb" "$tree"
  depmod -b "$tree" "$version"
  touch "$tree/.ready"
fi
[ -f "$tree/boot/vmlinuz-$version" ] || { echo "lab: $tree has no vmlinuz-$version" >&2; exit 1; }
echo "$tree $version"
