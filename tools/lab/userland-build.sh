#!/usr/bin/env bash
# Builds rpm against another lab userland (its compiler, rdma-core 56,
# librpma 1.3): inside its root (userland.sh) by chroot, with this checkout
# and the compiler cache bind-mounted at the same paths in a mount namespace
# of its own, so nothing stays mounted afterwards. The build folder lies in
# the checkout (default build-trixie/), and tools/lab/run --userland trixie
# runs its binaries.
# Usage: tools/lab/userland-build.sh [--suite trixie] [--dir DIR] [TARGET...]
#   no TARGET: everything. RPM_LAB_CACHE: the lab cache (/var/cache/rpm-lab).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
suite=trixie dir=
while [ $# -gt 0 ]; do
  case "$1" in
    --suite) suite=${2:?--suite needs a value}; shift 2 ;;
    --dir) dir=${2:?--dir needs a value}; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "userland-build: unknown option '$1'" >&2; exit 2 ;;
    *) break ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "userland-build: needs root (chroot, bind mounts)" >&2; exit 1; }
dir=${dir:-$repo/build-$suite}
case "$dir" in /*) ;; *) dir=$PWD/$dir ;; esac
case "$dir/" in "$repo"/*) ;; *) echo "userland-build: --dir must lie in the checkout ($repo): only it is mounted in the root" >&2; exit 2 ;; esac
cache=${RPM_LAB_CACHE:-/var/cache/rpm-lab}
read -r root _ < <("$here/userland.sh" "$cache" "$suite") || { echo "userland-build: no $suite userland (above)" >&2; exit 1; }
ccache_dir=${RPM_CCACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/rpm/ccache}
mkdir -p "$ccache_dir" "$root$repo" "$root$ccache_dir" "$dir"
# The same configuration tools/test builds (warnings are errors, line
# tables), and the same compiler cache (its key holds the compiler, so
# trixie's objects never stand in for bookworm's).
unshare -m --propagation private bash -euo pipefail -c '
  root=$1 repo=$2 cc=$3 dir=$4; shift 4
  mount --bind "$repo" "$root$repo"
  mount --bind "$cc" "$root$cc"
  mount -t proc proc "$root/proc"
  mount --bind /dev "$root/dev"
  chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
    cmake -S "$repo" -B "$dir" -G Ninja -DRPM_WERROR=ON -DRPM_DEBUG_INFO=lines -DRPM_CCACHE_DIR="$cc" >/dev/null
  chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
    cmake --build "$dir" -j "$(nproc)" ${1:+--target "$@"}
' userland-build "$root" "$repo" "$ccache_dir" "$dir" "$@"
