#!/bin/bash
# tools/lab/ab/tcg_user.sh: runs on the HOST. rpm's client path under the
# lab's CPU emulation without the VM: tests/rdma_probe (rpm's client and
# server over the in-process fake fabric: no kernel, no device) under
# qemu-user's TCG (qemu-x86_64 -cpu max, Debian's qemu-user), pinned to
# CPU 0, the builds alternating. TCG is what makes a call cost tens of
# nanoseconds in the lab (docs/benchmarks-history.md, "A call costs more than its
# instructions in the lab"); user-mode emulation has no softmmu and no
# guest kernel, so the figures are lower than in the VM, but they repeat
# within a few per cent where the VM's move by 10% to 30%.
#   tools/lab/ab/tcg_user.sh OLD_BUILD NEW_BUILD [OPS] [ROUNDS] [-- probe flags]
#   e.g. tools/lab/ab/tcg_user.sh /tmp/old/build build read,write,persist 3 -- callback
# Prints, per operation, each build's median microseconds per operation
# and new/old.
set -euo pipefail
usage="usage: tools/lab/ab/tcg_user.sh OLD_BUILD NEW_BUILD [OPS] [ROUNDS] [-- probe flags]"
[ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }
old=$1 new=$2; shift 2
ops=read,write,persist rounds=3
[ $# -gt 0 ] && [ "$1" != -- ] && { ops=$1; shift; }
[ $# -gt 0 ] && [ "$1" != -- ] && { rounds=$1; shift; }
[ "${1:-}" = -- ] && shift
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "tcg_user.sh: ROUNDS must be a positive number, not '$rounds'" >&2; exit 2; }
for op in ${ops//,/ }; do
  case $op in read|write|persist|send_flush) ;; *) echo "tcg_user.sh: unknown operation '$op' (read, write, persist, send_flush)" >&2; exit 2 ;; esac
done
command -v qemu-x86_64 > /dev/null || { echo "tcg_user.sh: qemu-x86_64 missing (tools/install-deps --lab)" >&2; exit 1; }
for b in "$old" "$new"; do
  [ -x "$b/tests/rdma_probe" ] || { echo "tcg_user.sh: no $b/tests/rdma_probe (build it first)" >&2; exit 1; }
done
median() { sort -n | awk '{v[NR]=$1} END{print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
run() {  # build op [flags] -> microseconds per operation
  local build=$1 op=$2; shift 2
  taskset -c 0 qemu-x86_64 -cpu max "$(cd "$build" && pwd)/tests/rdma_probe" "$op" 100000 "$@" 2>&1 |
    sed -n 's/.*operations, \([0-9.]*\) us each.*/\1/p' || true
}
for op in ${ops//,/ }; do
  o=() n=()
  for _ in $(seq 1 "$rounds"); do
    o+=("$(run "$old" "$op" "$@")"); n+=("$(run "$new" "$op" "$@")")
    [ -n "${o[-1]}" ] && [ -n "${n[-1]}" ] ||
      { echo "tcg_user.sh: rdma_probe $op $* printed no figure (run it by hand to see why)" >&2; exit 1; }
  done
  mo=$(printf '%s\n' "${o[@]}" | median); mn=$(printf '%s\n' "${n[@]}" | median)
  awk -v op="$op" -v o="$mo" -v n="$mn" -v flags="$*" \
    'BEGIN{printf "%-8s %-10s old %6.2f us  new %6.2f us  new/old %.3f\n", op, flags, o, n, n/o}'
done
