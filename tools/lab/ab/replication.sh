#!/bin/bash
# tools/lab/ab/replication.sh: runs INSIDE the lab VM. rpm-bench --replication
# over three rdma:// replicas (rpm-servers of the AFTER build), two client
# builds alternating, 3 rounds (docs/benchmarks-history.md, "The committing thread
# polls its rdma:// members").
#   RPM_LAB_ARTIFACTS=OUT tools/lab/run --share BEFORE_CHECKOUT -- \
#     tools/lab/ab/replication.sh BEFORE_CHECKOUT/build/bin "$PWD/build/bin" [completion]
before=$1 after=$2 comp=${3:-adaptive}; out=${RPM_LAB_OUT:-/tmp}
. "$(dirname "$0")/../../lib/own_library.sh"
own_library "$before" rpm-bench && own_library "$after" rpm-bench || exit 2
addr=$RPM_LAB_RDMA_ADDR; pm=$RPM_LAB_PM
printf 'bench:%s\n' 0123456789abcdef0123456789abcdef > /tmp/s.secrets; echo 0123456789abcdef0123456789abcdef > /tmp/s.secret
$after/rpm-server --listen "rdma://$addr:7700" --region "pm=$pm" --secrets-file /tmp/s.secrets --completion $comp > $out/server0.log 2>&1 &
pids=($!)
for p in 1 2; do
  $after/rpm-server --listen "rdma://$addr:$((7700 + p))" --region "pm=/dev/shm/rep$p:64M" --secrets-file /tmp/s.secrets --completion $comp > $out/server$p.log 2>&1 &
  pids+=($!)
done
for p in 0 1 2; do for i in $(seq 1 200); do grep -q "region pm" $out/server$p.log && break; sleep 0.2; done; done
uris="rdma://$addr:7700,rdma://$addr:7701,rdma://$addr:7702"
for rep in 1 2 3; do
  for build in before after; do
    b=$before; [ $build = after ] && b=$after
    timeout -k 5 300 $b/rpm-bench --replication --replica "$uris" --id bench --secret-file /tmp/s.secret --region pm \
      --replicas 3 --durability majority-local --batch 0 --sizes 8,64,4096 --duration 1 --warmup 0.2 --rounds 1 \
      --completion $comp --json --output $out/rep-$build-$rep.json --quiet > /dev/null 2> $out/rep-$build-$rep.err
    echo "$build $rep rc=$?"
  done
done
kill "${pids[@]}"; wait
