#!/usr/bin/env bash
# Separate rpm-server and rpm-client processes on 127.0.0.1. The client
# streams numbered records and logs each one only after persist returned;
# meanwhile the server is killed with SIGKILL and restarted, three times,
# then the client itself is killed mid-stream. Afterwards every logged
# record must be readable from a fresh server: nothing acknowledged is lost.
#
# Usage: kill_test.sh BIN_DIR [planted]
#   planted: the client logs records BEFORE persisting them (a planted bug);
#   the test then passes only if verify DOES report losses (negative control).
# Environment (the lab runs it over rdma:// on PM; defaults: tcp on tmpfs):
#   RPM_KILL_SCHEME  tcp or rdma           RPM_KILL_ADDR  the server's address
#   RPM_KILL_REGION  PATH[:SIZE] of the region (default: a 16M tmpfs file)
#   RPM_KILL_ROUNDS  server kills (default 3)
#   RPM_KILL_PAUSE   seconds of streaming before each kill (default 0.3-0.6)
#   RPM_KILL_MIN_ACKED  fewer acknowledged records fail the run (default 1000)
#   RPM_KILL_COMPLETION rdma:// completion mode of client and server (default: theirs)
set -uo pipefail
bin=$1
mode=${2:-normal}
work=$(mktemp -d /dev/shm/rpm-kill-test.XXXXXX)
scheme=${RPM_KILL_SCHEME:-tcp}
addr=${RPM_KILL_ADDR:-127.0.0.1}
region=${RPM_KILL_REGION:-$work/kv.pool:16M}
rounds=${RPM_KILL_ROUNDS:-3}
# A fresh number per run goes into every record: a reused region (a PM
# device) still holding an earlier run's records cannot make verify pass.
run_id=$(( (RANDOM << 16 | RANDOM) + 1 ))
server_pid=
client_pid=
cleanup() {
  [ -n "$server_pid" ] && kill -9 "$server_pid" 2>/dev/null
  [ -n "$client_pid" ] && kill -9 "$client_pid" 2>/dev/null
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
deadline=$((SECONDS + 60 + 60 * rounds))  # the whole test stops by itself

completion=()
[ -n "${RPM_KILL_COMPLETION:-}" ] && completion=(--completion "$RPM_KILL_COMPLETION")

start_server() {
  rm -f "$work/port"
  "$bin/rpm-server" --listen "$scheme://$addr:${1:-0}" --region "kv=$region" --client app:pw "${completion[@]}" \
    --port-file "$work/port" >>"$work/server.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 600); do [ -s "$work/port" ] && return 0; sleep 0.05; done
  echo "server did not start"; cat "$work/server.log"; exit 1
}

client() { "$bin/rpm-client" --connect "$scheme://$addr:$port" --id app --secret pw "$@"; }

start_server 0
port=$(cat "$work/port")
fault=()
[ "$mode" = planted ] && fault=(--fault log-before-persist)
# Started directly (not through a shell function) so $! is the client itself.
"$bin/rpm-client" --connect "$scheme://$addr:$port" --id app --secret pw "${completion[@]}" \
  stream --region kv --count 200000 --acked-log "$work/acked" --run "$run_id" --reconnect-for 20 "${fault[@]}" \
  >"$work/client.log" 2>&1 &
client_pid=$!

for round in $(seq "$rounds"); do
  sleep "${RPM_KILL_PAUSE:-0.$((RANDOM % 4 + 3))}"
  kill -9 "$server_pid"; wait "$server_pid" 2>/dev/null
  echo "round $round: server killed after $(wc -l <"$work/acked") acknowledged records"
  sleep 0.2
  start_server "$port"
  [ $SECONDS -lt $deadline ] || { echo "timed out"; exit 1; }
done
sleep 0.5
kill -9 "$client_pid"; wait "$client_pid" 2>/dev/null; client_pid=
acked=$(wc -l <"$work/acked")
echo "client killed after $acked acknowledged records"
[ "$acked" -gt "${RPM_KILL_MIN_ACKED:-1000}" ] || { echo "too few records to mean anything"; cat "$work/client.log"; exit 1; }

kill -9 "$server_pid"; wait "$server_pid" 2>/dev/null
start_server "$port"
client verify --region kv --acked-log "$work/acked" --run "$run_id"
status=$?
if [ "$mode" = planted ]; then
  [ $status -ne 0 ] && { echo "negative control: losses found, as they must be"; exit 0; }
  echo "negative control FAILED: the planted bug went unnoticed"; exit 1
fi
exit $status
