#!/usr/bin/env bash
# rpm-nvmf target and host as separate processes on 127.0.0.1:
#   1. 1 MiB written and flushed through the target (acknowledged);
#   2. hosts killed with SIGKILL mid-stream, three times: the target keeps
#      serving (a new host's write, flush and read-back passes);
#   3. the target killed with SIGKILL while a host streams: the host fails
#      with an error within its timeout (no hang), exit status 1;
#   4. a new target on the same file: the 1 MiB of step 1 reads back equal;
#   5. bad command lines exit 2 with a message.
# Over NVMe/TCP on 127.0.0.1 by default; the lab runs it over NVMe/RDMA
# (RPM_NVMF_TRANSPORT=rdma RPM_NVMF_ADDR=<rxe0's address>).
# Usage: process_test.sh BIN_DIR
set -uo pipefail
bin=$1
work=$(mktemp -d /dev/shm/rpm-nvmf-test.XXXXXX)
nqn=nqn.2026-11.io.rpm:process-test
tr=${RPM_NVMF_TRANSPORT:-tcp} addr=${RPM_NVMF_ADDR:-127.0.0.1}
target_pid= host_pid=
cleanup() {
  [ -n "$target_pid" ] && kill -9 "$target_pid" 2>/dev/null
  [ -n "$host_pid" ] && kill -9 "$host_pid" 2>/dev/null
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$work/target.log" ] && tail -5 "$work/target.log"; exit 1; }

start_target() {
  rm -f "$work/port"
  "$bin/rpm-nvmf" target --transport "$tr" --listen "$addr:0" --subsystem "$nqn" --ns "1=$work/disk,size=16777216" \
      --port-file "$work/port" --seconds 120 >>"$work/target.log" 2>&1 &
  target_pid=$!
  for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.05; done
  [ -s "$work/port" ] || fail "target did not start"
  port=$(cat "$work/port")
}
host() { "$bin/rpm-nvmf" "$1" --port "$port" --transport "$tr" --address "$addr" --subsystem "$nqn" --timeout-ms 3000 "${@:2}"; }

start_target
head -c 1M /dev/urandom >"$work/data"
host write --lba 0 --in "$work/data" || fail "write"
host flush || fail "flush"
echo "1 MiB written and flushed (acknowledged)"

for round in 1 2 3; do
  ( while :; do host verify --lba 4096 --blocks 512 --seed "$round" >/dev/null || exit 1; done ) &
  host_pid=$!
  sleep 0.$((RANDOM % 4 + 3))
  # The loop, then the host it was running (mid-command, most likely).
  kill -9 "$host_pid"; wait "$host_pid" 2>/dev/null; host_pid=
  pkill -9 -f "rpm-nvmf verify --port $port .*--lba 4096 --blocks 512" 2>/dev/null
  host verify --lba 8192 --blocks 256 --seed $((round + 10)) >/dev/null || fail "target stopped serving after host kill $round"
done
echo "3 hosts killed mid-stream; the target kept serving"

# Hosts one after another until one fails: the loop's status is that host's.
( while host verify --lba 4096 --blocks 2048 --seed 99 >/dev/null 2>"$work/stream.err"; do :; done; exit 1 ) &
host_pid=$!
sleep 0.5
kill -9 "$target_pid"; wait "$target_pid" 2>/dev/null; target_pid=
t0=$SECONDS
wait "$host_pid"; status=$?; host_pid=
# A clean failure (exit 1, an error message), never a hang or a crash.
[ "$status" = 1 ] || fail "host exit status $status after the target was killed"
[ $((SECONDS - t0)) -le 10 ] || fail "host took $((SECONDS - t0)) s to notice the target was gone"
echo "target killed mid-stream: host failed cleanly within $((SECONDS - t0)) s: $(head -1 "$work/stream.err")"
host verify --blocks 8 >/dev/null 2>"$work/err" && fail "a host connected to a killed target"
grep -q "connect" "$work/err" || fail "no connection error: $(cat "$work/err")"

start_target
host read --lba 0 --blocks 2048 --out "$work/back" || fail "read after restart"
cmp "$work/data" "$work/back" || fail "acknowledged data lost across the target's kill"
echo "new target: the acknowledged 1 MiB reads back equal"

"$bin/rpm-nvmf" target --ns 0=/x >/dev/null 2>&1; [ $? = 2 ] || fail "--ns 0=... did not exit 2"
"$bin/rpm-nvmf" target --ns 1=/x,bogus >/dev/null 2>&1; [ $? = 2 ] || fail "--ns with a bad option did not exit 2"
"$bin/rpm-nvmf" target --listen nowhere --ns 1=/x >/dev/null 2>&1; [ $? = 2 ] || fail "--listen without a port did not exit 2"
"$bin/rpm-nvmf" read --port "$port" --subsystem "$nqn" >/dev/null 2>&1; [ $? = 2 ] || fail "read without --out did not exit 2"
host write --lba 0 --in "$work/missing" >/dev/null 2>&1; [ $? = 2 ] || fail "write of a missing file did not exit 2"
host read --blocks 40000 --out "$work/x" 2>"$work/err"; [ $? = 2 ] && grep -q "has 32768 blocks" "$work/err" ||
  fail "a read larger than the namespace did not exit 2 naming its size: $(cat "$work/err")"
host read --lba 32760 --blocks 16 --out "$work/x" 2>"$work/err"; [ $? = 1 ] && grep -q "SC 0x80" "$work/err" ||
  fail "a read past the end did not get LBA Out of Range: $(cat "$work/err")"
host verify --blocks 4294967295 >/dev/null 2>&1; [ $? = 2 ] || fail "--blocks 4294967295 did not exit 2"
host verify --timeout-ms 0 >/dev/null 2>&1; [ $? = 2 ] || fail "--timeout-ms 0 did not exit 2"
"$bin/rpm-nvmf" target --ns 1=/x --seconds -1 >/dev/null 2>&1; [ $? = 2 ] || fail "--seconds -1 did not exit 2"
echo "bad command lines exit 2"
echo "PASS (NVMe/$tr)"
