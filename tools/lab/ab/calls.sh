#!/bin/bash
# tools/lab/ab/calls.sh: runs INSIDE the lab VM. What a library's own code
# costs a read here: rpm-floor's read with --calls N (N calls of distinct
# small functions per operation, before its post) for each N, next to
# ib_read_lat, round by round; rpm-floor also reports the calls' own time
# run alone. JSON and perftest output to $RPM_LAB_OUT; docs/benchmarks-history.md,
# "A call costs more than its instructions in the lab", has the figures.
#   RPM_LAB_ARTIFACTS=OUT tools/lab/run --pm adr -- tools/lab/ab/calls.sh "$PWD/build/bin" [ROUNDS] [N,N,...]
bin=$1 rounds=${2:-3} counts=${3:-0,50,100,150,300}; out=${RPM_LAB_OUT:-/tmp}
case $rounds in ''|*[!0-9]*|0) echo "calls.sh: ROUNDS must be a positive number, not '$rounds'" >&2; exit 2 ;; esac
case $counts in ''|*[!0-9,]*) echo "calls.sh: the counts must be numbers 0 to 512, comma-separated, not '$counts'" >&2; exit 2 ;; esac
addr=$RPM_LAB_RDMA_ADDR; pm=$RPM_LAB_PM
. "$(dirname "$0")/perftest.sh"
port=7900
for rep in $(seq 1 "$rounds"); do
  perftest ib_read_lat "$rep" $((18800 + rep))
  for n in ${counts//,/ }; do
    port=$((port + 1))
    timeout 120 "$bin/rpm-floor" --listen "$addr:$port" --region "$pm" --timeout 110 > "$out/floorsrv-$n-$rep.txt" 2>&1 &
    fs=$!
    for i in $(seq 1 100); do grep -q listening "$out/floorsrv-$n-$rep.txt" && break; sleep 0.2; done
    timeout 120 "$bin/rpm-floor" --connect "$addr:$port" --size 8 --ops 20000 --warmup 200 --rounds 1 --patterns read \
      --calls "$n" --json "$out/calls-$n-$rep.json" > "$out/calls-$n-$rep.txt" 2>&1
    echo "calls $n round $rep rc=$?"
    wait $fs
  done
done
