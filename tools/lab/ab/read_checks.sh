#!/bin/bash
# tools/lab/ab/read_checks.sh: runs INSIDE the lab VM. Three looks at where
# rpm's 8-byte read differs from rpm-floor's (docs/benchmarks-history.md, "A
# callback's next operation, and close() waits for the callbacks"):
#   switches    sched_switch events, 2 s of each one's steady state (perf record)
#   events      counts of scheduler, softirq, TLB-flush, page-fault and
#               system-call events over 2 s of each one's steady state (perf stat)
#   strace      system calls over 5,000 and 10,000 reads of each (strace -f -c)
#   registered  rpm-bench with and without --registered, sync and callback,
#               and rpm-floor, ROUNDS rounds after an ib_read_lat each
# Output to $RPM_LAB_OUT; every run is bounded by a timeout.
#   RPM_LAB_ARTIFACTS=OUT tools/lab/run --pm adr -- tools/lab/ab/read_checks.sh "$PWD/build/bin" WHAT [ROUNDS] [MODE]
bin=$1 what=$2 rounds=${3:-5} comp=${4:-busy}
[ -x "$bin/rpm-bench" ] && [ -x "$bin/rpm-floor" ] && [ -x "$bin/rpm-server" ] ||
  { echo "read_checks.sh: no rpm-bench, rpm-floor and rpm-server in '$bin'" >&2; exit 2; }
case $what in switches|events|strace|registered) ;; *) echo "read_checks.sh: WHAT must be switches, events, strace or registered, not '$what'" >&2; exit 2 ;; esac
case $rounds in ''|*[!0-9]*|0) echo "read_checks.sh: ROUNDS must be a positive number, not '$rounds'" >&2; exit 2 ;; esac
case $comp in busy|adaptive|event) ;; *) echo "read_checks.sh: MODE must be busy, adaptive or event, not '$comp'" >&2; exit 2 ;; esac
[ -n "$RPM_LAB_RDMA_ADDR" ] && [ -n "$RPM_LAB_PM" ] || { echo "read_checks.sh: runs inside the lab VM (tools/lab/run)" >&2; exit 2; }
out=${RPM_LAB_OUT:-/tmp} addr=$RPM_LAB_RDMA_ADDR pm=$RPM_LAB_PM
. "$(dirname "$0")/perftest.sh"
printf 'bench:%s\n' 0123456789abcdef0123456789abcdef > /tmp/s.secrets; echo 0123456789abcdef0123456789abcdef > /tmp/s.secret
"$bin/rpm-server" --listen "rdma://$addr:7701" --region "pm=$pm" --secrets-file /tmp/s.secrets --completion "$comp" > "$out/server.log" 2>&1 &
srv=$!
for i in $(seq 1 100); do grep -q "region pm" "$out/server.log" && break; sleep 0.2; done
port=7800
bench() {  # NAME [rpm-bench flags...]: a read run of rpm-bench
  local name=$1; shift
  timeout 120 "$bin/rpm-bench" --connect "rdma://$addr:7701" --id bench --secret-file /tmp/s.secret --region pm \
    --tests read --sizes 8 --qd 1 --threads 1 --rounds 1 --completion "$comp" --no-forced --json \
    --output "$out/$name.json" --quiet "$@" > /dev/null 2> "$out/$name.err"
}
floor() {  # NAME OPS [wrapper...]: rpm-floor's read against its own server
  local name=$1 ops=$2; shift 2; port=$((port + 1))
  timeout 120 "$bin/rpm-floor" --listen "$addr:$port" --region "$pm" --timeout 100 > "$out/floorsrv-$name.txt" 2>&1 &
  local fs=$!
  for i in $(seq 1 100); do grep -q listening "$out/floorsrv-$name.txt" && break; sleep 0.2; done
  timeout 120 "$@" "$bin/rpm-floor" --connect "$addr:$port" --size 8 --ops "$ops" --warmup 200 --rounds 1 --patterns read \
    --json "$out/floor-$name.json" > "$out/floor-$name.txt" 2>&1
  echo "floor $name rc=$?"; wait $fs
}
case $what in
switches)
  bench rpm --api sync --duration 6 --warmup 0.2 &
  b=$!; sleep 3; perf record -a -e sched:sched_switch -o /tmp/sw-rpm.data -- sleep 2 > /dev/null 2>&1; wait $b
  floor sw 150000 &
  f=$!; sleep 3; perf record -a -e sched:sched_switch -o /tmp/sw-floor.data -- sleep 2 > /dev/null 2>&1; wait $f
  cp /tmp/sw-rpm.data /tmp/sw-floor.data "$out/" ;;
events)
  # Per operation: divide by the operations in the 2 s (rpm-bench's and
  # rpm-floor's JSON give the mean latency of each run).
  ev=sched:sched_switch,sched:sched_wakeup,sched:sched_migrate_task,irq:softirq_raise,irq:softirq_entry
  ev=$ev,tlb:tlb_flush,exceptions:page_fault_user,exceptions:page_fault_kernel,raw_syscalls:sys_enter
  ev=$ev,irq_vectors:call_function_entry,irq_vectors:call_function_single_entry,irq_vectors:reschedule_entry
  ev=$ev,irq_vectors:local_timer_entry,msr:write_msr
  ok=; for e in ${ev//,/ }; do perf stat -e "$e" -- true > /dev/null 2>&1 && ok=$ok${ok:+,}$e; done; ev=$ok
  echo "events: $ev"
  for api in sync callback; do
    bench "rpm-$api" --api $api --duration 6 --warmup 0.2 &
    b=$!; sleep 3; perf stat -a -A -e "$ev" -o "$out/events-rpm-$api.txt" -- sleep 2 > /dev/null 2>&1; wait $b
  done
  floor ev 150000 &
  f=$!; sleep 3; perf stat -a -A -e "$ev" -o "$out/events-floor.txt" -- sleep 2 > /dev/null 2>&1; wait $f ;;
strace)
  for ops in 5000 10000; do
    timeout 120 strace -f -c -o "$out/strace-rpm-$ops.txt" "$bin/rpm-bench" --connect "rdma://$addr:7701" --id bench \
      --secret-file /tmp/s.secret --region pm --tests read --sizes 8 --qd 1 --threads 1 --ops $ops --duration 100 \
      --warmup 0 --rounds 1 --api sync --completion "$comp" --no-forced --json --output "$out/rpm-$ops.json" --quiet \
      > /dev/null 2> "$out/rpm-$ops.err"
    echo "rpm $ops rc=$?"
    floor "$ops" "$ops" strace -f -c -o "$out/strace-floor-$ops.txt"
  done ;;
registered)
  for n in $(seq 1 "$rounds"); do
    perftest ib_read_lat "$n" $((18700 + n))
    for api in sync callback; do
      bench "plain-$api-$n" --api $api --duration 1 --warmup 0.2; echo "plain $api $n rc=$?"
      bench "registered-$api-$n" --api $api --duration 1 --warmup 0.2 --registered; echo "registered $api $n rc=$?"
    done
    floor "$n" 20000
  done ;;
esac
kill $srv; wait $srv
