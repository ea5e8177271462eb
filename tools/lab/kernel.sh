#!/usr/bin/env bash
# Downloads (once) the stock Debian kernel that linux-image-amd64 depends on,
# unpacks it into the lab cache and indexes its modules.
# Usage: kernel.sh CACHE_DIR [stable|backports]
#   prints the unpacked folder and the version.
#   stable (default): the machine's own apt sources (bookworm, 6.1).
#   backports: bookworm-backports (6.12, whose rxe has atomic write and
#   FLUSH), through an apt state of the lab's own under CACHE_DIR/apt-backports
#   (its sources.list, package lists and downloads): the machine's apt
#   sources are never touched.
#   RPM_LAB_KERNEL_PKG=linux-image-...   picks another package of that suite.
set -euo pipefail
cache=$1 suite=${2:-stable}
mkdir -p "$cache" 2>/dev/null && [ -w "$cache" ] ||
  { echo "lab: the cache folder $cache cannot be created or written (run as root, or set RPM_LAB_CACHE to a writable folder)" >&2; exit 1; }

apt_opts=()
case "$suite" in
  stable) ;;
  backports)
    state=$cache/apt-backports
    mkdir -p "$state/lists/partial" "$state/archives/partial"
    echo "deb http://deb.debian.org/debian bookworm-backports main" >"$state/sources.list"
    apt_opts=(-o "Dir::Etc::SourceList=$state/sources.list" -o Dir::Etc::SourceParts=- -o "Dir::State::Lists=$state/lists"
              -o "Dir::Cache=$state" -o "Dir::Cache::Archives=$state/archives" -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache=)
    ;;
  *) echo "lab: kernel suite '$suite' is neither stable nor backports" >&2; exit 2 ;;
esac

package=${RPM_LAB_KERNEL_PKG:-}
resolve() {  # the meta package names the real one; its version is the kernel's ABI name
  apt-cache "${apt_opts[@]}" depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}'
}
if [ -z "$package" ]; then
  package=$(resolve || true)
  # A fresh machine (or a fresh lab apt state) may have no package lists yet.
  [ -n "$package" ] || { apt-get "${apt_opts[@]}" update -qq >&2 && package=$(resolve || true); }
fi
[ -n "$package" ] || { echo "lab: cannot tell which kernel package linux-image-amd64 depends on ($suite), even after apt-get update (is Debian's mirror reachable? is this Debian 12 on amd64?); RPM_LAB_KERNEL_PKG=linux-image-VERSION-amd64 names one" >&2; exit 1; }
version=${package#linux-image-}
tree=$cache/kernel-$version

if [ ! -f "$tree/.ready" ]; then
  deb=$(ls "$cache"/"$package"_*.deb 2>/dev/null | head -1 || true)
  if [ -z "$deb" ]; then
    echo "lab: downloading $package" >&2
    # apt's sandbox user cannot write to root's cache folder: download as root on purpose.
    (cd "$cache" && apt-get "${apt_opts[@]}" download -o APT::Sandbox::User=root "$package" >&2) ||
      { echo "lab: apt-get download $package failed (no network to Debian's mirror, an outdated package list, or a full disk: $(df -h --output=avail "$cache" | tail -1 | tr -d ' ') free in $cache); try apt-get update, or put ${package}_*.deb into $cache by hand" >&2; exit 1; }
    deb=$(ls "$cache"/"$package"_*.deb | head -1)
  fi
  rm -rf "$tree"
  dpkg -x "$deb" "$tree" && depmod -b "$tree" "$version" ||
    { echo "lab: cannot unpack $deb into $tree (a full disk? it needs about 500 MB)" >&2; rm -rf "$tree"; exit 1; }
  touch "$tree/.ready"
fi
[ -f "$tree/boot/vmlinuz-$version" ] || { echo "lab: $tree has no vmlinuz-$version" >&2; exit 1; }
echo "$tree $version"
