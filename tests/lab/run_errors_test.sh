#!/usr/bin/env bash
# tools/lab/run where the lab cannot run, without booting anything: each
# failure must end with status 125 (2 for a bad option) and say what
# failed, why and what to do, never an empty "VM set-up failed:".
#   no QEMU                 RPM_LAB_QEMU names a binary that is not there
#   no kernel package       RPM_LAB_KERNEL_PKG names one Debian does not have
#   an unwritable cache     RPM_LAB_CACHE under /proc
#   three failed boots      a fake cache (kernel and initramfs files present)
#                           and a "QEMU" that exits at once
#   a bad --share           exit 2 with the folder named
#   no VM left running      a "QEMU" that hangs, deaf to TERM, is gone after
#                           the run is timed out from outside and after
#                           three stuck boots
# And the folders it shares (--print-shares): those under /tmp, /var/tmp,
# /run and /dev/shm that the checkout, the current folder, the arguments,
# an ELF argument's RUNPATH and RPM_* settings name; nothing else.
# Usage: run_errors_test.sh SOURCE_DIR
set -uo pipefail
src=$(cd "$1" && pwd)
run=$src/tools/lab/run
work=$(mktemp -d /tmp/rpm-lab-errors.XXXXXX)
trap 'rm -rf "$work"' EXIT
failures=0
check() {  # NAME WANT_STATUS WANT_TEXT... -- COMMAND...: status and every text in stderr
  local name=$1 want=$2; shift 2
  local texts=()
  while [ "$1" != -- ]; do texts+=("$1"); shift; done
  shift
  local status=0
  "$@" >"$work/out" 2>"$work/err" </dev/null || status=$?
  local ok=1
  [ "$status" = "$want" ] || { echo "$name: status $status, expected $want"; ok=0; }
  for t in "${texts[@]}"; do
    grep -qF -- "$t" "$work/err" || { echo "$name: stderr lacks '$t'"; ok=0; }
  done
  if [ "$ok" = 1 ]; then echo "$name: ok ($(grep -m1 'lab:' "$work/err"))"
  else echo "--- stderr ---"; cat "$work/err"; failures=$((failures + 1)); fi
}

check no-qemu 125 "rpm-no-such-qemu is not installed" "why:" "what to do: tools/install-deps --lab" -- \
  env RPM_LAB_QEMU=rpm-no-such-qemu "$run" -- true

check no-kernel-package 125 "apt-get download linux-image-0.0.0-rpm-none-amd64 failed" \
  "no kernel for the VM in $work/cache" "what to do:" -- \
  env RPM_LAB_QEMU=true RPM_LAB_CACHE="$work/cache" RPM_LAB_KERNEL_PKG=linux-image-0.0.0-rpm-none-amd64 "$run" -- true

check unwritable-cache 125 "cannot be created or written" "set RPM_LAB_CACHE" -- \
  env RPM_LAB_QEMU=true RPM_LAB_CACHE=/proc/rpm-lab-cache "$run" -- true

# A cache that needs no download: an unpacked "kernel" and its initramfs.
v=0.0.0-rpm-fake
mkdir -p "$work/fake/kernel-$v/boot"
touch "$work/fake/kernel-$v/.ready" "$work/fake/kernel-$v/boot/vmlinuz-$v"
sum=$(cat "$src/tools/lab/initramfs-init" "$src/tools/lab/initramfs.sh" | sha1sum | cut -c1-12)
touch "$work/fake/initramfs-$v-$sum.cpio.gz"
check three-boots 125 "boot attempt 3 failed" "3 boots failed (the last: QEMU exited with status 1" \
  "what to do: raise RPM_LAB_BOOT_TIMEOUT" -- \
  env RPM_LAB_QEMU=false RPM_LAB_CACHE="$work/fake" RPM_LAB_KERNEL_PKG=linux-image-$v "$run" -- true

# A VM that hangs must not outlive the run, however it ends. The "QEMU"
# here writes its -pidfile and sleeps, deaf to TERM (a QEMU stuck under TCG
# may be): the run kills it by that pid. Before this check a run that was
# itself timed out killed timeout(1), the wrapper bounding QEMU, and left
# QEMU running with nothing to stop it.
cat >"$work/hung-qemu" <<'QEMU'
#!/usr/bin/env bash
trap '' TERM
echo $$ >>"$RPM_TEST_PIDS"
while [ $# -gt 0 ]; do [ "$1" = -pidfile ] && echo $$ >"$2"; shift; done
while :; do sleep 1; done
QEMU
chmod +x "$work/hung-qemu"
no_orphans() {  # NAME: every hung "QEMU" the run started is gone
  local name=$1 pid alive=
  sleep 0.5
  # A zombie is over: it waits only for init (which here may not reap) to read its status.
  while read -r pid; do
    [ -e "/proc/$pid" ] && [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ] &&
      { alive="$alive $pid"; kill -9 "$pid"; }
  done <"$work/pids"
  if [ -z "$alive" ] && [ -s "$work/pids" ]; then echo "$name: ok ($(wc -l <"$work/pids") VM(s) started, none left running)"
  else echo "$name: VMs left running:${alive:- (none was started)}"; failures=$((failures + 1)); fi
  : >"$work/pids"
}
: >"$work/pids"
# The run timed out from outside (TERM to tools/lab/run). A grace of 1 s
# after TERM instead of 5: the check is that the pid is killed, not when.
export RPM_LAB_STOP_GRACE=1
env RPM_LAB_QEMU="$work/hung-qemu" RPM_TEST_PIDS="$work/pids" RPM_LAB_CACHE="$work/fake" \
  RPM_LAB_KERNEL_PKG=linux-image-$v timeout 3 "$run" -- true >/dev/null 2>&1 </dev/null
no_orphans timed-out-run
# Every boot stuck (the boot watchdog's three attempts).
env RPM_LAB_QEMU="$work/hung-qemu" RPM_TEST_PIDS="$work/pids" RPM_LAB_CACHE="$work/fake" \
  RPM_LAB_KERNEL_PKG=linux-image-$v RPM_LAB_BOOT_TIMEOUT=1 "$run" -- true >/dev/null 2>&1 </dev/null
no_orphans stuck-boots

unset RPM_LAB_STOP_GRACE
check bad-grace 2 "RPM_LAB_STOP_GRACE must be a positive number of seconds, not 'soon'" -- \
  env RPM_LAB_STOP_GRACE=soon "$run" -- true
check bad-share 2 "--share $work/none: no such folder" -- "$run" --share "$work/none" -- true
check bad-kernel 2 "--kernel must be stable or backports, not 'sid'" -- "$run" --kernel sid -- true
check bad-clock 2 "--clock must be tsc or hpet, not 'kvm'" -- "$run" --clock kvm -- true

# Shares: a checkout copy under /tmp, a build folder beside it, a library
# folder under /var/tmp named only by an ELF argument's RUNPATH, a folder
# under /dev/shm named only by an RPM_* setting, and a folder outside.
mkdir -p "$work/clone/tools" "$work/outside"
cp -r "$src/tools/lab" "$work/clone/tools/"
libtop=$(mktemp -d /var/tmp/rpm-lab-errors-lib.XXXXXX)
shmtop=$(mktemp -d /dev/shm/rpm-lab-errors.XXXXXX)
trap 'rm -rf "$work" "$libtop" "$shmtop"' EXIT
echo 'int main() { return 0; }' >"$work/main.c"
cc -o "$work/outside/app" "$work/main.c" -Wl,-rpath,"$libtop/lib" || { echo "cc failed"; exit 1; }
want=$(printf '%s\n' "$work" "$libtop" "$shmtop" | sort)
got=$(cd / && RPM_SOME_FILE=$shmtop/x.json "$work/clone/tools/lab/run" --print-shares -- "$work/outside/app" | sort)
# The folder itself need not exist for an RPM_* setting, only its top.
if [ "$got" = "$want" ]; then echo "shares: ok ($(tr '\n' ' ' <<<"$got"))"
else echo "shares: got [$got], expected [$want]"; failures=$((failures + 1)); fi
# A path outside the hidden places is never shared: the VM sees it anyway.
# Only this checkout is, when it lies under one (a clone under /tmp).
want=
for root in /tmp /var/tmp /run /dev/shm; do
  case "$src" in "$root"/*) rest=${src#"$root"/}; want=$root/${rest%%/*} ;; esac
done
got=$(cd / && "$run" --print-shares -- /etc/hostname)
if [ "$got" = "$want" ]; then echo "no-shares: ok ([$got])"
else echo "no-shares: got [$got], expected [$want]"; failures=$((failures + 1)); fi

[ "$failures" = 0 ] || { echo "$failures check(s) failed"; exit 1; }
echo "tools/lab/run: every failure named its cause; shares as expected"
