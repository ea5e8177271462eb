#!/usr/bin/env bash
# rpm-kvstore as Redis's own tools drive it (examples/kvstore/redis_commands.hpp):
# a 3-member etcd and 3 `rpm-kvstore node`s on 127.0.0.1, then, against the
# primary:
#   1. redis-cli: CONFIG GET, MSET/MGET, EXISTS, DBSIZE, DEL of several keys,
#      SELECT 0 (and 1 refused), HELLO 2 (and 3 refused with NOPROTO),
#      CLIENT SETNAME (and an unknown subcommand refused), PING, ECHO,
#      unknown commands and wrong arities refused with Redis's words;
#   2. a pipeline of mixed writes and reads, sent at once on one socket:
#      the replies come back in order, each read seeing the writes before it;
#   3. redis-benchmark (SET, GET, MSET; 4 clients, pipelines of 16): it runs
#      without its "Could not fetch server CONFIG" warning, and every key it
#      set is then on a majority of the members (each region file read
#      offline: `rpm-kvstore dump`).
# Usage: kv_redis_tools_test.sh BIN_DIR
{
set -uo pipefail
bin=$1
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../../tools/lib/etcd.sh"
work=$(mktemp -d /dev/shm/rpm-kv-redis.XXXXXX)
node_pids=()
cleanup() {
  for p in "${node_pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  etcd_stop_all
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
die() {
  echo "FAILED: $*"
  for f in "$work"/*.log; do [ -f "$f" ] && { echo "--- $f"; tail -n 15 "$f"; }; done
  exit 1
}
for tool in redis-cli redis-benchmark; do
  command -v $tool >/dev/null || die "$tool is not installed (tools/install-deps installs redis-tools)"
done

etcd_start_all "$work" || die "etcd did not start"
members=() listen=() serve=()
for i in 0 1 2; do
  take_port lport && take_port sport || die "no free ports"
  listen[$i]="tcp://127.0.0.1:$lport" serve[$i]="127.0.0.1:$sport"
  members+=(--member "${listen[$i]}")
done
for i in 0 1 2; do
  "$bin/rpm-kvstore" node --name "n$i" --coordinator "$ETCD_URI" --listen "${listen[$i]}" \
    --region "$work/n$i.pool" --size 16M --serve "${serve[$i]}" "${members[@]}" >"$work/n$i.log" 2>&1 &
  node_pids+=($!)
done
# The primary: the node whose SET is answered OK (the others say NOTLEADER).
primary=
for _ in $(seq 300); do
  for s in "${serve[@]}"; do
    [ "$(timeout 5 redis-cli -h "${s%:*}" -p "${s##*:}" SET kvr-ready 1 2>/dev/null)" = OK ] && { primary=$s; break 2; }
  done
  sleep 0.1
done
[ -n "$primary" ] || die "no primary served a SET within 30 s"
echo "primary serves on $primary"
cli() { timeout 10 redis-cli -h "${primary%:*}" -p "${primary##*:}" "$@" 2>&1; }
expect() {  # WANT COMMAND...: redis-cli's output, lines joined by '|'
  local want=$1 got
  shift
  got=$(cli "$@" | paste -sd '|')
  # redis-cli ends an error reply with an empty line (as against Redis).
  [[ "$got" =~ ^(ERR|NOPROTO) ]] && got=${got%|}
  [ "$got" = "$want" ] || die "'$*': got '$got', want '$want'"
}

# 1. The commands, as redis-cli shows their replies.
expect 'save||appendonly|no' CONFIG GET save appendonly
expect 'databases|1' CONFIG GET 'data*'
expect '' CONFIG GET no-such-parameter
expect 'ERR unknown subcommand '"'"'SET'"'"'. Try CONFIG HELP.' CONFIG SET save 60
expect OK MSET a 1 b 2 c 3
expect '1|2||3' MGET a b nope c
expect 2 EXISTS a nope b
expect 2 DEL a b nope
expect 0 EXISTS a b
expect '|' MGET a b
expect OK SELECT 0
expect 'ERR DB index is out of range' SELECT 1
expect 'NOPROTO unsupported protocol version' HELLO 3
cli HELLO 2 | grep -qx rpm-kvstore || die "HELLO 2 does not name the server: $(cli HELLO 2 | paste -sd ' ')"
expect OK CLIENT SETNAME tester
expect 'ERR unknown subcommand '"'"'KILL'"'"'. Try CLIENT HELP.' CLIENT KILL 127.0.0.1:1
expect PONG PING
expect hi ECHO hi
dbsize=$(cli DBSIZE)
[[ "$dbsize" =~ ^[0-9]+$ ]] && [ "$dbsize" -ge 2 ] || die "DBSIZE: '$dbsize', want 2 or more (kvr-ready and c)"
cli INCR x | grep -q "^ERR unknown command 'INCR', with args beginning with: 'x'" || die "INCR: $(cli INCR x)"
expect "ERR wrong number of arguments for 'get' command" GET
expect "ERR wrong number of arguments for 'mset' command" MSET k1 v1 k2
expect "ERR syntax error (rpm-kvstore's SET takes no options)" SET k v EX 10

# 2. A mixed pipeline on one socket, written at once.
exec 3<>"/dev/tcp/${primary%:*}/${primary##*:}" || die "cannot connect to $primary"
r() { local a nl=$'\r\n' out="*$#"$'\r\n'; for a in "$@"; do out+="\$${#a}$nl$a$nl"; done; printf '%s' "$out"; }
{ r SET p1 one; r GET p1; r SET p1 two; r GET p1; r DEL p1; r GET p1; r NOPE; r MSET p2 x p3 y; r MGET p2 p3; r PING; } >&3
want=$'+OK\r\n$3\r\none\r\n+OK\r\n$3\r\ntwo\r\n:1\r\n$-1\r\n-ERR unknown command \'NOPE\', with args beginning with: \r\n+OK\r\n*2\r\n$1\r\nx\r\n$1\r\ny\r\n+PONG\r\n'
got=$(timeout 10 head -c ${#want} <&3) || die "the pipeline's replies did not all come: '$got'"
exec 3>&-
# ($(...) drops the last LF.)
[ "$got" = "${want%$'\n'}" ] || die "pipeline replies out of order or wrong: $(printf '%q' "$got")"
echo "redis tools: commands and a mixed pipeline answered as Redis answers them"

# 3. redis-benchmark, pipelined; then every key it set on a majority.
bench=$(timeout 120 redis-benchmark -h "${primary%:*}" -p "${primary##*:}" -t set,get,mset -n 3000 -c 4 -P 16 \
        -r 500 -d 16 -q 2>&1) || die "redis-benchmark failed: $bench"
echo "$bench" | tr '\r' '\n' | grep -v '^$' | tail -n 3
! grep -q 'Could not fetch server CONFIG' <<<"$bench" || die "redis-benchmark warned: $bench"
# The keys it set (key:000000000000 to key:000000000499, -r 500) as the
# primary holds them, each acknowledged; then read offline from every
# member's region once the nodes are stopped: each on two members or more.
for ((k = 0; k < 500; k++)); do printf 'key:%012d\n' "$k"; done >"$work/candidates"
xargs -a "$work/candidates" timeout 30 redis-cli -h "${primary%:*}" -p "${primary##*:}" MGET >"$work/values" ||
  die "MGET of the benchmark's keys failed"
paste -d= "$work/candidates" "$work/values" | grep -v '=$' >"$work/acked" || true
acked=$(wc -l <"$work/acked")
[ "$acked" -gt 100 ] || die "only $acked of the benchmark's keys are on the primary"
for p in "${node_pids[@]}"; do kill -TERM "$p"; done
for p in "${node_pids[@]}"; do timeout 20 tail --pid="$p" -f /dev/null; done
node_pids=()
for i in 0 1 2; do "$bin/rpm-kvstore" offline --region "$work/n$i.pool" dump >"$work/dump$i" 2>>"$work/dump.err" || :; done
missing=$(sort "$work/dump0" "$work/dump1" "$work/dump2" | uniq -c | awk '$1 >= 2 { print $2 }' |
          sort | comm -23 <(sort "$work/acked") -)
[ -z "$missing" ] || die "acknowledged keys on fewer than two members: $(head -n 5 <<<"$missing")"
echo "redis tools: all $acked keys the benchmark set are on a majority of the members"
exit 0
}
