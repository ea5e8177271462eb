#!/bin/bash
# tools/lab/ab/floor.sh: runs INSIDE the lab VM. The floor of each of rpm's
# rdma:// operations next to rpm itself, in one VM run, round by round:
# perftest (ib_read_lat, ib_write_lat, ib_send_lat), rpm-floor (the same
# work requests as rpm's operations on rpm's verbs layer, busy-polled, no
# rpm above it: tools/floor/floor.hpp), and rpm-bench against rpm-server in
# busy and in adaptive mode (write, read, persist; 8 B, qd 1, callback and
# sync APIs). JSON and perftest output to $RPM_LAB_OUT; docs/benchmarks.md,
# "RDMA in the lab", has today's figures; tools/lab/ab/floor_table.py
# makes the table. A round runs ib_read_lat and ib_write_lat again at its
# end, and the order of rpm-floor and rpm's four runs turns by one each
# round: what ran late in a round measured worse against a perftest run at
# its start alone (rpm-floor, run last: 1.19x where it is 0.98x to 1.05x
# run first), so a round's baseline is the mean of both perftest runs.
#   RPM_LAB_ARTIFACTS=OUT tools/lab/run --pm adr|eadr -- tools/lab/ab/floor.sh "$PWD/build/bin" [ROUNDS]
bin=$1 rounds=${2:-3}; out=${RPM_LAB_OUT:-/tmp}
[ -x "$bin/rpm-bench" ] && [ -x "$bin/rpm-floor" ] || { echo "floor.sh: no rpm-bench and rpm-floor in '$bin'" >&2; exit 2; }
case $rounds in ''|*[!0-9]*|0) echo "floor.sh: ROUNDS must be a positive number, not '$rounds'" >&2; exit 2 ;; esac
addr=$RPM_LAB_RDMA_ADDR; pm=$RPM_LAB_PM
. "$(dirname "$0")/perftest.sh"
printf 'bench:%s\n' 0123456789abcdef0123456789abcdef > /tmp/s.secrets; echo 0123456789abcdef0123456789abcdef > /tmp/s.secret
servers=()
for comp in busy adaptive; do
  p=7700; [ $comp = adaptive ] && p=7701
  $bin/rpm-server --listen "rdma://$addr:$p" --region "pm=$pm" --secrets-file /tmp/s.secrets --completion $comp \
    > $out/server-$comp.log 2>&1 &
  servers+=($!)
  for i in $(seq 1 100); do grep -q "region pm" $out/server-$comp.log && break; sleep 0.2; done
done
port=18600
for rep in $(seq 1 $rounds); do
  for tool in ib_read_lat ib_write_lat ib_send_lat; do
    port=$((port+1)); perftest $tool $rep $port
  done
  runs=(floor busy:sync busy:callback adaptive:sync adaptive:callback)
  turn=$(( (rep - 1) % ${#runs[@]} ))
  for run in "${runs[@]:$turn}" "${runs[@]:0:$turn}"; do
    if [ "$run" = floor ]; then
      port=$((port+1))
      timeout 120 $bin/rpm-floor --listen "$addr:$port" --region "$pm" --timeout 110 > $out/floorsrv-$rep.txt 2>&1 &
      srv=$!
      for i in $(seq 1 100); do grep -q listening $out/floorsrv-$rep.txt && break; sleep 0.2; done
      timeout 120 $bin/rpm-floor --connect "$addr:$port" --size 8 --ops 2000 --warmup 200 --rounds 1 \
        --json $out/floor-$rep.json > $out/floor-$rep.txt 2>&1
      echo "floor $rep rc=$?"; wait $srv; echo "floor server $rep rc=$?"
      continue
    fi
    comp=${run%%:*} api=${run##*:}
    p=7700; [ $comp = adaptive ] && p=7701
    timeout 120 $bin/rpm-bench --connect "rdma://$addr:$p" --id bench --secret-file /tmp/s.secret --region pm \
      --tests write,read,persist --sizes 8 --qd 1 --threads 1 --duration 1 --warmup 0.2 --rounds 1 --api $api \
      --completion $comp --no-forced --json --output $out/$comp-$api-$rep.json --quiet > /dev/null 2> $out/$comp-$api-$rep.err
    echo "$comp $api $rep rc=$?"
  done
  for tool in ib_read_lat ib_write_lat; do
    port=$((port+1)); perftest $tool $rep-end $port
  done
done
kill "${servers[@]}"; wait
