#!/bin/bash
# tools/lab/ab/perf.sh: runs INSIDE the lab VM. Where an operation's time
# goes, rpm against rpm-floor in one VM run: perf samples every CPU
# (cpu-clock: QEMU's TCG has no PMU) for 2 s in the steady state of
# rpm-bench (8 B, qd 1) and then of rpm-floor doing the same work requests;
# a perftest round gives the scale. Data to $RPM_LAB_OUT with the guest's
# kallsyms; tools/lab/ab/perf_split.py splits it per operation into each
# thread's user and kernel time (docs/benchmarks-history.md, "A call costs more
# than its instructions in the lab").
#   RPM_LAB_ARTIFACTS=OUT tools/lab/run --pm adr -- tools/lab/ab/perf.sh "$PWD/build/bin" [OP] [MODE] [API] [ROUNDS]
# OP: read (default), write or persist (rpm-floor: read_after_write or
# send_flush, by the region's decision); MODE: adaptive (default), busy,
# event; API: sync (default) or callback.
bin=$1 op=${2:-read} comp=${3:-adaptive} api=${4:-sync} rounds=${5:-1}; out=${RPM_LAB_OUT:-/tmp}
case $op in read|write) pattern=$op ;; persist) pattern=read_after_write; [ "$RPM_LAB_PM" != eadr ] && pattern=send_flush ;;
  *) echo "perf.sh: OP must be read, write or persist, not '$op'" >&2; exit 2 ;; esac
case $comp in busy|adaptive|event) ;; *) echo "perf.sh: MODE must be busy, adaptive or event, not '$comp'" >&2; exit 2 ;; esac
case $api in sync|callback) ;; *) echo "perf.sh: API must be sync or callback, not '$api'" >&2; exit 2 ;; esac
case $rounds in ''|*[!0-9]*|0) echo "perf.sh: ROUNDS must be a positive number, not '$rounds'" >&2; exit 2 ;; esac
command -v perf > /dev/null || { echo "perf.sh: no perf in the VM (the host's linux-perf)" >&2; exit 2; }
addr=$RPM_LAB_RDMA_ADDR; pm=$RPM_LAB_PM
. "$(dirname "$0")/perftest.sh"
cat /proc/kallsyms > "$out/kallsyms"
printf 'bench:%s\n' 0123456789abcdef0123456789abcdef > /tmp/s.secrets; echo 0123456789abcdef0123456789abcdef > /tmp/s.secret
sample() {  # NAME: 2 s of every CPU, written to the VM's /tmp (not the 9p share) and copied after
  perf record -a -e cpu-clock -F 2000 -g -o "/tmp/$1.data" -- sleep 2 > /dev/null 2>&1
  cp "/tmp/$1.data" "$out/"
}
"$bin/rpm-server" --listen "rdma://$addr:7701" --region "pm=$pm" --secrets-file /tmp/s.secrets --completion "$comp" > "$out/server.log" 2>&1 &
srv=$!
for i in $(seq 1 100); do grep -q "region pm" "$out/server.log" && break; sleep 0.2; done
for rep in $(seq 1 "$rounds"); do
  perftest ib_read_lat "$rep" $((18700 + rep))
  timeout 60 "$bin/rpm-bench" --connect "rdma://$addr:7701" --id bench --secret-file /tmp/s.secret --region pm \
    --tests "$op" --sizes 8 --qd 1 --threads 1 --duration 6 --warmup 0.2 --rounds 1 --api "$api" \
    --completion "$comp" --no-forced --json --output "$out/rpm-$rep.json" --quiet > /dev/null 2> "$out/rpm-$rep.err" &
  b=$!
  sleep 2; sample "rpm-$rep"; wait $b
  echo "rpm $rep rc=$?"
  port=$((7800 + rep))
  timeout 60 "$bin/rpm-floor" --listen "$addr:$port" --region "$pm" --timeout 50 > "$out/floorsrv-$rep.txt" 2>&1 &
  fs=$!
  for i in $(seq 1 100); do grep -q listening "$out/floorsrv-$rep.txt" && break; sleep 0.2; done
  # About 6 s at the VM's 35 to 50 µs per operation.
  timeout 60 "$bin/rpm-floor" --connect "$addr:$port" --size 8 --ops 150000 --warmup 200 --rounds 1 --patterns "$pattern" \
    --json "$out/floor-$rep.json" > "$out/floor-$rep.txt" 2>&1 &
  f=$!
  sleep 2; sample "floor-$rep"; wait $f
  echo "floor $rep rc=$?"; wait $fs
done
kill $srv; wait $srv
