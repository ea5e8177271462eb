#!/usr/bin/env bash
# The lab from a checkout under /tmp (issue 14). The VM mounts its own tmpfs
# on /tmp, /var/tmp, /run and /dev/shm, so tools/lab/run must share again
# whatever of the caller's lies there. On the host:
#   1. a copy of this checkout (its tracked and new files) under /tmp, and
#      rpm installed from BUILD_DIR into a prefix under /var/tmp;
#   2. the outside project tests/install/consumer built in the copy's own
#      build/ folder against that prefix (its RUNPATH points into /var/tmp);
#   3. tools/lab/run --print-shares, run from the copy, must name both;
#   4. the copy's tools/lab/run boots a VM (ADR NVDIMM) and runs the copy's
#      tests/lab/tmp_checkout.sh --inside there, from the copy's folder.
# Inside the VM (--inside CONSUMER PREFIX): the consumer runs (found through
# its RUNPATH), and the installed rpm-probe (RUNPATH $ORIGIN/../lib) must
# see the VM's NVDIMM (memory_controller), which the host does not have.
# Control: without the bind mounts in tools/lab/initramfs-init the VM
# cannot enter the copy ("the VM cannot enter the current folder ...").
# Usage: tmp_checkout.sh SOURCE_DIR BUILD_DIR
#        tmp_checkout.sh --inside CONSUMER PREFIX       (in the VM)
set -euo pipefail

if [ "${1:-}" = --inside ]; then
  consumer=$2 prefix=$3
  echo "inside the VM, in $PWD (kernel $(uname -r))"
  "$consumer" /dev/shm/tmp-checkout.pool
  domain=$("$prefix/bin/rpm-probe" --json | jq -r '.regions[0].persistence_domain')
  echo "installed rpm-probe: region domain $domain"
  [ "$domain" = memory_controller ] || { echo "expected the VM's ADR NVDIMM (memory_controller)"; exit 1; }
  echo "tmp-checkout: the checkout, its build folder and the prefix were all seen inside"
  exit 0
fi

src=$(cd "$1" && pwd) build=$(cd "$2" && pwd)
work=$(mktemp -d /tmp/rpm-lab-checkout.XXXXXX)
prefix_top=$(mktemp -d /var/tmp/rpm-lab-prefix.XXXXXX)
trap 'rm -rf "$work" "$prefix_top"' EXIT
clone=$work/clone prefix=$prefix_top/prefix
mkdir -p "$clone"

# 1. The checkout as a clone would have it (with this one's uncommitted work).
if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
  (cd "$src" && git ls-files -z -co --exclude-standard | cpio -0pdm --quiet "$clone")
else
  tar -C "$src" --exclude='./build*' -cf - . | tar -C "$clone" -xf -
fi
cmake --install "$build" --prefix "$prefix" >/dev/null

# 2. A build folder inside the clone, its binary's RUNPATH under /var/tmp.
cmake -S "$clone/tests/install/consumer" -B "$clone/build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$clone/build" >/dev/null
echo "consumer RUNPATH: $(readelf -d "$clone/build/consumer" | sed -n 's/.*(R[UN]*PATH).*\[\(.*\)\]$/\1/p')"

# 3. What tools/lab/run will share, found from the checkout and the command.
cd "$clone"
shares=$(tools/lab/run --print-shares -- build/consumer)
echo "shares: $(tr '\n' ' ' <<<"$shares")"
grep -qx "$work" <<<"$shares" || { echo "FAILED: the checkout's folder $work is not shared"; exit 1; }
grep -qx "$prefix_top" <<<"$shares" || { echo "FAILED: the consumer's RUNPATH folder $prefix_top is not shared"; exit 1; }

# 4. The VM, from the clone.
tools/lab/run --pm adr --timeout 600 -- tests/lab/tmp_checkout.sh --inside build/consumer "$prefix"
