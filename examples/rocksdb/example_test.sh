#!/usr/bin/env bash
# rpm-example-rocksdb against three rpm-server processes on 127.0.0.1
# (docs/rocksdb.md):
#   1. a synced put and its value read back; the plug-in gave the WAL file a
#      slot (wal_files >= 1) and the synced write committed (commits >= 1);
#   2. the node loses its WAL: the DB's *.log files and the local pool are
#      deleted; the next run restores the WAL from the replicas
#      (restored >= 1) and RocksDB's recovery gives the value back.
# Every step is bounded by `timeout`; the servers are killed on exit.
# Usage: example_test.sh BIN_DIR
{
set -uo pipefail
bin=$1
work=$(mktemp -d /dev/shm/rpm-rocksdb-example.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
die() {
  echo "FAILED: $*"
  for f in "$work"/*.log; do echo "--- $f"; tail -n 20 "$f"; done
  exit 1
}

# The example's pool: 8 KiB of headers and 4 slots of 8 MiB; 40M covers it.
echo "example-secret-$$" >"$work/secret"
for n in 1 2 3; do
  "$bin/rpm-server" --listen tcp://127.0.0.1:0 --port-file "$work/r$n.port" \
      --region "default=$work/r$n.pool:40M" --client "example:example-secret-$$" >"$work/server$n.log" 2>&1 &
  pids+=($!)
done
replicas=()
for n in 1 2 3; do
  for _ in $(seq 200); do [ -s "$work/r$n.port" ] && break; sleep 0.05; done
  [ -s "$work/r$n.port" ] || die "rpm-server $n did not start"
  replicas+=(--replica "127.0.0.1:$(cat "$work/r$n.port")")
done
example=("$bin/rpm-example-rocksdb" "${replicas[@]}" --local "$work/wal.pool" --client example
         --secret-file "$work/secret" --db "$work/db" --key colour)

stat_of() {  # LOG NAME: the number after NAME= on the stats line
  sed -n "s/^stats: .*\b$2=\([0-9][0-9]*\).*/\1/p" "$1"
}
expect_at_least() {  # LOG NAME MIN
  local v
  v=$(stat_of "$1" "$2")
  [ -n "$v" ] && [ "$v" -ge "$3" ] || die "$1: $2=${v:-none}, expected at least $3"
}

# 1. A synced put, read back.
value="blue-$$"
timeout 60 "${example[@]}" --value "$value" >"$work/run1.log" 2>&1 || die "the first run failed"
grep -q '^rpm-rocksdb: WAL files replicated to 3 replicas' "$work/run1.log" || die "run 1 did not say it used the plug-in"
grep -qx "read back: colour = $value" "$work/run1.log" || die "run 1 did not read back colour = $value"
expect_at_least "$work/run1.log" wal_files 1
expect_at_least "$work/run1.log" commits 1
ls "$work"/db/*.log >/dev/null 2>&1 || die "run 1 left no WAL file in the DB (nothing to lose)"

# 2. The node's WAL files and its pool are gone; the replicas hold the WAL.
rm -f "$work"/db/*.log "$work/wal.pool"
timeout 60 "${example[@]}" >"$work/run2.log" 2>&1 || die "the second run (after the WAL's loss) failed"
grep -qx "read back: colour = $value" "$work/run2.log" || die "run 2 did not read back colour = $value from the restored WAL"
expect_at_least "$work/run2.log" restored 1

echo "PASSED: $(grep '^stats:' "$work/run1.log") / after the WAL's loss: $(grep '^stats:' "$work/run2.log")"
exit 0
}
