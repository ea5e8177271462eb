#!/usr/bin/env bash
# tools/lab/run's answer to a guest kernel panic (docs/lab.md, "Guest kernel
# panics"): the trace shown in full and the command run once more in a
# fresh VM, once.
#   retried  the command panics the kernel (sysrq c) in the first VM only,
#            leaving a mark in the run's artifacts folder, which the second
#            VM sees: the run must pass, say it panicked, and show the oops.
#   control  it panics in every VM: the run must fail (status 125), with the
#            panic shown, after exactly two VMs.
# Usage: tests/lab/panic_retry.sh CHECKOUT retried|control
set -euo pipefail
src=$1
mode=$2
# /var/tmp: the VM sees the host's /var/tmp (its /tmp is a tmpfs of its own).
work=$(mktemp -d /var/tmp/rpm-panic-retry.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "panic-retry[$mode]: $*" >&2; exit 1; }

# Inside the VM: RPM_LAB_OUT is the run's artifacts folder, on the host.
cat >"$work/panic.sh" <<'VM'
#!/bin/bash
echo "vm: boot $(ls "$RPM_LAB_OUT" | grep -c '^boot-' || true)"
: >"$RPM_LAB_OUT/boot-$RANDOM$RANDOM"
if [ "$1" = control ] || [ ! -e "$RPM_LAB_OUT/panicked" ]; then
  : >"$RPM_LAB_OUT/panicked"; sync
  echo c >/proc/sysrq-trigger
fi
echo "vm: the command ran to its end"
VM
chmod +x "$work/panic.sh"
set +e
RPM_LAB_ARTIFACTS=$work/out "$src/tools/lab/run" --timeout 300 -- "$work/panic.sh" "$mode" >"$work/log" 2>&1
status=$?
set -e
cat "$work/log"
boots=$(ls "$work/out" 2>/dev/null | grep -c '^boot-' || true)
grep -q 'THE GUEST KERNEL PANICKED' "$work/log" || fail "the panic was not reported"
grep -q 'sysrq' "$work/log" || fail "the oops (sysrq) was not shown"
[ "$boots" = 2 ] || fail "$boots VMs ran the command, not 2"
case "$mode" in
  retried)
    [ "$status" = 0 ] || fail "status $status after a panic and a clean second run"
    grep -q 'vm: the command ran to its end' "$work/log" || fail "the second VM did not run the command to its end" ;;
  control)
    [ "$status" = 125 ] || fail "status $status: a second panic must fail the run (125)" ;;
  *) fail "mode $mode: retried or control" ;;
esac
echo "panic-retry[$mode]: passed ($boots VMs, status $status)"
