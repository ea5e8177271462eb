#!/bin/bash
# tools/lab/ab/replication_floor.sh: runs INSIDE the lab VM. The floor under
# issue 17's replication goal (a majority-of-3 commit <= 1.6x a single
# persist), round by round in one VM run:
#   - rpm-floor send_flush to one server (the PM device), and to three at
#     once (the PM device and two tmpfs files, as the replication benchmark's
#     replicas), done at two completions (--quorum 2): the work requests a
#     Replicator's commit posts, with nothing of rpm above them. Its servers
#     sleep on their completion channels (--wait event): three spinning
#     servers and a spinning client on two vCPUs wait for scheduler ticks
#     (a p50 of 4.2 ms, measured once); the single server also spins
#     (--wait busy, as tools/lab/ab/floor.sh);
#   - rpm-bench --replication against three rpm-servers on the same three
#     regions (majority of 3, qd 1), with its single-persist baseline.
# JSON to $RPM_LAB_OUT; docs/benchmarks-history.md, "The replication floor over
# rdma://", has the figures.
#   RPM_LAB_ARTIFACTS=OUT tools/lab/run --pm adr -- tools/lab/ab/replication_floor.sh "$PWD/build/bin" [ROUNDS] [COMPLETION]
bin=$1 rounds=${2:-3} comp=${3:-adaptive}; out=${RPM_LAB_OUT:-/tmp}
addr=$RPM_LAB_RDMA_ADDR; pm=$RPM_LAB_PM
printf 'bench:%s\n' 0123456789abcdef0123456789abcdef > /tmp/s.secrets; echo 0123456789abcdef0123456789abcdef > /tmp/s.secret
for f in 1 2; do truncate -s 64M /dev/shm/floor$f; done
regions=("$pm" /dev/shm/floor1 /dev/shm/floor2)

# floor_run TAG QUORUM WAIT PORT...: one rpm-floor server per port (the
# regions in order), then the client against all of them; every side is bounded.
floor_run() {
  local tag=$1 quorum=$2 wait=$3; shift 3
  local srvs=() targets="" i=0
  for p in "$@"; do
    timeout 150 $bin/rpm-floor --listen "$addr:$p" --region "${regions[$i]}" --wait $wait --timeout 140 > $out/fsrv-$tag-$p.txt 2>&1 &
    srvs+=($!)
    for j in $(seq 1 100); do grep -q listening $out/fsrv-$tag-$p.txt && break; sleep 0.2; done
    targets+="${targets:+,}$addr:$p"; i=$((i+1))
  done
  timeout 150 $bin/rpm-floor --connect "$targets" --quorum $quorum --patterns send_flush --size 8 --ops 2000 \
    --warmup 200 --rounds 1 --timeout 140 --json $out/floor-$tag.json > $out/floor-$tag.txt 2>&1
  echo "floor $tag rc=$?"
  wait "${srvs[@]}"
}

port=18600
for rep in $(seq 1 "$rounds"); do
  floor_run single-busy-$rep 1 busy $((port+1))
  floor_run single-event-$rep 1 event $((port+2))
  floor_run quorum-event-$rep 2 event $((port+3)) $((port+4)) $((port+5))
  port=$((port+5))
done

# rpm's replication over the same three regions (the PM device's region
# name is pm on every server: rpm-bench --replication opens it on each).
$bin/rpm-server --listen "rdma://$addr:7700" --region "pm=$pm" --secrets-file /tmp/s.secrets --completion $comp > $out/server0.log 2>&1 &
pids=($!)
for p in 1 2; do
  $bin/rpm-server --listen "rdma://$addr:$((7700 + p))" --region "pm=/dev/shm/rep$p:64M" --secrets-file /tmp/s.secrets \
    --completion $comp > $out/server$p.log 2>&1 &
  pids+=($!)
done
for p in 0 1 2; do for i in $(seq 1 200); do grep -q "region pm" $out/server$p.log && break; sleep 0.2; done; done
uris="rdma://$addr:7700,rdma://$addr:7701,rdma://$addr:7702"
for rep in $(seq 1 "$rounds"); do
  timeout -k 5 300 $bin/rpm-bench --replication --replica "$uris" --id bench --secret-file /tmp/s.secret --region pm \
    --replicas 3 --durability majority-local --batch 0 --sizes 8 --duration 1 --warmup 0.2 --rounds 1 \
    --completion $comp --json --output $out/rep-$rep.json --quiet > /dev/null 2> $out/rep-$rep.err
  echo "rep $rep rc=$?"
done
kill "${pids[@]}"; wait
rm -f /dev/shm/floor1 /dev/shm/floor2
