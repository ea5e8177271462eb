#!/usr/bin/env bash
# rpm-kvstore on three nodes A, B, C (each a region file; 127.0.0.1 only):
# the primary runs `load` on one node's file with durability majority (the
# local copy counts: 2 of 3) and logs each put only after its commit
# returned; the two other nodes run `rpm-kvstore replica`. Each round, in a
# random order (the seed is printed), with 0.2-0.8 s of load between events:
#   replica   kill -9 a replica: commits go on (2 of 3); restart it on the
#             same port: it must rejoin, and then its file must hold every
#             put acknowledged before the restart
#   primary   kill -9 the primary and restart it on the same node (recovery
#             at open, index repaired from the log)
#   failover  SIGSTOP both replicas past the failure timeout: commits fail
#             with quorum_lost and nothing is acknowledged; then the primary's
#             node is lost (kill -9, region file deleted), both replicas are
#             killed, a former replica's file becomes the new primary, the
#             other is restarted, a blank node replaces the lost one
# Every kind runs at least once. At the end the load is killed and the
# replicas stopped: the more complete replica's file alone must hold every
# acknowledged put (a failover then would lose nothing); the replicas
# restart, the primary verifies every acknowledged put (opening with
# durability all, so every member is made equal), everything stops, and
# each node's file is checked offline: every acknowledged put present, and
# the same key=value dump on all three (no divergence).
#
# Usage: kv_fault_test.sh BIN_DIR [planted]
#   planted: the load acknowledges each put before its commit and ignores
#   a failed commit (--fault ack-before-quorum), and a failover round is
#   forced; the test then passes only if verify DOES report lost puts
#   (negative control).
# Environment (the lab runs it over rdma:// with longer timeouts):
#   RPM_KV_SCHEME tcp|rdma   RPM_KV_ADDR 127.0.0.1   RPM_KV_ROUNDS 6
#   RPM_KV_HEARTBEAT_MS 50   RPM_KV_FAILURE_TIMEOUT_MS 500   RPM_KV_RECONNECT_MS 200
#   RPM_KV_PAUSE (seconds of load between events; default 0.2-0.8)
#   RPM_KV_SIZE 256M (per region, allocated whole: 768M of /dev/shm for the three; a quiet 2-core host filled 32M within the six rounds)   RPM_KV_MIN_ACKED 500   RPM_KV_SEED   RPM_KV_DIR /dev/shm
#   RPM_KV_EVENTS  the rounds, in order, instead of random ones (e.g. failover,replica)
#
# The whole script is one { ...; exit; } block: bash reads it completely
# before running it, so editing it during a (lab) run cannot break that run.
{
set -uo pipefail
bin=$1
mode=${2:-normal}
scheme=${RPM_KV_SCHEME:-tcp}
addr=${RPM_KV_ADDR:-127.0.0.1}
rounds=${RPM_KV_ROUNDS:-6}
hb=${RPM_KV_HEARTBEAT_MS:-50} ft=${RPM_KV_FAILURE_TIMEOUT_MS:-500} rc=${RPM_KV_RECONNECT_MS:-200}
size=${RPM_KV_SIZE:-256M}
min_acked=${RPM_KV_MIN_ACKED:-500}
seed=${RPM_KV_SEED:-$((RANDOM))}
RANDOM=$seed
work=$(mktemp -d "${RPM_KV_DIR:-/dev/shm}/rpm-kv-fault.XXXXXX")
# A fresh number per run goes into every key: files reused from an earlier
# run cannot make verify pass.
run=$(( (RANDOM << 15 | RANDOM) * 100 ))
# Per wait: a bound on a process starting or a replica rejoining (the lab's
# processes are slow to start).
patience=$(( 30 + 20 * ft / 1000 ))
deadline=$((SECONDS + 60 + (20 + 20 * ft / 1000) * rounds))  # the whole test stops by itself

declare -A file port rpid  # per node: region file, replica port, replica pid
for n in A B C; do file[$n]=$work/node-$n.pool; port[$n]=0; rpid[$n]=; done
primary=A
load_pid=
cleanup() {
  for n in A B C; do [ -n "${rpid[$n]}" ] && kill -9 "${rpid[$n]}" 2>/dev/null; done
  [ -n "$load_pid" ] && kill -9 "$load_pid" 2>/dev/null
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
die() {
  echo "FAILED: $*"
  echo "--- load log (tail)"; tail -n 30 "$work/load.log" 2>/dev/null
  exit 1
}
check_time() { [ $SECONDS -lt $deadline ] || die "timed out (deadline)"; }
pause() { sleep "${RPM_KV_PAUSE:-0.$((RANDOM % 7 + 2))}"; }
acked() { wc -l <"$work/acked"; }
acked_above() { [ "$(acked)" -gt "$1" ]; }
alive() {  # a zombie still answers kill -0: look at its state
  local state; state=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)
  [ -n "$state" ] && [ "$state" != Z ]
}
gone() { ! alive "$1"; }
last_open() { grep -E ': generation [0-9]+, [0-9]+ records' "$work/load.log" | tail -n 1 | sed 's/.*: generation/generation/'; }
rejoins() { grep -c -F "$(uri "$1") rejoined" "$work/load.log"; }  # the load prints replica events
rejoins_above() { [ "$(rejoins "$1")" -gt "$2" ]; }
resynced() { grep -F "$(uri "$1"): live" "$work/load.log" | tail -n 1 | sed 's/.* resyncs, //'; }
replicas_of() { for n in A B C; do [ "$n" != "$primary" ] && echo "$n"; done; }
uri() { echo "$scheme://$addr:${port[$1]}"; }
# until TIMEOUT_S COMMAND...: poll the command (a function, so that it looks
# afresh each time); false when time runs out
until_true() {
  local end=$((SECONDS + $1)); shift
  until "$@"; do [ $SECONDS -lt $end ] || return 1; check_time; sleep 0.05; done
}

start_replica() {  # NODE: serve its file on its port (0: any, first time)
  local n=$1
  rm -f "$work/port-$n"
  "$bin/rpm-kvstore" replica --listen "$scheme://$addr:${port[$n]}" --region "${file[$n]}" --size "$size" \
    --client kv:pw --port-file "$work/port-$n" >>"$work/replica-$n.log" 2>&1 &
  rpid[$n]=$!
  until_true "$patience" test -s "$work/port-$n" || { cat "$work/replica-$n.log"; die "replica $n did not start"; }
  port[$n]=$(cat "$work/port-$n")
}
kill_replica() { kill -9 "${rpid[$1]}" 2>/dev/null; wait "${rpid[$1]}" 2>/dev/null; rpid[$1]=; }
stop_replica() {  # NODE: SIGTERM, as an operator would
  kill -TERM "${rpid[$1]}"
  until_true 20 gone "${rpid[$1]}" || { echo "replica $1 ignored SIGTERM"; kill -9 "${rpid[$1]}"; status=1; }
  wait "${rpid[$1]}" 2>/dev/null
  rpid[$1]=
}

primary_args() {  # the primary's options, for the current roles
  local args=(--local "${file[$primary]}" --size "$size" --id kv --secret pw
              --heartbeat-ms "$hb" --failure-timeout-ms "$ft" --reconnect-ms "$rc")
  for n in $(replicas_of); do args+=(--replica "$(uri "$n")"); done
  echo "${args[@]}"
}
fault=()
[ "$mode" = planted ] && fault=(--fault ack-before-quorum)
start_load() {  # on the current primary, with a new run number; waits for its first acks
  run=$((run + 1))
  local before; before=$(acked)
  # shellcheck disable=SC2046  # primary_args: paths and URIs without spaces
  "$bin/rpm-kvstore" primary $(primary_args) --durability majority \
    load --count 1000000 --acked "$work/acked" --run "$run" "${fault[@]}" >>"$work/load.log" 2>&1 &
  load_pid=$!
  until_true "$patience" acked_above "$before" || die "the load on node $primary acknowledged nothing"
}
stop_load() { kill -9 "$load_pid" 2>/dev/null; wait "$load_pid" 2>/dev/null; load_pid=; }
load_alive() { alive "$load_pid" || die "the load exited"; }
failed_puts() { grep -c '^load: put ' "$work/load.log"; }  # the load's quorum_lost lines

# --- the events ---------------------------------------------------------
event_replica() {
  local n; n=$(replicas_of | sed -n "$((RANDOM % 2 + 1))p")
  local rejoined; rejoined=$(rejoins "$n")
  local a0; a0=$(acked)
  kill_replica "$n"
  pause
  local a1; a1=$(acked)
  load_alive
  [ "$a1" -gt "$a0" ] || die "no put acknowledged with replica $n down (2 of 3 members are up)"
  start_replica "$n"
  local t0=$SECONDS
  until_true "$patience" rejoins_above "$n" "$rejoined" ||
    die "replica $n did not rejoin"
  sleep 0.1  # the load reports what the resync copied after its next put
  echo "  replica $n killed at $a0 acks, $((a1 - a0)) acked while it was down, restarted and caught up" \
       "(rejoined) within $((SECONDS - t0 + 1)) s ($(resynced "$n"))"
  # A replica counts again only once caught up: its file (read while it
  # serves; the log below the tail does not change) holds every put
  # acknowledged before its restart.
  # (Planted: earlier failovers lost acknowledged puts; only the end decides.)
  head -n "$a1" "$work/acked" >"$work/acked-before"
  if ! "$bin/rpm-kvstore" offline --region "${file[$n]}" verify --acked "$work/acked-before" >"$work/rejoin.log" 2>&1 &&
     [ "$mode" != planted ]; then
    die "replica $n rejoined without every put acknowledged before its restart: $(tail -n 1 "$work/rejoin.log")"
  fi
  echo "  replica $n's file after the rejoin: $(tail -n 1 "$work/rejoin.log")"
}

event_primary() {
  local a0; a0=$(acked)
  stop_load
  start_load
  echo "  primary on node $primary killed at $a0 acks, restarted on the same file: $(last_open)"
}

event_failover() {
  local a=() n
  mapfile -t a <<<"$(replicas_of)"
  local q0; q0=$(failed_puts)
  for n in "${a[@]}"; do kill -STOP "${rpid[$n]}"; done
  # A put whose commit returned just before the stop may still be logging.
  sleep "$(awk -v ft="$ft" 'BEGIN { print ft / 10000 + 0.1 }')"
  local s0; s0=$(acked)
  sleep "$(awk -v ft="$ft" 'BEGIN { print 3 * ft / 1000 + 0.3 }')"  # well past the failure timeout
  local s1 q1; s1=$(acked) q1=$(failed_puts)
  load_alive
  echo "  partition: replicas ${a[*]} stopped; $((s1 - s0)) puts acknowledged meanwhile, $((q1 - q0)) failed with quorum lost"
  if [ "$mode" != planted ]; then
    [ "$s1" -eq "$s0" ] || die "$((s1 - s0)) puts acknowledged with no replica answering"
    [ "$q1" -gt "$q0" ] || die "no commit failed with quorum lost while both replicas were stopped"
  fi
  stop_load
  rm -f "${file[$primary]}"  # the node is lost
  for n in "${a[@]}"; do kill_replica "$n"; done
  local lost=$primary new=${a[$((RANDOM % 2))]}
  local other; other=$([ "$new" = "${a[0]}" ] && echo "${a[1]}" || echo "${a[0]}")
  primary=$new
  port[$lost]=0
  start_replica "$other"
  start_replica "$lost"   # a blank node in place of the lost one
  start_load
  echo "  failover: node $lost lost with its file; node $new's file is the primary now ($(last_open))," \
       "$other restarted, $lost blank"
}

# Every kind once, then random ones; shuffled. Planted: failover is in there.
events=(replica primary failover)
while [ ${#events[@]} -lt "$rounds" ]; do events+=("$(echo replica primary failover | cut -d' ' -f$((RANDOM % 3 + 1)))"); done
# (No <(...): lab VMs before stop 46 had no /dev/fd.)
mapfile -t events <<<"$(printf '%s\n' "${events[@]:0:$rounds}" | awk -v s="$seed" 'BEGIN { srand(s) } { print rand() "\t" $0 }' |
                        sort | cut -f2)"
[ "$mode" = planted ] && ! printf '%s\n' "${events[@]}" | grep -q failover && events[-1]=failover
[ -n "${RPM_KV_EVENTS:-}" ] && IFS=, read -r -a events <<<"$RPM_KV_EVENTS"  # e.g. failover,replica,replica
for e in "${events[@]}"; do case $e in replica|primary|failover) ;; *) echo "RPM_KV_EVENTS: '$e' is not replica, primary or failover"; exit 2 ;; esac; done
echo "kv_fault_test: mode $mode, seed $seed, rounds: ${events[*]}; $scheme://$addr, failure timeout $ft ms, work $work"

: >"$work/acked"
start_replica B
start_replica C
start_load
for round in $(seq "${#events[@]}"); do
  pause
  check_time
  echo "round $round: ${events[$((round - 1))]} (primary on node $primary, $(acked) puts acknowledged so far)"
  "event_${events[$((round - 1))]}"
done
pause
stop_load
total=$(acked)
echo "load stopped (kill -9) after $total acknowledged puts"
[ "$total" -ge "$min_acked" ] || die "too few acknowledged puts to mean anything (minimum $min_acked)"

status=0
# A failover now, with the primary's node lost, must lose nothing: the most
# complete replica's file alone holds every acknowledged put (a replica
# counts only once caught up, so holding a put means holding all before it).
# Checked before the primary opens again, since that open equalises everyone.
best=
for n in $(replicas_of); do
  stop_replica "$n"
  "$bin/rpm-kvstore" offline --region "${file[$n]}" verify --acked "$work/acked" >"$work/failover-$n.log" 2>&1
  lost=$(sed -n 's/^verify: checked [0-9]*, lost \([0-9]*\)$/\1/p' "$work/failover-$n.log")
  echo "  failover check, replica $n alone: $(tail -n 1 "$work/failover-$n.log")"
  [ -n "$lost" ] && { [ -z "$best" ] || [ "$lost" -lt "$best" ]; } && best=$lost
done
if [ "$mode" != planted ] && [ "${best:-1}" -ne 0 ]; then
  echo "FAILED: no replica holds every acknowledged put: a failover now would lose some"; status=1
fi
for n in $(replicas_of); do start_replica "$n"; done

# The primary opens once more (recovery makes every member equal; with
# durability all its commit waits for every one) and checks every put.
# shellcheck disable=SC2046
"$bin/rpm-kvstore" primary $(primary_args) --durability all verify --acked "$work/acked" >"$work/verify.log" 2>&1 ||
  status=1
sed 's/^/  primary: /' "$work/verify.log"
for n in $(replicas_of); do stop_replica "$n"; done
for n in A B C; do
  "$bin/rpm-kvstore" offline --region "${file[$n]}" verify --acked "$work/acked" >"$work/offline-$n.log" 2>&1 || status=1
  "$bin/rpm-kvstore" offline --region "${file[$n]}" dump >"$work/dump-$n" 2>>"$work/offline-$n.log" || status=1
  echo "  offline node $n$([ "$n" = "$primary" ] && echo ' (primary)'): $(tail -n 1 "$work/offline-$n.log"), $(wc -l <"$work/dump-$n") live keys"
done
diverged=0
cmp -s "$work/dump-A" "$work/dump-B" && cmp -s "$work/dump-A" "$work/dump-C" || diverged=1
if [ "$mode" = planted ]; then
  grep -q 'lost [1-9]' "$work/verify.log" && { echo "negative control: lost puts found, as they must be"; exit 0; }
  echo "negative control FAILED: the planted ack-before-quorum bug went unnoticed"; exit 1
fi
[ $diverged -eq 0 ] || { echo "FAILED: the nodes' dumps differ"; diff "$work/dump-A" "$work/dump-B" | head; status=1; }
[ $status -eq 0 ] && echo "passed: $total acknowledged puts on every node, no divergence"
exit $status
}
