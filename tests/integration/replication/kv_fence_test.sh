#!/usr/bin/env bash
# Fencing with real processes (docs/replication.md, "Fencing"): rpm-kvstore
# on 127.0.0.1 with two replicas (majority: the local copy and one replica
# make a quorum). Primary A (term 1) runs a shell and stores k-before; A is
# frozen with SIGSTOP (a long pause); primary B (term 2) opens the same
# replicas from its own file, recovers k-before and stores k-after; A is
# resumed with SIGCONT and tries to store k-stale. A's put must fail with
# fenced, and offline, each replica's file must hold k-before and k-after
# and not k-stale.
#
# Usage: kv_fence_test.sh BIN_DIR [planted]
#   planted: both primaries open without a term (no fencing); the test then
#   passes only if it DOES find A's stale put on a replica (negative control).
# Environment: RPM_KV_SCHEME tcp|rdma, RPM_KV_ADDR 127.0.0.1, RPM_KV_DIR /dev/shm,
#   RPM_KV_HEARTBEAT_MS 50, RPM_KV_FAILURE_TIMEOUT_MS 500, RPM_KV_RECONNECT_MS 100
#   (the lab runs it over rdma:// with longer ones, tests/lab/suite.sh).
{
set -uo pipefail
bin=$1
mode=${2:-normal}
scheme=${RPM_KV_SCHEME:-tcp}
addr=${RPM_KV_ADDR:-127.0.0.1}
work=$(mktemp -d "${RPM_KV_DIR:-/dev/shm}/rpm-kv-fence.XXXXXX")
run=$$-$RANDOM
term_a=1 term_b=2
[ "$mode" = planted ] && term_a=0 term_b=0
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -CONT "$p" 2>/dev/null; kill -9 "$p" 2>/dev/null; done
  exec 3>&- 2>/dev/null
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
die() {
  echo "FAILED: $*"
  for f in "$work"/*.log; do echo "--- $f"; tail -n 20 "$f"; done
  exit 1
}
wait_for() {  # FILE PATTERN SECONDS
  local end=$((SECONDS + $3))
  until grep -q -- "$2" "$1" 2>/dev/null; do
    [ $SECONDS -lt $end ] || die "no '$2' in $1 within $3 s"
    sleep 0.05
  done
}

replicas=()
for n in 1 2; do
  "$bin/rpm-kvstore" replica --listen "$scheme://$addr:0" --region "$work/r$n.pool" --size 8M \
      --port-file "$work/r$n.port" >"$work/r$n.log" 2>&1 &
  pids+=($!)
done
for n in 1 2; do
  for _ in $(seq 200); do [ -s "$work/r$n.port" ] && break; sleep 0.05; done
  [ -s "$work/r$n.port" ] || die "replica $n did not start"
  replicas+=(--replica "$scheme://$addr:$(cat "$work/r$n.port")")
done
opts=(--durability majority --heartbeat-ms "${RPM_KV_HEARTBEAT_MS:-50}" --failure-timeout-ms "${RPM_KV_FAILURE_TIMEOUT_MS:-500}"
      --reconnect-ms "${RPM_KV_RECONNECT_MS:-100}")

# A: a shell fed through a FIFO, so it lives across the pause.
mkfifo "$work/a.in"
"$bin/rpm-kvstore" primary --local "$work/a.pool" --size 8M "${replicas[@]}" "${opts[@]}" --fencing-term "$term_a" \
    shell <"$work/a.in" >"$work/a.log" 2>&1 &
a_pid=$!
pids+=($a_pid)
exec 3>"$work/a.in"
echo "put k-before-$run v1" >&3
wait_for "$work/a.log" '^ok$' 30
kill -STOP "$a_pid"

# B: a newer primary from its own file (a blank one: it recovers from the replicas).
timeout 60 "$bin/rpm-kvstore" primary --local "$work/b.pool" --size 8M "${replicas[@]}" "${opts[@]}" --fencing-term "$term_b" \
    put "k-after-$run" v2 >"$work/b.log" 2>&1 || die "the newer primary's put failed"
grep -q '^ok$' "$work/b.log" || die "the newer primary did not say ok"

kill -CONT "$a_pid"
echo "put k-stale-$run v3" >&3
echo "quit" >&3
exec 3>&-
timeout 60 tail --pid="$a_pid" -f /dev/null
wait "$a_pid"
a_status=$?
kill -TERM "${pids[0]}" "${pids[1]}" 2>/dev/null
wait "${pids[0]}" "${pids[1]}" 2>/dev/null

# The stale primary's damage: its put on a replica, or the newer primary's
# put overwritten (both append at the same log position).
damage=""
for n in 1 2; do
  "$bin/rpm-kvstore" offline --region "$work/r$n.pool" dump >"$work/r$n.dump" 2>&1 || die "offline dump of replica $n failed"
  grep -q "^k-before-$run=v1$" "$work/r$n.dump" || die "replica $n lost the acknowledged k-before"
  grep -q "^k-after-$run=v2$" "$work/r$n.dump" || damage+="replica $n lost the newer primary's k-after; "
  grep -q "^k-stale-$run=" "$work/r$n.dump" && damage+="replica $n holds the stale k-stale; "
done

if [ "$mode" = planted ]; then
  [ -n "$damage" ] || die "control: without terms the stale primary should have changed a replica"
  echo "PASSED (control): without fencing the stale primary changed the replicas: $damage(exit $a_status)"
  exit 0
fi
[ -z "$damage" ] || die "the stale primary changed a replica after the newer primary opened: $damage"
[ "$a_status" = 3 ] || die "the stale primary's shell exited $a_status, not 3 (a put refused)"
grep -q "put k-stale-$run: .*fenced\|put k-stale-$run: .*newer term\|taken over" "$work/a.log" ||
  die "the stale primary's put did not fail with fenced"
echo "PASSED: the stale primary's put was refused (fenced) and reached no replica"
exit 0
}
