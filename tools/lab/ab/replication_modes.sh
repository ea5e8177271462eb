#!/bin/bash
# tools/lab/ab/replication_modes.sh: runs INSIDE the lab VM. A majority-of-3
# commit over rdma:// (rpm-bench --replication, 8 B, qd 1, as
# replication_floor.sh) for each pair of the servers' and the client's
# completion modes, ROUNDS rounds each: on the VM's two vCPUs, three
# servers and a committing thread compete for a CPU, and who spins decides
# the latency more than anything rpm does per commit.
#   RPM_LAB_ARTIFACTS=OUT tools/lab/run --pm adr -- tools/lab/ab/replication_modes.sh "$PWD/build/bin" [ROUNDS] [SERVER:CLIENT ...]
bin=$1 rounds=${2:-2}
[ -x "$bin/rpm-bench" ] && [ -x "$bin/rpm-server" ] || { echo "replication_modes.sh: no rpm-bench and rpm-server in '$bin'" >&2; exit 2; }
[ -n "$RPM_LAB_RDMA_ADDR" ] && [ -n "$RPM_LAB_PM" ] || { echo "replication_modes.sh: runs inside the lab VM (tools/lab/run), which sets RPM_LAB_RDMA_ADDR and RPM_LAB_PM" >&2; exit 2; }
case $rounds in ''|*[!0-9]*|0) echo "replication_modes.sh: ROUNDS must be a positive number, not '$rounds'" >&2; exit 2 ;; esac
shift; [ $# -gt 0 ] && shift  # what is left: the pairs
pairs=("$@"); [ ${#pairs[@]} -eq 0 ] && pairs=(event:event event:adaptive event:busy adaptive:adaptive adaptive:event busy:busy)
for pair in "${pairs[@]}"; do
  case ${pair/:/\/} in busy/busy|busy/adaptive|busy/event|adaptive/busy|adaptive/adaptive|adaptive/event|event/busy|event/adaptive|event/event) ;;
    *) echo "replication_modes.sh: '$pair' is not SERVER:CLIENT, each busy, adaptive or event" >&2; exit 2 ;; esac
done
out=${RPM_LAB_OUT:-/tmp} addr=$RPM_LAB_RDMA_ADDR pm=$RPM_LAB_PM
printf 'bench:%s\n' 0123456789abcdef0123456789abcdef > /tmp/s.secrets; echo 0123456789abcdef0123456789abcdef > /tmp/s.secret
uris="rdma://$addr:7700,rdma://$addr:7701,rdma://$addr:7702"
for pair in "${pairs[@]}"; do
  smode=${pair%%:*} cmode=${pair##*:}
  pids=()
  for p in 0 1 2; do
    region="pm=$pm"; [ $p -gt 0 ] && region="pm=/dev/shm/rep$p:64M"
    timeout 300 "$bin/rpm-server" --listen "rdma://$addr:$((7700 + p))" --region "$region" --secrets-file /tmp/s.secrets \
      --completion "$smode" > "$out/server-$smode-$p.log" 2>&1 &
    pids+=($!)
  done
  for p in 0 1 2; do for i in $(seq 1 200); do grep -q "region pm" "$out/server-$smode-$p.log" && break; sleep 0.2; done; done
  for rep in $(seq 1 "$rounds"); do
    timeout -k 5 120 "$bin/rpm-bench" --replication --replica "$uris" --id bench --secret-file /tmp/s.secret --region pm \
      --replicas 3 --durability majority-local --batch 0 --sizes 8 --duration 1 --warmup 0.2 --rounds 1 \
      --completion "$cmode" --json --output "$out/rep-$smode-$cmode-$rep.json" --quiet > /dev/null 2> "$out/rep-$smode-$cmode-$rep.err"
    echo "rep $smode:$cmode $rep rc=$?"
  done
  kill "${pids[@]}"; wait "${pids[@]}" 2>/dev/null
  rm -f /dev/shm/rep1 /dev/shm/rep2
done
