#!/usr/bin/env bash
# NVMe in-band authentication (DH-HMAC-CHAP) against Linux, in the lab's
# 6.12 VM (bookworm-backports: CONFIG_NVME_HOST_AUTH and
# CONFIG_NVME_TARGET_AUTH; Debian 12's 6.1 has neither), over NVMe/TCP on
# loopback and NVMe/RDMA on rxe0:
#   kernel host -> rpm-nvmf target   nvme connect --dhchap-secret (and
#       --dhchap-ctrl-secret): connects, fio writes and verifies; a wrong
#       host secret and a wrong controller secret are refused and the
#       namespace's file is unchanged; the target counts and logs each
#   rpm host -> kernel nvmet         dhchap_key / dhchap_ctrl_key in
#       configfs, nvmet choosing SHA-384 and ffdhe3072 over TCP, SHA-512
#       and ffdhe4096 over RDMA: rpm-nvmf verify with --dhchap-secret-file
#       (and the controller's) writes and reads back; a wrong secret, a
#       controller without ours and none are refused (exit 1, auth_failed)
# Both directions check the other side's computation: the kernel checks
# rpm's responses and rpm checks the kernel's.
# Usage: nvmf_auth.sh BUILD_DIR
{
set -uo pipefail
build=$1
bin=$build/bin
nqn=nqn.2026-11.io.rpm:auth
knqn=nqn.2026-11.io.rpm:kernel-auth
hostnqn=nqn.2014-08.org.nvmexpress:uuid:4b1d0c2e-5a6f-4e1b-9c3d-2f7a8e6b5d41
hostid=4b1d0c2e-5a6f-4e1b-9c3d-2f7a8e6b5d41
work=/tmp/nvmf-auth.$$
mkdir -p "$work"
target_pid=

modules() { for m in "$@"; do /run/modprobe "$m" || { echo "modprobe $m failed"; return 1; }; done; }

cleanup() {
  nvme disconnect -n "$nqn" >/dev/null 2>&1
  [ -n "$target_pid" ] && kill "$target_pid" 2>/dev/null && wait "$target_pid" 2>/dev/null
  target_pid=
  kernel_target_down
}

block_of() {
  local d
  for d in /sys/class/nvme-subsystem/*; do
    [ "$(cat "$d/subsysnqn" 2>/dev/null)" = "$1" ] || continue
    ls "$d" | grep -E '^nvme[0-9]+n1$' | head -1
    return 0
  done
  return 1
}

secrets() {
  "$bin/rpm-nvmf" gen-secret --out "$work/host.key" &&
    "$bin/rpm-nvmf" gen-secret --key-length 48 --transform 2 --out "$work/ctrl.key" &&
    "$bin/rpm-nvmf" gen-secret --out "$work/wrong.key" || return 1
  [ "$(stat -c %a "$work/host.key")" = 600 ] || { echo "gen-secret --out made a file others may read"; return 1; }
}

# --- the kernel's host through rpm's target ------------------------------------
kernel_connect() {  # TR ADDR SECRET-ARGS...: connect; the block device name on stdout
  local tr=$1 addr=$2 dev; shift 2
  nvme connect -t "$tr" -a "$addr" -s 4420 -n "$nqn" --hostnqn="$hostnqn" --hostid="$hostid" "$@" >"$work/connect" 2>&1 ||
    return 1
  for _ in $(seq 50); do dev=$(block_of "$nqn") && [ -n "$dev" ] && [ -b "/dev/$dev" ] && break; sleep 0.2; done
  [ -n "$dev" ] && echo "$dev"
}

kernel_host() {  # TR ADDR
  local tr=$1 addr=$2 dev
  truncate -s 64M "$work/disk.$tr"
  "$bin/rpm-nvmf" target --transport "$tr" --listen "$addr:4420" --subsystem "$nqn" --ns "1=$work/disk.$tr" \
    --dhchap-host "$hostnqn=$work/host.key,$work/ctrl.key" --port-file "$work/port.$tr" >"$work/target.$tr" 2>&1 &
  target_pid=$!
  for _ in $(seq 100); do [ -s "$work/port.$tr" ] && break; sleep 0.1; done
  [ -s "$work/port.$tr" ] || { cat "$work/target.$tr"; return 1; }
  # Both ways: the host proves its secret, the controller its own.
  dev=$(kernel_connect "$tr" "$addr" --dhchap-secret "$(cat "$work/host.key")" --dhchap-ctrl-secret "$(cat "$work/ctrl.key")") ||
    { cat "$work/connect"; grep "authentication" "$work/target.$tr"; echo "the kernel host could not connect with both secrets"; return 1; }
  (cd "$work" && fio --name=auth --filename="/dev/$dev" --direct=1 --ioengine=libaio --iodepth=8 --rw=randwrite --bs=4k \
    --size=4M --verify=crc32c --verify_fatal=1 --do_verify=1 --output="$work/fio.txt") || { cat "$work/fio.txt"; return 1; }
  echo "kernel host over $tr, both secrets: /dev/$dev, 4 MiB written and verified (fio crc32c)"
  nvme disconnect -n "$nqn" >/dev/null || return 1
  dev=$(kernel_connect "$tr" "$addr" --dhchap-secret "$(cat "$work/host.key")") ||
    { cat "$work/connect"; grep "authentication" "$work/target.$tr"; echo "the kernel host could not connect with its secret alone"; return 1; }
  echo "kernel host over $tr, host secret only: connected (/dev/$dev)"
  nvme disconnect -n "$nqn" >/dev/null || return 1
  # Refusals: the namespace must not change.
  local before after
  before=$(sha256sum <"$work/disk.$tr")
  if dev=$(kernel_connect "$tr" "$addr" --dhchap-secret "$(cat "$work/wrong.key")"); then
    echo "a wrong host secret connected (/dev/$dev)"; return 1
  fi
  echo "wrong host secret refused: $(tail -1 "$work/connect")"
  nvme disconnect -n "$nqn" >/dev/null 2>&1
  if dev=$(kernel_connect "$tr" "$addr" --dhchap-secret "$(cat "$work/host.key")" --dhchap-ctrl-secret "$(cat "$work/wrong.key")"); then
    echo "the host accepted a controller that does not hold its secret (/dev/$dev)"; return 1
  fi
  echo "wrong controller secret refused by the kernel host: $(tail -1 "$work/connect")"
  nvme disconnect -n "$nqn" >/dev/null 2>&1
  after=$(sha256sum <"$work/disk.$tr")
  [ "$before" = "$after" ] || { echo "the namespace changed during the refused connects"; return 1; }
  kill "$target_pid"; wait "$target_pid"; target_pid=
  grep "authentication failed" "$work/target.$tr" | sed 's/^/target: /' | sort | uniq -c | head -5
  tail -1 "$work/target.$tr"
  grep -q "authentication failures [1-9]" "$work/target.$tr" || { echo "the target counted no failure"; return 1; }
  grep -q ", authenticated [1-9]" "$work/target.$tr" || { echo "the target counted no success"; return 1; }
}

# --- rpm's host against the kernel's nvmet --------------------------------------
kernel_target_up() {  # TR ADDR HASH DHGROUP
  local tr=$1 addr=$2 hash=$3 group=$4 c=/sys/kernel/config/nvmet
  modules nvmet "nvmet_$tr" || return 1
  mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config || return 1
  truncate -s 64M "$work/kdisk"
  mkdir -p "$c/hosts/$hostnqn" "$c/subsystems/$knqn/namespaces/1" "$c/ports/2" || return 1
  cat "$work/host.key" >"$c/hosts/$hostnqn/dhchap_key" || { echo "nvmet refused dhchap_key"; return 1; }
  cat "$work/ctrl.key" >"$c/hosts/$hostnqn/dhchap_ctrl_key" || { echo "nvmet refused dhchap_ctrl_key"; return 1; }
  echo "hmac($hash)" >"$c/hosts/$hostnqn/dhchap_hash" || { echo "nvmet refused hmac($hash)"; return 1; }
  echo "$group" >"$c/hosts/$hostnqn/dhchap_dhgroup" || { echo "nvmet refused $group"; return 1; }
  echo 0 >"$c/subsystems/$knqn/attr_allow_any_host"
  ln -sf "$c/hosts/$hostnqn" "$c/subsystems/$knqn/allowed_hosts/$hostnqn" || return 1
  echo "$work/kdisk" >"$c/subsystems/$knqn/namespaces/1/device_path"
  echo 1 >"$c/subsystems/$knqn/namespaces/1/enable" || return 1
  echo "$tr" >"$c/ports/2/addr_trtype"; echo ipv4 >"$c/ports/2/addr_adrfam"
  echo "$addr" >"$c/ports/2/addr_traddr"; echo 4422 >"$c/ports/2/addr_trsvcid"
  ln -sf "$c/subsystems/$knqn" "$c/ports/2/subsystems/$knqn" || return 1
}

kernel_target_down() {
  local c=/sys/kernel/config/nvmet
  [ -d "$c" ] || return 0
  rm -f "$c/ports/2/subsystems/$knqn" "$c/subsystems/$knqn/allowed_hosts/$hostnqn" 2>/dev/null
  rmdir "$c/ports/2" 2>/dev/null
  [ -d "$c/subsystems/$knqn/namespaces/1" ] && echo 0 >"$c/subsystems/$knqn/namespaces/1/enable"
  rmdir "$c/subsystems/$knqn/namespaces/1" "$c/subsystems/$knqn" "$c/hosts/$hostnqn" 2>/dev/null
  return 0
}

kernel_target() {  # TR ADDR HASH DHGROUP: nvmet chooses these, rpm's host offers all
  local tr=$1 addr=$2 hash=$3 group=$4
  kernel_target_up "$tr" "$addr" "$hash" "$group" || { kernel_target_down; return 1; }
  local h=(--transport "$tr" --address "$addr" --port 4422 --subsystem "$knqn" --hostnqn "$hostnqn")
  local rc=0 st
  "$bin/rpm-nvmf" verify "${h[@]}" --dhchap-secret-file "$work/host.key" --dhchap-ctrl-secret-file "$work/ctrl.key" \
    --lba 0 --blocks 256 --seed 11 || { echo "rpm's host with both secrets failed against nvmet"; rc=1; }
  [ $rc = 0 ] && echo "rpm host over $tr against nvmet, both secrets ($hash, $group): 128 KiB written and verified"
  "$bin/rpm-nvmf" identify "${h[@]}" 2>"$work/err"; st=$?
  [ $st = 1 ] && grep -q "no secret" "$work/err" && echo "no secret refused: $(cat "$work/err")" ||
    { cat "$work/err"; echo "a host without a secret was not refused (exit $st)"; rc=1; }
  "$bin/rpm-nvmf" identify "${h[@]}" --dhchap-secret-file "$work/host.key" --dhchap-ctrl-secret-file "$work/wrong.key" \
    2>"$work/err"; st=$?
  [ $st = 1 ] && grep -q "does not prove its secret" "$work/err" && echo "nvmet without our controller secret refused: $(cat "$work/err")" ||
    { cat "$work/err"; echo "a controller without our secret: exit $st, not the refusal expected"; rc=1; }
  # nvmet tears the controller down when a host fails, over NVMe/RDMA at
  # times before the command's completion reaches the host: rpm's host
  # then reports that the controller closed the connection (it waited out
  # its 10 s timeout on each such case, and failed this step, before it
  # watched the CM's events).
  "$bin/rpm-nvmf" identify "${h[@]}" --dhchap-secret-file "$work/wrong.key" 2>"$work/err"; st=$?
  [ $st = 1 ] && grep -q "authentication failed" "$work/err" && echo "wrong secret refused: $(cat "$work/err")" ||
    { cat "$work/err"; echo "a wrong secret was not refused (exit $st)"; rc=1; }
  kernel_target_down
  return $rc
}

rc=0
trap cleanup EXIT
modules nvme_tcp nvme_rdma || exit 1
secrets || exit 1
for tr in tcp rdma; do
  addr=127.0.0.1 hash=sha384 group=ffdhe3072
  [ "$tr" = rdma ] && addr=${RPM_LAB_RDMA_ADDR:?run me through tools/lab/run} hash=sha512 group=ffdhe4096
  echo "--- NVMe/$tr: the kernel host through rpm-nvmf's target"
  kernel_host "$tr" "$addr" || { rc=1; cleanup; }
  echo "--- NVMe/$tr: rpm's host against the kernel's nvmet"
  kernel_target "$tr" "$addr" "$hash" "$group" || { rc=1; cleanup; }
done
exit $rc
}
