#!/usr/bin/env bash
# Automatic failover with real processes (docs/replication.md, "Automatic
# failover"): a 3-member etcd cluster and 3 `rpm-kvstore node`s on
# 127.0.0.1, a client that finds the primary through etcd, bounded rounds:
#   1. kill -9 the primary during a load and, beside it, pipelined loads
#      (several clients, --pipeline 16: many SETs under one group commit):
#      a new primary serves within the lease TTL plus recovery; the killed
#      node comes back as a replica; every acknowledged put is there.
#  1b. both replicas frozen (SIGSTOP) until the primary counts neither, so
#      its commits fail; pipelined loads then (no put may be acknowledged);
#      the primary killed -9 and the replicas resumed: a new primary
#      serves, the loads finish, every acknowledged put is there (a put the
#      old primary answered +OK without its replicas would be on it alone,
#      and lost).
#   2. kill one etcd member during a load: no put fails, the primary and
#      its term do not change.
#   3. stop a second etcd member (no quorum): the primary steps down once its
#      lease cannot be renewed (one TTL), puts are refused, no node is
#      elected; with the members back, a primary is elected and serves.
#   4. the nodes restarted with --fault ignore-lease (a primary whose lease
#      check comes too late), the primary frozen with SIGSTOP past its lease:
#      a newer one is elected and serves puts; the old one is resumed with a
#      put waiting for it. That put fails with FENCED, and no member's
#      region holds it at the end.
# Finally every member's region file is read offline: each acknowledged put
# on at least two members, and the stale put on none.
#
# Usage: kv_failover_test.sh BIN_DIR [planted|planted-ack]
#   planted: round 4 only, with --fault no-fencing (no terms at the
#   replicas); the test passes only if it DOES find the stale primary's put
#   acknowledged or on a member (negative control).
#   planted-ack: round 1b only, the nodes with --fault ack-before-commit
#   (group commit answers +OK before its commit, and keeps it when the
#   commit fails); the test passes only if the offline check DOES find
#   acknowledged pipelined puts on fewer than two members (negative control).
# Environment: RPM_KV_SCHEME tcp|rdma, RPM_KV_ADDR 127.0.0.1, RPM_KV_DIR /dev/shm,
#   RPM_KV_LEASE_TTL 2, RPM_KV_HEARTBEAT_MS 50, RPM_KV_FAILURE_TIMEOUT_MS 500,
#   RPM_KV_RECONNECT_MS 100, RPM_KV_LOAD 3000 (puts of round 1; the others
#   make a half and a tenth of it), RPM_KV_PIPELINE 16 and
#   RPM_KV_PIPELINED_CLIENTS 3 (the pipelined loads of rounds 1 and 1b, each
#   client 3 times RPM_KV_LOAD in round 1, as they are that much faster and
#   must still be running at the kill, and RPM_KV_LOAD in round 1b),
#   RPM_KV_SIZE 16M (each region),
#   RPM_KV_RECOVERY_S 8 (the failover's bound
#   beyond the TTL), RPM_KV_STEPDOWN_S 4 (the primary's step-down's bound
#   beyond the TTL once etcd has no quorum), and tools/lib/etcd.sh's
#   ETCD_* settings, RPM_KV_WAIT_S 30 (for a primary to serve); the lab
#   runs it over rdma:// with slower ones
#   (tests/lab/suite.sh).
{
set -uo pipefail
bin=$1
mode=${2:-normal}
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../../tools/lib/etcd.sh"
scheme=${RPM_KV_SCHEME:-tcp}
addr=${RPM_KV_ADDR:-127.0.0.1}
work=$(mktemp -d "${RPM_KV_DIR:-/dev/shm}/rpm-kv-failover.XXXXXX")
ttl=${RPM_KV_LEASE_TTL:-2}
load_n=${RPM_KV_LOAD:-3000}
recovery_s=${RPM_KV_RECOVERY_S:-8}
stepdown_s=${RPM_KV_STEPDOWN_S:-4}
wait_s=${RPM_KV_WAIT_S:-30}
pipeline=${RPM_KV_PIPELINE:-16}
pipelined_clients=${RPM_KV_PIPELINED_CLIENTS:-3}
size=${RPM_KV_SIZE:-16M}
node_pids=(0 0 0)
cleanup() {
  # A node's background child that a signal reaches before it execs runs
  # this trap too (bash), and would remove the work directory under the
  # test: only the test's own shell cleans up.
  [ "$BASHPID" = "$$" ] || return 0
  for p in "${node_pids[@]}"; do [ "$p" != 0 ] && { kill -CONT "$p"; kill -9 "$p"; } 2>/dev/null; done
  etcd_stop_all
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
die() {
  echo "FAILED: $*"
  for f in "$work"/*.log "$work"/etcd/*.log; do [ -f "$f" ] && { echo "--- $f"; tail -n 15 "$f"; }; done
  exit 1
}
kv() { timeout 60 "$bin/rpm-kvstore" "$@"; }

# Bad flags are refused at once, with the flag named (exit 2), before etcd is asked.
for bad in "--serve 127.0.0.1:1 --member foo" "--serve 127.0.0.1:1 --member udp://127.0.0.1:1" \
           "--serve 127.0.0.1:1 --member tcp://127.0.0.1:1" "--serve nowhere --member tcp://127.0.0.1:2"; do
  # shellcheck disable=SC2086
  out=$(timeout 10 "$bin/rpm-kvstore" node --name b --coordinator etcd://127.0.0.1:1 --listen tcp://127.0.0.1:1 \
        --region "$work/bad.pool" --member tcp://127.0.0.1:1 $bad 2>&1)
  [ $? = 2 ] && grep -q -- '--member\|--serve' <<<"$out" || die "node $bad: not refused as bad input: $out"
done
etcd_start_all "$work" || die "etcd did not start"
members=() listen=() serve=()
for i in 0 1 2; do
  take_port lport && take_port sport || die "no free ports"
  listen[$i]="$scheme://$addr:$lport" serve[$i]="127.0.0.1:$sport"
  members+=(--member "${listen[$i]}")
done
start_node() {  # I [FAULT]
  local i=$1
  "$bin/rpm-kvstore" node --name "n$i" --coordinator "$ETCD_URI" --lease-ttl $ttl --listen "${listen[$i]}" \
      --region "$work/n$i.pool" --size "$size" --serve "${serve[$i]}" "${members[@]}" \
      --heartbeat-ms "${RPM_KV_HEARTBEAT_MS:-50}" --failure-timeout-ms "${RPM_KV_FAILURE_TIMEOUT_MS:-500}" \
      --reconnect-ms "${RPM_KV_RECONNECT_MS:-100}" ${2:+--fault "$2"} >>"$work/n$i.log" 2>&1 &
  node_pids[$i]=$!
}
stop_nodes() {
  local p
  for p in "${node_pids[@]}"; do [ "$p" != 0 ] && kill -TERM "$p" 2>/dev/null; done
  for p in "${node_pids[@]}"; do
    [ "$p" != 0 ] || continue
    timeout 20 tail --pid="$p" -f /dev/null
    kill -9 "$p" 2>/dev/null
    wait "$p" 2>/dev/null
  done
  node_pids=(0 0 0)
}
# The primary as status shows it: "NAME TERM" once it serves (role primary).
primary() {
  local s
  s=$(kv status --coordinator "$ETCD_URI" --timeout-ms 2000 2>/dev/null) || return 1
  grep -q '^role primary$' <<<"$s" || return 1
  awk '/^leader / { print $2, $5; exit }' <<<"$s"
}
# Wait for a serving primary other than $1 (or any); prints "NAME TERM".
wait_primary() {
  local not=${1:-} end=$((SECONDS + ${2:-30})) p
  while [ $SECONDS -lt $end ]; do
    p=$(primary) && [ "${p%% *}" != "$not" ] && { echo "$p"; return 0; }
    sleep 0.1
  done
  return 1
}
# Wait until the primary has both replicas live (a rejoined member resynced).
wait_all_live() {
  local end=$((SECONDS + wait_s)) s
  while [ $SECONDS -lt $end ]; do
    s=$(kv status --coordinator "$ETCD_URI" --timeout-ms 2000 2>/dev/null) &&
      [ "$(grep -c '^member .* live frontier' <<<"$s")" = 2 ] && return 0
    sleep 0.1
  done
  return 1
}
acked_lines() { [ -f "$1" ] && wc -l <"$1" || echo 0; }
load() {  # RUN COUNT [PIPELINE]: in the background, pid in load_pid
  kv client --coordinator "$ETCD_URI" --timeout-ms 20000 load --run "$1" --count "$2" --pipeline "${3:-1}" \
      --acked "$work/acked" >>"$work/load.log" 2>&1 &
  load_pid=$!
}
# RUN0 COUNT: $pipelined_clients loads, runs RUN0+1..., --pipeline $pipeline,
# in the background (pids in pipelined_pids); every key is k<RUN0 / 10><digit>-I.
load_pipelined() {
  local c
  pipelined_pids=()
  for ((c = 1; c <= pipelined_clients; c++)); do load $(($1 + c)) "$2" "$pipeline"; pipelined_pids+=("$load_pid"); done
}
acked_of() { cat "$work/acked" 2>/dev/null | grep -c "^k$1[0-9]-"; }  # RUN0/10: acked puts of load_pipelined RUN0
# Wait until the pipelined loads of RUN0 acknowledged at least N puts.
wait_pipelined_progress() {  # RUN0 N
  local end=$((SECONDS + 60))
  until [ "$(acked_of $(($1 / 10)))" -ge "$2" ]; do [ $SECONDS -lt $end ] || die "pipelined loads made no progress"; sleep 0.01; done
}
# How many of the pipelined loads are still running.
pipelined_running() {
  local p n=0
  for p in "${pipelined_pids[@]}"; do kill -0 "$p" 2>/dev/null && n=$((n + 1)); done
  echo $n
}
wait_pipelined() {  # WHAT: every pipelined load must succeed
  local p
  for p in "${pipelined_pids[@]}"; do wait "$p" || die "a pipelined load failed $1"; done
}

round_kill_primary() {
  local p0 name term p1 start took
  p0=$(wait_primary "" "$wait_s") || die "no primary elected at start"
  name=${p0%% *}
  load 1 "$load_n"
  local serial_pid=$load_pid end=$((SECONDS + 60)) running
  until [ "$(acked_lines "$work/acked")" -ge $((load_n / 10)) ]; do [ $SECONDS -lt $end ] || die "load made no progress"; sleep 0.05; done
  load_pipelined 10 $((load_n * 3))
  wait_pipelined_progress 10 "$pipeline"  # one window: the rest still to come
  running=$(pipelined_running)
  start=$(date +%s%N)
  kill -9 "${node_pids[${name#n}]}"
  [ "$running" -gt 0 ] || die "the pipelined loads ended before the kill (raise RPM_KV_LOAD)"
  p1=$(wait_primary "$name" "$wait_s") || die "no new primary within $wait_s s of killing $name"
  took=$(( ($(date +%s%N) - start) / 1000000 ))
  echo "round 1: killed primary $name ($p0) with a load and $running of $pipelined_clients pipelined loads" \
       "(--pipeline $pipeline) running; $p1 serves after $took ms (lease TTL ${ttl} s)"
  [ "$took" -le $(( (ttl + recovery_s) * 1000 )) ] || die "failover took $took ms, more than the TTL plus $recovery_s s"
  start_node "${name#n}"
  wait "$serial_pid" || die "the load failed across the failover"
  wait_pipelined "across the failover"
  term=${p1#* }
  kv client --coordinator "$ETCD_URI" verify --acked "$work/acked" || die "acknowledged puts lost after killing the primary"
}

# The primary's count of live members, from INFO (empty if it does not answer).
live_members() {
  local s
  s=$(kv status --coordinator "$ETCD_URI" --timeout-ms 2000 2>/dev/null) && grep -c '^member .* live frontier' <<<"$s"
}

round_replicas_lost() {  # [FAULT]: the nodes' --fault, for a restarted one
  local p0 name p1 i frozen=() end during running
  p0=$(wait_primary "" "$wait_s") || die "no primary before round 1b"
  name=${p0%% *}
  for i in 0 1 2; do [ "n$i" = "$name" ] || { kill -STOP "${node_pids[$i]}"; frozen+=("$i"); }; done
  # Until the primary counts neither replica (a failure timeout): from
  # then on its commits fail, and no put may be acknowledged.
  end=$((SECONDS + wait_s))
  until [ "$(live_members)" = 0 ]; do [ $SECONDS -lt $end ] || die "the primary still counts a frozen replica"; sleep 0.05; done
  load_pipelined 20 "$load_n"
  sleep 1  # their pipelines reach the primary, and its commits fail
  during=$(acked_of 2) running=$(pipelined_running)
  kill -9 "${node_pids[${name#n}]}"
  for i in "${frozen[@]}"; do kill -CONT "${node_pids[$i]}"; done
  p1=$(wait_primary "$name" "$wait_s") || die "no new primary within $wait_s s of killing $name"
  echo "round 1b: both replicas of $name ($p0) frozen; $pipelined_clients pipelined loads then had $during puts" \
       "acknowledged in 1 s; $name killed with $running of them running; $p1 serves"
  start_node "${name#n}" "${1:-}"
  wait_pipelined "after the primary lost its replicas and was killed"
  [ -n "${1:-}" ] && return 0  # the control counts what was lost in check_regions
  [ "$during" = 0 ] || die "$during puts were acknowledged while the primary had no replica"
  kv client --coordinator "$ETCD_URI" verify --acked "$work/acked" ||
    die "acknowledged puts lost after the primary lost its replicas and was killed"
}

round_etcd_one() {
  local p0 p1
  p0=$(wait_primary "" "$wait_s") || die "no primary before round 2"
  load 2 $((load_n / 2))
  sleep 0.3
  etcd_kill 0
  wait "$load_pid" || die "the load failed with one etcd member down"
  p1=$(wait_primary "" "$wait_s") || die "no primary with one etcd member down"
  [ "$p0" = "$p1" ] || die "the primary changed ($p0 -> $p1) with one etcd member down"
  echo "round 2: one etcd member killed during a load: all puts acknowledged, primary still $p1"
}

round_etcd_two() {
  local p0 elected_before elected_after out p1
  p0=$(wait_primary "" "$wait_s") || die "no primary before round 3"
  local n0=${p0%% *}
  elected_before=$(cat "$work"/n*.log | grep -c ': elected')
  etcd_kill 1 STOP
  # The primary cannot renew its lease: it may go on until one TTL after
  # its last renewal, then it must stop serving puts (NOTLEADER).
  local t0=$SECONDS i=0
  while :; do
    out=$(kv client --node "${serve[${n0#n}]}" --no-follow put "k-noquorum-$((i++))" v 2>&1)
    grep -q NOTLEADER <<<"$out" && break
    [ $((SECONDS - t0)) -le $((ttl + stepdown_s)) ] ||
      die "the primary still answered '$out' $((SECONDS - t0)) s after etcd lost its quorum (TTL $ttl s)"
    sleep 0.2
  done
  local took=$((SECONDS - t0))
  out=$(kv client --node "${serve[${n0#n}]}" --no-follow put k-noquorum-after v 2>&1) &&
    die "a put was acknowledged after the primary stepped down: $out"
  elected_after=$(cat "$work"/n*.log | grep -c ': elected')
  [ "$elected_before" = "$elected_after" ] || die "a node was elected without an etcd quorum"
  etcd_resume 1
  etcd_start 0
  etcd_healthy || die "etcd did not recover"
  p1=$(wait_primary "" "$wait_s") || die "no primary once etcd had its quorum back"
  echo "round 3: two etcd members down: $p0 stepped down within $took s ($out), no election; then $p1 serves"
  load 3 $((load_n / 10))
  wait "$load_pid" || die "the load failed after etcd recovered"
}

round_stale_primary() {
  local fault=$1 p0 name p1 out status
  stop_nodes
  for i in 0 1 2; do start_node "$i" "$fault"; done
  p0=$(wait_primary "" "$wait_s") || die "no primary after restarting the nodes with --fault $fault"
  name=${p0%% *}
  kv client --coordinator "$ETCD_URI" put k-before v1 >/dev/null || die "put before the pause failed"
  kill -STOP "${node_pids[${name#n}]}"
  p1=$(wait_primary "$name" "$wait_s") || die "no new primary while $name was frozen"
  kv client --coordinator "$ETCD_URI" put k-after v2 >/dev/null || die "the newer primary's put failed"
  load 4 $((load_n / 15))
  wait "$load_pid" || die "the load on the newer primary failed"
  # A put for the frozen primary: it is read once the process runs again.
  kv client --node "${serve[${name#n}]}" --no-follow --timeout-ms 30000 put k-stale v3 >"$work/stale.out" 2>&1 &
  local stale_pid=$!
  sleep 0.5
  kill -CONT "${node_pids[${name#n}]}"
  wait "$stale_pid"
  status=$?
  out=$(cat "$work/stale.out")
  echo "round 4: $name frozen ($p0), $p1 took over; the frozen primary's put after SIGCONT: exit $status: $out"
  stale_status=$status stale_out=$out
  # The old primary's own copy holds the refused put until the new primary
  # resyncs it as a replica: the regions are read once that is done.
  [ "$fault" = no-fencing ] && return 0  # the control's stale primary never steps down
  wait_all_live || die "the old primary did not rejoin as a replica within $wait_s s"
}

# Each member's region offline: acknowledged puts on at least two members
# (a majority: the third may have been the one killed), the stale put on none.
check_regions() {
  stop_nodes
  local i n lost=0 stale=""
  # Under a sanitizer a finding ends its process: say so, whatever else passed.
  ! grep -l 'Sanitizer\|runtime error' "$work"/*.log || die "a sanitizer reported on a process (logs above)"
  for i in 0 1 2; do
    kv offline --region "$work/n$i.pool" dump >"$work/n$i.dump" 2>&1 || die "offline dump of n$i failed"
    grep -q '^k-stale=' "$work/n$i.dump" && stale+="n$i "
  done
  regions_lost_acked=0
  if [ -s "$work/acked" ]; then
    # One awk over the three dumps (key=value lines), not three greps per
    # key: under the lab's emulation 3,000 greps took about 6 minutes.
    local short
    short=$(awk -F= 'FILENAME == ARGV[1] { if ($0 != "") want[$0] = 1; next }
                     !seen[FILENAME, $1]++ { members[$1]++ }
                     END { for (k in want) if (members[k] < 2) print k, members[k] + 0 }' \
              "$work/acked" "$work/n0.dump" "$work/n1.dump" "$work/n2.dump")
    if [ -n "$short" ]; then
      lost=$(grep -c . <<<"$short")
      regions_lost_acked=$lost
      head -n 5 <<<"$short" | while read -r key n; do echo "acknowledged $key on $n members"; done
    fi
  fi
  for k in k-before=v1 k-after=v2; do
    [ -n "${stale_out+set}" ] || break  # round 4 did not run
    n=$(cat "$work"/n*.dump | grep -c "^$k$")
    [ "$n" -ge 2 ] || lost=$((lost + 1))
  done
  echo "regions: $(sort -u "$work/acked" 2>/dev/null | wc -l) acknowledged load puts, $lost short of a majority; stale put on: ${stale:-none}"
  regions_lost=$lost regions_stale=$stale
}

if [ "$mode" = planted ]; then
  round_stale_primary no-fencing
  check_regions
  damage=""
  [ "$stale_status" = 0 ] && damage+="the stale put was acknowledged; "
  [ -n "$regions_stale" ] && damage+="the stale put is on $regions_stale; "
  [ "$regions_lost" -gt 0 ] && damage+="$regions_lost acknowledged puts lost; "
  [ -n "$damage" ] || die "control: without fencing the stale primary should have changed the group"
  echo "PASSED (control): without fencing the stale primary changed the group: $damage"
  exit 0
fi

if [ "$mode" = planted-ack ]; then
  for i in 0 1 2; do start_node "$i" ack-before-commit; done
  round_replicas_lost ack-before-commit
  check_regions
  [ "$regions_lost_acked" -gt 0 ] ||
    die "control: with +OK before the commit, no acknowledged pipelined put was found short of a majority"
  echo "PASSED (control): with +OK before the commit, $regions_lost_acked acknowledged puts are on fewer than two members"
  exit 0
fi

for i in 0 1 2; do start_node "$i"; done
round_kill_primary
round_replicas_lost
round_etcd_one
round_etcd_two
round_stale_primary ignore-lease
[ "$stale_status" != 0 ] || die "the stale primary acknowledged its put after a newer one took over"
grep -q 'FENCED' <<<"$stale_out" || die "the stale primary's put failed, but not with FENCED: $stale_out"
check_regions
[ "$regions_lost" = 0 ] || die "$regions_lost acknowledged puts are not on a majority of members"
[ -z "$regions_stale" ] || die "the stale put reached $regions_stale"
echo "PASSED: failover on kill -9 (with pipelined loads, and after the replicas were lost), etcd member loss and no quorum handled; the stale primary was fenced"
exit 0
}
