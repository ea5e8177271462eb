#!/usr/bin/env bash
# rpm-nvmf's DH-HMAC-CHAP options as processes on 127.0.0.1 (NVMe/TCP):
#   1. gen-secret: prints a DHHC-1 secret that nvme-cli's check-dhchap-key
#      (an independent implementation) accepts, and the host's secret is one
#      nvme-cli's gen-dhchap-key made; writes a 0600 file, never
#      replaces one, refuses bad lengths and transforms (exit 2);
#   2. a target with --dhchap-host: the host with its secret (and the
#      controller's) writes and verifies; a wrong secret, none, or a wrong
#      controller secret fail with exit 1 and say why; the target's exit
#      line counts the successes and failures;
#   3. secret files others may read, malformed secrets and bad option forms
#      are refused before anything is served.
# Usage: auth_test.sh BIN_DIR
set -uo pipefail
bin=$1
work=$(mktemp -d /dev/shm/rpm-nvmf-auth.XXXXXX)
nqn=nqn.2026-11.io.rpm:auth-test
hostnqn=nqn.2014-08.org.nvmexpress:uuid:0b0c0d0e-1111-2222-3333-444444444444
target_pid=
cleanup() {
  [ -n "$target_pid" ] && kill -9 "$target_pid" 2>/dev/null
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$work/target.log" ] && tail -5 "$work/target.log"; exit 1; }

# 1. gen-secret
s=$("$bin/rpm-nvmf" gen-secret) || fail "gen-secret failed"
[[ $s == DHHC-1:01:*: ]] || fail "gen-secret printed '$s'"
# nvme-cli is the independent side (tools/install-deps installs it).
command -v nvme >/dev/null || fail "nvme-cli is not installed (tools/install-deps installs it)"
nvme check-dhchap-key --key="$s" >"$work/check" 2>&1 || fail "nvme check-dhchap-key refused rpm's secret: $(cat "$work/check")"
echo "nvme-cli: $(cat "$work/check")"
k=$(nvme gen-dhchap-key --key-length=48 --hmac=2 --nqn="$hostnqn") || fail "nvme gen-dhchap-key failed"
echo "$k" >"$work/nvme.key" && chmod 600 "$work/nvme.key"
"$bin/rpm-nvmf" gen-secret --key-length 64 --transform 3 --out "$work/host.key" || fail "gen-secret --out failed"
[ "$(stat -c %a "$work/host.key")" = 600 ] || fail "gen-secret --out made mode $(stat -c %a "$work/host.key")"
grep -q '^DHHC-1:03:' "$work/host.key" || fail "--transform 3 not in the secret"
cp "$work/host.key" "$work/host.copy"
"$bin/rpm-nvmf" gen-secret --out "$work/host.key" 2>"$work/err"; [ $? = 2 ] || fail "gen-secret replaced an existing file"
cmp -s "$work/host.key" "$work/host.copy" || fail "gen-secret changed an existing file"
"$bin/rpm-nvmf" gen-secret --key-length 40 >/dev/null 2>&1; [ $? = 2 ] || fail "--key-length 40 did not exit 2"
"$bin/rpm-nvmf" gen-secret --transform 4 >/dev/null 2>&1; [ $? = 2 ] || fail "--transform 4 did not exit 2"
"$bin/rpm-nvmf" gen-secret --out "$work/ctrl.key" && "$bin/rpm-nvmf" gen-secret --out "$work/wrong.key" || fail "gen-secret"
echo "gen-secret: DHHC-1 secrets, files of mode 600, an existing file kept, bad lengths and transforms exit 2"

# 2. a target whose host must authenticate with the secret nvme-cli made
hostkey=$work/nvme.key
"$bin/rpm-nvmf" target --listen 127.0.0.1:0 --subsystem "$nqn" --ns "1=$work/disk,size=16777216" \
  --dhchap-host "$hostnqn=$hostkey,$work/ctrl.key" --port-file "$work/port" --seconds 60 >"$work/target.log" 2>&1 &
target_pid=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.05; done
[ -s "$work/port" ] || fail "the target did not start: $(cat "$work/target.log")"
port=$(cat "$work/port")
grep -q 'DHHC-1' "$work/target.log" && fail "the target printed a secret"
host() { "$bin/rpm-nvmf" "$1" --port "$port" --subsystem "$nqn" --hostnqn "$hostnqn" --timeout-ms 3000 "${@:2}"; }
host verify --blocks 64 --dhchap-secret-file "$hostkey" --dhchap-ctrl-secret-file "$work/ctrl.key" ||
  fail "the host with both secrets could not write and verify"
host verify --blocks 8 --lba 64 --dhchap-secret-file "$hostkey" || fail "the host with its secret alone failed"
echo "the host with its secret (and the controller's) wrote and verified"
host identify --dhchap-secret-file "$work/wrong.key" 2>"$work/err"; st=$?
[ $st = 1 ] && grep -q "authentication failed" "$work/err" || fail "a wrong secret: exit $st, $(cat "$work/err")"
grep -q 'DHHC-1' "$work/err" && fail "the host printed a secret"
host identify 2>"$work/err"; st=$?
[ $st = 1 ] && grep -q "no secret" "$work/err" || fail "no secret: exit $st, $(cat "$work/err")"
host identify --dhchap-secret-file "$hostkey" --dhchap-ctrl-secret-file "$work/wrong.key" 2>"$work/err"; st=$?
[ $st = 1 ] && grep -q "does not prove its secret" "$work/err" || fail "a wrong controller secret: exit $st, $(cat "$work/err")"
host identify --dhchap-ctrl-secret-file "$work/ctrl.key" >/dev/null 2>&1; [ $? = 2 ] ||
  fail "--dhchap-ctrl-secret-file without --dhchap-secret-file did not exit 2"
echo "refused: a wrong host secret, no secret, a wrong controller secret (exit 1, with the reason)"
kill "$target_pid"; wait "$target_pid"; target_pid=
tail -1 "$work/target.log"
grep -q ", authenticated [1-9]" "$work/target.log" || fail "the target counted no authentication"
grep -q "authentication failures [1-9]" "$work/target.log" || fail "the target counted no failure"
grep -q "authentication failed" "$work/target.log" || fail "the target logged no failure"
grep -q 'DHHC-1' "$work/target.log" && fail "the target logged a secret"

# 3. refused before serving
cp "$work/host.copy" "$work/open.key" && chmod 644 "$work/open.key"
"$bin/rpm-nvmf" target --listen 127.0.0.1:0 --ns "1=$work/disk" --dhchap-host "$hostnqn=$work/open.key" --seconds 5 \
  >/dev/null 2>"$work/err"; st=$?
[ $st != 0 ] && grep -q "chmod 600" "$work/err" || fail "a secret others may read: exit $st, $(cat "$work/err")"
printf 'DHHC-1:01:bm90IGEga2V5Cg==:\n' >"$work/bad.key" && chmod 600 "$work/bad.key"
"$bin/rpm-nvmf" target --listen 127.0.0.1:0 --ns "1=$work/disk" --dhchap-host "$hostnqn=$work/bad.key" --seconds 5 \
  >/dev/null 2>"$work/err"; st=$?
[ $st = 2 ] && grep -q "32, 48 or 64" "$work/err" || fail "a malformed secret: exit $st, $(cat "$work/err")"
grep -q 'bm90IGEga2V5' "$work/err" && fail "the malformed secret was quoted"
"$bin/rpm-nvmf" target --listen 127.0.0.1:0 --ns "1=$work/disk" --dhchap-host "$hostnqn" --seconds 5 >/dev/null 2>&1
[ $? = 2 ] || fail "--dhchap-host without a file did not exit 2"
"$bin/rpm-nvmf" target --listen 127.0.0.1:0 --ns "1=$work/disk" --dhchap-host "$hostnqn=$work/none" --seconds 5 >/dev/null 2>"$work/err"
[ $? != 0 ] && grep -q "none" "$work/err" || fail "a missing secret file: $(cat "$work/err")"
echo "refused before serving: a secret file others may read, a malformed secret, bad --dhchap-host forms"
echo PASS
