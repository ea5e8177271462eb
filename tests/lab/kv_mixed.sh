#!/usr/bin/env bash
# Mixed transports: one rpm-kvstore replica over rdma://, one over tcp://,
# one primary writing to both. Every put acknowledged by the primary must be
# in both replicas' region files, and stats must show both replicas live
# with the flush method each grant chose. Given RDMA_REGION (the lab's PM
# device) the rdma:// replica keeps its log there, and given METHOD its
# grant must be that (the trixie lab: native_flush, so the replicated log's
# every commit on that replica is a write and an IBTA FLUSH).
# Usage: kv_mixed.sh BIN_DIR RDMA_ADDR [RDMA_REGION [METHOD]]
{
set -uo pipefail
bin=$1
addr=$2
method=${4:-}
work=$(mktemp -d /dev/shm/rpm-kv-mixed.XXXXXX)
rdma_region=${3:-$work/r.pool}
pids=()
cleanup() { for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
start_replica() {  # URI FILE PORTFILE
  "$bin/rpm-kvstore" replica --listen "$1" --region "$2" --size 16M --port-file "$3" >>"$work/replicas.log" 2>&1 &
  pids+=($!)
}
start_replica "rdma://$addr:0" "$rdma_region" "$work/r.port"
start_replica "tcp://127.0.0.1:0" "$work/t.pool" "$work/t.port"
for _ in $(seq 1200); do [ -s "$work/r.port" ] && [ -s "$work/t.port" ] && break; sleep 0.05; done
if ! [ -s "$work/r.port" ] || ! [ -s "$work/t.port" ]; then echo "replicas did not start"; cat "$work/replicas.log"; exit 1; fi
rdma_uri="rdma://$addr:$(cat "$work/r.port")"
tcp_uri="tcp://127.0.0.1:$(cat "$work/t.port")"
kv=("$bin/rpm-kvstore" primary --local "$work/p.pool" --size 16M --replica "$rdma_uri" --replica "$tcp_uri"
    --durability all --failure-timeout-ms 5000)
cmds=$(for i in $(seq 20); do echo "put mixed-$i value-$i"; done; echo stats)
out=$(printf '%s\n' "$cmds" | timeout 300 "${kv[@]}" shell 2>&1) || { echo "$out"; exit 1; }
echo "$out" | grep -E '^replica|durability'
acked=$(echo "$out" | grep -c '^ok$')
[ "$acked" = 20 ] || { echo "expected 20 puts acknowledged with durability all, got $acked"; echo "$out"; exit 1; }
echo "$out" | grep -q "replica 0 $rdma_uri: live" || { echo "the rdma:// replica is not live"; exit 1; }
echo "$out" | grep -q "replica 1 $tcp_uri: live" || { echo "the tcp:// replica is not live"; exit 1; }
[ -z "$method" ] || echo "$out" | grep "^replica 0 " | grep -q ", method $method," ||
  { echo "the rdma:// replica's method is not $method"; exit 1; }
for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; pids=()
for f in "$rdma_region" "$work/t.pool"; do
  n=$("$bin/rpm-kvstore" offline --region "$f" dump | grep -c '^mixed-')
  [ "$n" = 20 ] || { echo "replica $f holds $n of the 20 puts"; exit 1; }
done
echo "kv mixed: 20 puts on an rdma:// replica (${rdma_region#"$work"/}${method:+, $method}) and a tcp:// one" \
     "(durability all), both regions hold all 20"
exit 0
}
