#!/usr/bin/env bash
# RocksDB through the plug-in, its node crashing: three rpm-server replicas
# on 127.0.0.1 (tmpfs regions), a writer putting key0, key1, ... with
# sync=true and printing each one acknowledged. After 150 acknowledged puts
# one replica is killed with -9 (a majority of 3 goes on); after 400 the
# writer is killed with -9. Then the node loses what its OS never synced:
# every WAL file (the plug-in never fsyncs them) and the local pool. The
# verifier opens RocksDB through the plug-in on the two replicas left,
# which restores the WAL files, and RocksDB's recovery replays them:
# every acknowledged put must be there.
#
# Usage: crash_test.sh TESTS_DIR BIN_DIR [planted]
#   planted: the writer runs with RPM_FAULT=rocksdb-sync-before-commit (its
#   Sync acknowledges without a commit); the test then passes only if the
#   verifier DOES find acknowledged puts missing (the negative control).
#   Without commits, a replica still receives the writes whenever the
#   replicator's pending batch fills (16 KiB, about 100 puts), so what is
#   lost is the batch pending at the kill: 0 to about 125 puts, none in
#   about 1 run of 100. The control therefore runs the crash up to three
#   times and passes at the first loss.
set -uo pipefail
tests=$1 bin=$2 mode=${3:-normal}
work=$(mktemp -d /dev/shm/rpm-rocksdb-crash.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}" ${writer:-}; do kill -9 "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "crash_test: FAIL: $*" >&2; exit 1; }
deadline=$((SECONDS + 90))

acked() { local n; n=$(grep -c '^ack ' "$work/acks" 2>/dev/null); echo "${n:-0}"; }
wait_acked() {
  until [ "$(acked)" -ge "$1" ]; do
    kill -0 "$writer" 2>/dev/null || fail "the writer stopped after $(acked) puts: $(tail -3 "$work/writer.err")"
    [ $SECONDS -lt $deadline ] || fail "only $(acked) puts acknowledged in time"
    sleep 0.02
  done
}

# One crash; sets $out and $status (the verifier's line and exit status).
crash_once() {
  pids=()
  rm -rf "${work:?}"/*
  echo crash-secret > "$work/secret"
  for i in 1 2 3; do
    "$bin/rpm-server" --listen tcp://127.0.0.1:0 --port-file "$work/port$i" \
      --region "default=$work/replica$i.pool:24M" --client writer:crash-secret >"$work/server$i.log" 2>&1 &
    pids+=($!)
  done
  for i in 1 2 3; do
    until [ -s "$work/port$i" ]; do
      [ $SECONDS -lt $deadline ] || fail "rpm-server $i did not start: $(cat "$work/server$i.log")"
      sleep 0.05
    done
  done
  replicas="127.0.0.1:$(cat "$work/port1"),127.0.0.1:$(cat "$work/port2"),127.0.0.1:$(cat "$work/port3")"
  uri="rpm://$replicas?local=$work/wal.pool&slots=4&slot_size=4M&client=writer&secret_file=$work/secret&failure_timeout_ms=500"

  fault=
  [ "$mode" = planted ] && fault=rocksdb-sync-before-commit
  RPM_FAULT=$fault "$tests/rocksdb_crash_writer" write "$uri" "$work/db" >"$work/acks" 2>"$work/writer.err" &
  writer=$!
  wait_acked 150
  kill -9 "${pids[2]}"
  wait_acked 400
  kill -9 "$writer"
  wait "$writer" 2>/dev/null
  n=$(( $(grep '^ack ' "$work/acks" | tail -1 | cut -d' ' -f2) + 1 ))
  unset writer

  # What the node's crash takes: its unsynced WAL files and its local pool.
  wals=$(find "$work/db" -name '*.log' | wc -l)
  [ "$wals" -ge 1 ] || fail "no WAL file in $work/db"
  find "$work/db" -name '*.log' -delete
  rm -f "$work/wal.pool"

  out=$(timeout 60 "$tests/rocksdb_crash_writer" verify "$uri" "$work/db" "$n" 2>"$work/verify.err")
  status=$?
  echo "crash_test: $n puts acknowledged; removed $wals WAL file(s) and the pool; verify: $out (status $status)"
  grep -h 'restored' "$work/verify.err"
}

attempts=1
[ "$mode" = planted ] && attempts=3
for attempt in $(seq "$attempts"); do
  crash_once
  [ "$mode" = planted ] && [ $status -eq 0 ] || break
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  wait 2>/dev/null
done
if [ "$mode" = planted ]; then
  [ $status -eq 1 ] || fail "the planted fault (Sync before the commit) lost nothing in $attempts crashes: the test cannot see a loss"
  echo "crash_test: control: the planted fault lost acknowledged puts, as it must"
  exit 0
fi
[ $status -eq 0 ] || fail "acknowledged puts lost: $out; $(cat "$work/verify.err")"
echo "crash_test: every acknowledged put is back"
