#!/usr/bin/env bash
# The lab tier, inside the VM that tools/lab/run boots (tests/lab/CMakeLists.txt
# runs it once per PM mode). Checks, with rxe0 and the mode's /dev/pmem0:
#   detect  rpm-probe --json against the hand-worked row of the table in
#           docs/flush-methods.md (written out below, not computed by rpm)
#   pmem    rpm::pmem::Region on the devdax device (lab_pmem_test)
#   ops     every operation over rdma:// with "kv" on the PM device
#           (tests/integration/ops), several connections, a server restart
#   atomic  (adr, backports) the replicated log's commit words over rdma://:
#           native atomic writes on 6.12's rxe, fenced 8-byte writes on 6.1's
#   faults  bad input and injected faults over real rdma:// (lab_rdma_test)
#   nvme    (with --nvme-cmb) the NVMe drive's CMB BAR is there, and 1 MiB
#           written to the drive with O_DIRECT reads back the same
#   p2p     (with --nvme-cmb) rpm::p2p::Manager on that CMB (lab_p2p_test:
#           found from the registers, chosen at distance 0, 1 MiB written
#           through a buffer and found in BAR2, exhaustion falls back to
#           host memory with its reason, freed buffers coalesce);
#           rpm-probe --p2p chooses it; the drive still does I/O after
#   nvmf    (with --nvme-cmb) NVMe/TCP against the Linux kernel
#           (tests/lab/nvmf.sh): the kernel host (nvme discover/connect,
#           dd and fio with verification) through rpm-nvmf's target onto
#           the NVMe drive and the PM device; rpm's host against the
#           kernel's nvmet-tcp on the same drive; then NVMe/RDMA on rxe0:
#           the kernel's nvme-rdma host through rpm-nvmf's target (dd,
#           fio at several block sizes and depths, blkdiscard, ext4 +
#           fsck, the target killed and restarted under the host);
#           rpm's host against the kernel's nvmet-rdma; rpm's host and
#           target as processes killed mid-stream over NVMe/RDMA
#           (tests/integration/nvmf/process_test.sh); bad input to the
#           NVMe/RDMA target (lab_nvmf_rdma_test)
#   kill    rpm-server killed mid-stream and restarted; every acknowledged
#           record read back (tests/integration/process/kill_test.sh), and
#           the planted ack-before-persist bug caught (adr only: it is the
#           same check in every mode)
#   kv      (adr) rpm-kvstore on three nodes over rdma:// (tests/integration/
#           replication/kv_fault_test.sh): a replica killed, the primary
#           killed, a partition and a failover to a former replica; every
#           acknowledged put on every node and no divergence; and the planted
#           ack-before-quorum bug caught
#   kv-fence (adr) a primary frozen with SIGSTOP while a newer term opens
#           the replicas over rdma://, then resumed: its put is refused
#           (fenced) and reaches no replica; without terms (control) it
#           does (tests/integration/replication/kv_fence_test.sh)
#   kv-failover (eadr) three rpm-kvstore nodes electing their primary on a
#           3-member etcd inside the VM (on loopback), replicating over
#           rdma://: kill -9 of the primary, one and two etcd members lost,
#           a stale primary frozen past its lease is fenced; without fencing
#           (control) its put lands (tests/integration/coordinator/
#           kv_failover_test.sh)
#   kv-mixed (adr) one replica over rdma://, one over tcp://, durability all:
#           every put on both (tests/lab/kv_mixed.sh)
#   floor   (eadr) rpm-floor's four patterns against the PM device, its
#           server ending with the client; send_flush to three sleeping
#           servers at once, done at two; no server: a failure with its reason
# Usage: suite.sh adr|eadr|memmap|cxl BUILD_DIR [FLAVOR]
#   FLAVOR  full (default): the steps above, by PM mode.
#           modes=busy,event: only ops, faults, kill and its planted control,
#           once per completion mode listed (RPM_IT_COMPLETION,
#           RPM_KILL_COMPLETION: client and server alike).
#           backports: the 6.12 kernel (tools/lab/run --kernel backports):
#           detect (with the capability bits rxe0 reports there, atomic
#           write and FLUSH, and the decision's reason for not using native
#           flush), pmem, ops, atomic (native on the wire), faults, kill,
#           and nvmf-auth: DH-HMAC-CHAP with the kernel's host and nvmet
#           over NVMe/TCP and NVMe/RDMA (tests/lab/nvmf_auth.sh).
#           trixie: Debian 13's root and 6.12 kernel (tools/lab/run
#           --userland trixie, tests/lab/trixie.sh; adr or eadr: rxe takes
#           FLUSH only on the NVDIMM's pages), rpm built against rdma-core 56
#           (ibv_wr_flush), so every PM cell is native_flush: detect, pmem,
#           ops (a forced native_flush granted), atomic, faults (a native
#           persist, and its control: RPM_FAULT=flush-global-only), kill, and
#           native-flush (tests/lab/native_flush.sh: rpm-server and
#           rpm-client processes, rxe0's counters, the controls), kv-native
#           (kv_mixed.sh with the rdma:// replica on the NVDIMM, its grant
#           native_flush: the replicated log over native FLUSH), and floor
#           with rpm-floor's native_flush pattern too.
#
# The whole script is one { ...; exit; } block: bash reads it completely
# before running it, so editing this file during a lab run cannot break it.
{
set -uo pipefail
mode=$1 build=$2 flavor=${3:-full}
completions=
case "$flavor" in
  full|backports|trixie) ;;
  modes=?*) completions=${flavor#modes=} ;;
  *) echo "suite.sh: unknown flavor '$flavor' (full, backports, trixie, modes=LIST)"; exit 2 ;;
esac
src=$(cd "$(dirname "$0")/../.." && pwd)
: "${RPM_LAB_PM:?run me through tools/lab/run}" "${RPM_LAB_RDMA_ADDR:?run me through tools/lab/run}"

# What the table says for rxe0 (a software RNIC: DDIO unknown, counted as
# on; no native flush) over each platform.
case "$mode" in
  adr)    domain=memory_controller method=send_flush       persist=cache_flush_sfence            gran=cache_line ;;
  # A CXL pmem region: the kernel's CXL driver says memory_controller, as
  # an ADR NVDIMM's NFIT does (docs/persistence-model.md, "CXL").
  cxl)    domain=memory_controller method=send_flush       persist=cache_flush_sfence            gran=cache_line ;;
  eadr)   domain=cpu_cache         method=read_after_write persist=none                          gran=byte ;;
  memmap) domain=unknown           method=send_flush       persist=cache_flush_sfence_deep_flush gran=cache_line ;;
  *) echo "suite.sh: unknown mode '$mode'"; exit 2 ;;
esac
# The trixie userland: rxe on Linux 6.12 reports FLUSH and rdma-core 56 can
# issue it, so a PM region on the NVDIMM is native_flush in every cell.
if [ "$flavor" = trixie ]; then
  case "$mode" in
    adr|eadr|cxl) method=native_flush persist=none ;;
    *) echo "suite.sh: the trixie flavor runs in adr, eadr or cxl (rxe takes FLUSH only on persistent memory's pages)"; exit 2 ;;
  esac
fi

failed=()
# Each step's output is kept too: a failed step's last lines are printed
# again at the end (failure_tails), where a CI log's excerpt shows them
# (the kv step failed in CI once with its reason 300 lines up, cut off).
step_logs=$(mktemp -d /tmp/lab-steps.XXXXXX)
step() {  # NAME COMMAND...: run, report, remember failures
  local name=$1; shift
  echo "=== lab[$mode] $name"
  local t0=$SECONDS rc
  # Not a pipeline: the step runs in this shell (some add to its arrays), and
  # a daemon it leaves holding stdout cannot keep the step from ending.
  # (<(...)/>(...) need /dev/fd, which tools/lab/initramfs-init makes.)
  "$@" > >(tee "$step_logs/$name.log") 2>&1
  rc=$?
  if [ "$rc" -eq 0 ]; then echo "=== lab[$mode] $name: passed ($((SECONDS - t0)) s)"
  else echo "=== lab[$mode] $name: FAILED ($((SECONDS - t0)) s)"; failed+=("$name"); fi
}
failure_tails() {
  local name
  sleep 0.5  # the last step's tee may still be writing its file
  for name in "${failed[@]}"; do
    echo "--- lab[$mode] $name: its last 40 lines"
    tail -n 40 "$step_logs/$name.log"
  done
}

# rxe's capability bits, by kernel: 6.1's rxe has neither atomic write nor
# FLUSH; 6.12's (backports) reports both (IB_UVERBS_DEVICE_ATOMIC_WRITE,
# IB_UVERBS_DEVICE_FLUSH_PERSISTENT), and rpm still cannot issue FLUSH
# (rdma-core 44 has no ibv_wr_flush), so the decision must say so and fall back
# to the same row of the table.
caps=false
[ "$flavor" = backports ] || [ "$flavor" = trixie ] && caps=true
detect() {
  local json
  json=$("$build/bin/rpm-probe" --json) || return 1
  local got
  got=$(jq -r '[.regions[0].persistence_domain, .rdma_devices[0].name, .rdma_devices[0].native_flush,
               .rdma_devices[0].atomic_write,
               (.decisions[] | select(.device == "rxe0") | .method, .server_persist)] | join(" ")' <<<"$json")
  echo "probe: region domain, RNIC, native flush, atomic write, method, server persist = $got"
  echo "table: $domain rxe0 $caps $caps $method $persist"
  if [ "$caps" = true ]; then
    local reason
    reason=$(jq -r '.decisions[] | select(.device == "rxe0") | .reason' <<<"$json")
    echo "decision's reason: $reason"
    if [ "$flavor" = trixie ]; then
      grep -q "native flush yes" <<<"$reason" || return 1
    else
      grep -q "the RNIC reports native flush, but rpm.s rdma:// cannot issue it" <<<"$reason" || return 1
    fi
    [ "$got" = "$domain rxe0 true true $method $persist" ]
    return
  fi
  # Native RDMA FLUSH: unavailable twice over; say both reasons.
  echo "native flush: unavailable: rxe0 reports none ($(jq -r '.rdma_devices[0].native_flush_origin' <<<"$json"));" \
       "and rdma-core 44 has no ibv_wr_flush (docs/rdma.md): a forced native_flush is refused (ops test)"
  [ "$got" = "$domain rxe0 false false $method $persist" ]
}

# The CXL VM (tools/lab/run --pm cxl): region0 must name what stands behind
# it, as that run made it: CXL region0 of mem0 (serial 0x1, sn= on QEMU's
# command line) below host bridge pci0000:0c (pxb-cxl bus_nr=12), 1 way of
# 256 B, no dirty shutdown count (QEMU has no Get Health Info, and the
# count needs Linux 6.15); the decision's reason names CXL.
cxl_origin() {
  local json got want="region0 mem0:1:none pci0000:0c 1 256 memory_controller"
  json=$("$build/bin/rpm-probe" --json) || return 1
  got=$(jq -r '.regions[0].cxl | [.cxl_region,
               (.memdevs | map("\(.name):\(.serial):\(.dirty_shutdown // "none")") | join(",")),
               .host_bridge, .interleave_ways, .interleave_granularity, .persistence_domain] | join(" ")' <<<"$json")
  echo "probe: CXL region, memdevs, host bridge, ways, granularity, domain = $got"
  echo "lab:   $want"
  [ "$got" = "$want" ] || return 1
  jq -r '.decisions[] | select(.device == "rxe0") | .reason' <<<"$json" | tee /dev/stderr | grep -q 'CXL region0 (mem0)'
}

it_env=(RPM_IT_TRANSPORT=rdma RPM_IT_ADDR="$RPM_LAB_RDMA_ADDR" RPM_IT_PM="$RPM_LAB_PM"
        RPM_IT_PM_DOMAIN="$domain" RPM_IT_PM_METHOD="$method" RPM_IT_PM_PERSIST="$persist")
[ "$flavor" = trixie ] && it_env+=(RPM_IT_NATIVE_FLUSH=yes)
pmem() { env RPM_LAB_DOMAIN="$domain" RPM_LAB_GRANULARITY="$gran" "$build/tests/lab_pmem_test" --gtest_brief=1; }
ops() { env "${it_env[@]}" "$build/tests/ops_test" --gtest_brief=1; }
ops_tcp() { env "${it_env[@]}" RPM_IT_TRANSPORT=tcp RPM_IT_ADDR=127.0.0.1 "$build/tests/ops_test" --gtest_brief=1; }
faults() { env "${it_env[@]}" "$build/tests/lab_rdma_test" --gtest_brief=1; }

kill_env=(RPM_KILL_SCHEME=rdma RPM_KILL_ADDR="$RPM_LAB_RDMA_ADDR" RPM_KILL_REGION="$RPM_LAB_PM"
          RPM_KILL_PAUSE=2 RPM_KILL_MIN_ACKED=200)
kill_normal() { env "${kill_env[@]}" "$src/tests/integration/process/kill_test.sh" "$build/bin"; }
kill_planted() { env "${kill_env[@]}" "$src/tests/integration/process/kill_test.sh" "$build/bin" planted; }

# Three regions, one of them deleted (a lost node): tmpfs files in the VM,
# which rxe registers (it cannot register fsdax). Their PM mode does not
# matter, so adr only. TCG is slow: longer timeouts, fewer and longer rounds.
kv_env=(RPM_KV_SCHEME=rdma RPM_KV_ADDR="$RPM_LAB_RDMA_ADDR" RPM_KV_DIR=/dev/shm RPM_KV_SIZE=16M RPM_KV_ROUNDS=3
        RPM_KV_HEARTBEAT_MS=300 RPM_KV_FAILURE_TIMEOUT_MS=3000 RPM_KV_RECONNECT_MS=1000 RPM_KV_PAUSE=2
        RPM_KV_MIN_ACKED=50)
kv_normal() { env "${kv_env[@]}" "$src/tests/integration/replication/kv_fault_test.sh" "$build/bin"; }
kv_planted() {
  env "${kv_env[@]}" RPM_KV_EVENTS=failover "$src/tests/integration/replication/kv_fault_test.sh" "$build/bin" planted
}
kv_fence() { env "${kv_env[@]}" "$src/tests/integration/replication/kv_fence_test.sh" "$build/bin"; }
kv_fence_planted() { env "${kv_env[@]}" "$src/tests/integration/replication/kv_fence_test.sh" "$build/bin" planted; }
# etcd under TCG: about 20-30 s to start, slower raft ticks (tools/lib/etcd.sh).
# The lease outlives an election: killing etcd's leader member (round 2) left
# the other two unanswering for over 3 s once (CI of b7efc26: the primary's
# 3 s lease ran out and it stepped down), so 6 s.
kv_failover_env=("${kv_env[@]}" RPM_KV_LEASE_TTL=6 RPM_KV_LOAD=600 RPM_KV_RECOVERY_S=25 RPM_KV_STEPDOWN_S=15
                 RPM_KV_WAIT_S=90 ETCD_HEARTBEAT_MS=100 ETCD_ELECTION_MS=1000 ETCD_WAIT_S=120)
# A crash of any rpm-kvstore process leaves a core whose backtrace is
# printed (a client once crashed here and the core was gone with the VM).
with_cores() {
  (
    ulimit -c unlimited
    echo /dev/shm/core.%e.%p >/proc/sys/kernel/core_pattern
    "$@"
    rc=$?
    for c in /dev/shm/core.*; do
      [ -f "$c" ] || continue
      echo "=== $c"
      gdb -batch -ex "thread apply all bt 20" "$build/bin/rpm-kvstore" "$c" 2>&1 | grep -v '^\[New LWP' | head -120
      rm -f "$c"
      rc=1
    done
    exit $rc
  )
}
kv_failover() {
  with_cores env "${kv_failover_env[@]}" "$src/tests/integration/coordinator/kv_failover_test.sh" "$build/bin"
}
kv_failover_planted() {
  env "${kv_failover_env[@]}" "$src/tests/integration/coordinator/kv_failover_test.sh" "$build/bin" planted
}

# The replicated log's commit words over rdma:// (rpm-bench's log test,
# in-process replicas on rxe0): native IBTA atomic writes where rxe reports
# IB_UVERBS_DEVICE_ATOMIC_WRITE (6.12), fenced 8-byte writes where it does
# not (6.1). "completed as native" counts the completions the device
# reported as IBV_WC_ATOMIC_WRITE: the work requests that went on the wire.
atomic() {
  local want=fenced_write json notes
  [ "$caps" = true ] && want=native
  json=$(timeout -k 5 300 "$build/bin/rpm-bench" --replication --log --replicas 3 --durability majority-local \
    --listen "rdma://$RPM_LAB_RDMA_ADDR:0" --sizes 64 --batch 0 --duration 0.5 --warmup 0.05 --rounds 1 \
    --json --quiet) || return 1
  notes=$(jq -r '.notes[] | select(test("atomic writes"))' <<<"$json")
  echo "$notes"
  echo "expected: atomic writes $want on every replica"
  [ "$(grep -c . <<<"$notes")" -eq 3 ] || return 1
  ! grep -v "atomic writes $want," <<<"$notes" | grep -q . || return 1
  [ "$want" = fenced_write ] || ! grep -q ", 0 completed as native" <<<"$notes"
}

# rpm-floor (tools/floor/floor.hpp): rpm's operations as bare work requests
# on the verbs layer, the floor tools/lab/ab/floor.sh measures. Here: it runs
# every pattern against the PM device and its server ends with the client;
# the fan-out of tools/lab/ab/replication_floor.sh runs against three
# servers; a client without a server fails with the reason.
floor() {  # [PATTERNS]: rpm-floor's list (default: its four; trixie adds native_flush)
  local port=7795 json=/tmp/floor.json srv out patterns=${1:-write,read,read_after_write,send_flush} n
  n=$(tr ',' '\n' <<<"$patterns" | wc -l)
  timeout -k 5 60 "$build/bin/rpm-floor" --listen "$RPM_LAB_RDMA_ADDR:$port" --region "$RPM_LAB_PM" --timeout 50 \
    >/tmp/floorsrv.txt 2>&1 &
  srv=$!
  for _ in $(seq 1 100); do grep -q listening /tmp/floorsrv.txt && break; sleep 0.1; done
  timeout -k 5 60 "$build/bin/rpm-floor" --connect "$RPM_LAB_RDMA_ADDR:$port" --patterns "$patterns" --ops 100 \
    --warmup 10 --rounds 2 --json "$json" || { kill "$srv"; wait "$srv"; return 1; }
  wait "$srv" || { echo "rpm-floor's server failed: $(cat /tmp/floorsrv.txt)"; return 1; }
  [ "$(jq '[.results[] | select(.ops == 100 and .p50_us > 0)] | length' "$json")" -eq $((2 * n)) ] || return 1
  [ "$(jq -r '[.results[].pattern] | unique | join(",")' "$json")" = "$(tr ',' '\n' <<<"$patterns" | sort | paste -sd,)" ] ||
    return 1
  jq -r '.results[] | select(.round == 2) | "  \(.pattern): p50 \(.p50_us) us"' "$json"
  # The replication floor's fan-out: three servers that sleep when idle (the
  # PM device and two tmpfs files), each operation done at two completions.
  local srvs=() targets="" p s regions=("$RPM_LAB_PM" /dev/shm/floor-a /dev/shm/floor-b)
  truncate -s 8M /dev/shm/floor-a /dev/shm/floor-b
  for p in 0 1 2; do
    timeout -k 5 60 "$build/bin/rpm-floor" --listen "$RPM_LAB_RDMA_ADDR:$((port + 2 + p))" --region "${regions[$p]}" \
      --wait event --timeout 50 >/tmp/floorsrv$p.txt 2>&1 &
    srvs+=($!)
    for _ in $(seq 1 100); do grep -q listening /tmp/floorsrv$p.txt && break; sleep 0.1; done
    targets+="${targets:+,}$RPM_LAB_RDMA_ADDR:$((port + 2 + p))"
  done
  timeout -k 5 60 "$build/bin/rpm-floor" --connect "$targets" --quorum 2 --patterns send_flush --ops 100 \
    --warmup 10 --rounds 1 --json "$json" || { kill "${srvs[@]}"; wait; return 1; }
  for s in "${srvs[@]}"; do wait "$s" || { echo "an rpm-floor server failed: $(cat /tmp/floorsrv?.txt)"; return 1; }; done
  rm -f /dev/shm/floor-a /dev/shm/floor-b
  [ "$(jq '[.results[] | select(.servers == 3 and .quorum == 2 and .ops == 100 and .p50_us > 0)] | length' "$json")" -eq 1 ] || return 1
  out=$(timeout -k 5 60 "$build/bin/rpm-floor" --connect "$RPM_LAB_RDMA_ADDR:$((port + 1))" --timeout 5 2>&1)
  [ $? -eq 1 ] && grep -q "connection" <<<"$out" && echo "without a server: $out"
}

control=absent; [ -e /sys/bus/nd/devices/region0/deep_flush ] && control=present
nvme() {
  local bar=/sys/bus/pci/devices/$RPM_LAB_NVME_BDF/resource2
  [ -e "$bar" ] || { echo "no BAR2 (the CMB) at $bar"; return 1; }
  echo "CMB: $bar, $(stat -c %s "$bar") bytes; $(cat /sys/class/nvme/nvme0/cmb 2>/dev/null | paste -sd' ')"
  [ "$(stat -c %s "$bar")" -ge $((16 << 20)) ] || return 1
  head -c 1M /dev/urandom >/tmp/nvme.out
  dd if=/tmp/nvme.out of="$RPM_LAB_NVME" bs=1M count=1 oflag=direct status=none &&
    dd if="$RPM_LAB_NVME" of=/tmp/nvme.in bs=1M count=1 iflag=direct status=none &&
    cmp /tmp/nvme.out /tmp/nvme.in && echo "1 MiB written and read back through $RPM_LAB_NVME"
}

# The kernel has no P2PDMA, so the CMB is reached by mapping BAR2
# (docs/p2p.md); the driver does not use it, so I/O is unaffected.
p2p() {
  "$build/tests/lab_p2p_test" --gtest_brief=1 || return 1
  "$build/bin/rpm-probe" --p2p "$RPM_LAB_NVME_BDF" || return 1
  local chosen
  chosen=$("$build/bin/rpm-probe" --json --p2p "$RPM_LAB_NVME_BDF" | jq -r '.choice.provider') || return 1
  echo "rpm-probe --p2p $RPM_LAB_NVME_BDF chose: $chosen"
  [ "$chosen" = "$RPM_LAB_NVME_BDF" ] && nvme
}

echo "lab[$mode]: kernel $(uname -r), $(rdma link show | head -1), PM $RPM_LAB_PM (region0 deep_flush control $control)"
if [ -n "$completions" ]; then
  # Each completion mode of client and server (include/rpm/completion.hpp)
  # through the same operations, faults, kills and planted control.
  for c in ${completions//,/ }; do
    it_env+=(RPM_IT_COMPLETION="$c")
    kill_env+=(RPM_KILL_COMPLETION="$c")
    step "ops[$c]" ops
    step "faults[$c]" faults
    step "kill[$c]" kill_normal
    step "kill-planted-control[$c]" kill_planted
    unset 'it_env[-1]' 'kill_env[-1]'
  done
  if [ ${#failed[@]} -gt 0 ]; then failure_tails; echo "lab[$mode $flavor]: FAILED: ${failed[*]}"; exit 1; fi
  echo "lab[$mode $flavor]: all steps passed"
  exit 0
fi
step detect detect
[ "$mode" = cxl ] && step cxl-origin cxl_origin
step pmem pmem
if [ "$flavor" = backports ] || [ "$flavor" = trixie ]; then
  [ "$flavor" = trixie ] && echo "lab[$mode trixie]: Debian $(cat /etc/debian_version), rdma-core $(dpkg-query -W -f='${Version}' rdma-core 2>/dev/null), librpma $(dpkg-query -W -f='${Version}' librpma-dev 2>/dev/null)"
  step ops ops
  step atomic atomic
  step faults faults
  step kill kill_normal
  # 6.12 has NVMe in-band authentication on both sides (6.1 on neither);
  # trixie's root carries no nvme-cli.
  [ "$flavor" = backports ] && step nvmf-auth "$src/tests/lab/nvmf_auth.sh" "$build"
  # rpm-server and rpm-client processes: native FLUSH's grant, counters, controls.
  [ "$flavor" = trixie ] && step native-flush "$src/tests/lab/native_flush.sh" "$build"
  # The replicated log over rdma:// with native FLUSH: an rpm-kvstore
  # replica on the NVDIMM (granted native_flush), one over tcp://, every
  # put on both; and rpm-floor's bare FLUSH beside rpm's other patterns.
  [ "$flavor" = trixie ] && step kv-native "$src/tests/lab/kv_mixed.sh" "$build/bin" "$RPM_LAB_RDMA_ADDR" "$RPM_LAB_PM" native_flush
  [ "$flavor" = trixie ] && step floor floor write,read,read_after_write,send_flush,native_flush
  echo "rxe0 counters: $(cat /sys/class/infiniband/rxe0/ports/1/hw_counters/{sent_pkts,rcvd_pkts} 2>/dev/null | paste -sd' ') (sent, received packets)"
  if [ ${#failed[@]} -gt 0 ]; then failure_tails; echo "lab[$mode $flavor]: FAILED: ${failed[*]}"; exit 1; fi
  echo "lab[$mode $flavor]: all steps passed"
  exit 0
fi
# The CXL VM: rpm-server over rdma:// and tcp:// and rpm-nvmf's PM
# namespace, all on the CXL region (the NVMe drive and its CMB are adr's).
if [ "$mode" = cxl ]; then
  step ops ops
  step ops-tcp ops_tcp
  step faults faults
  step kill kill_normal
  step kill-planted-control kill_planted
  [ -n "${RPM_LAB_NVME:-}" ] && step nvmf-kernel-host "$src/tests/lab/nvmf.sh" kernel-host "$build"
  [ -n "${RPM_LAB_NVME:-}" ] && step nvmf-rdma-kernel-host "$src/tests/lab/nvmf.sh" kernel-host-rdma "$build"
  echo "rxe0 counters: $(cat /sys/class/infiniband/rxe0/ports/1/hw_counters/{sent_pkts,rcvd_pkts} 2>/dev/null | paste -sd' ') (sent, received packets)"
  if [ ${#failed[@]} -gt 0 ]; then failure_tails; echo "lab[$mode]: FAILED: ${failed[*]}"; exit 1; fi
  echo "lab[$mode]: all steps passed"
  exit 0
fi
[ -n "${RPM_LAB_NVME:-}" ] && step nvme nvme
[ -n "${RPM_LAB_NVME:-}" ] && step p2p p2p
step ops ops
[ "$mode" = adr ] && step atomic atomic
[ "$mode" = adr ] && step faults faults
step kill kill_normal
[ "$mode" = adr ] && step kill-planted-control kill_planted
[ "$mode" = adr ] && step kv kv_normal
[ "$mode" = adr ] && step kv-planted-control kv_planted
[ "$mode" = adr ] && step kv-fence kv_fence
[ "$mode" = adr ] && step kv-fence-planted-control kv_fence_planted
# In the eadr VM: the adr one holds the other kv steps (it went over its
# 900 s limit with these two added, before 9p's cache=loose halved it).
[ "$mode" = eadr ] && step kv-failover kv_failover
[ "$mode" = eadr ] && step kv-failover-planted-control kv_failover_planted
[ "$mode" = adr ] && step kv-mixed "$src/tests/lab/kv_mixed.sh" "$build/bin" "$RPM_LAB_RDMA_ADDR"
[ "$mode" = eadr ] && step floor floor
# Last: it overwrites the start of the NVMe drive and of the PM device.
[ -n "${RPM_LAB_NVME:-}" ] && step nvmf-kernel-host "$src/tests/lab/nvmf.sh" kernel-host "$build"
[ -n "${RPM_LAB_NVME:-}" ] && step nvmf-kernel-target "$src/tests/lab/nvmf.sh" kernel-target "$build"
[ -n "${RPM_LAB_NVME:-}" ] && step nvmf-rdma-kernel-host "$src/tests/lab/nvmf.sh" kernel-host-rdma "$build"
[ -n "${RPM_LAB_NVME:-}" ] && step nvmf-rdma-kernel-target "$src/tests/lab/nvmf.sh" kernel-target-rdma "$build"
[ -n "${RPM_LAB_NVME:-}" ] && step nvmf-rdma-bad-input "$build/tests/lab_nvmf_rdma_test" --gtest_brief=1
[ -n "${RPM_LAB_NVME:-}" ] && step nvmf-rdma-kill env RPM_NVMF_TRANSPORT=rdma RPM_NVMF_ADDR="$RPM_LAB_RDMA_ADDR" \
  "$src/tests/integration/nvmf/process_test.sh" "$build/bin"
# Evidence that the traffic went through the Soft-RoCE device.
echo "rxe0 counters: $(cat /sys/class/infiniband/rxe0/ports/1/hw_counters/{sent_pkts,rcvd_pkts} 2>/dev/null | paste -sd' ') (sent, received packets)"
if [ ${#failed[@]} -gt 0 ]; then failure_tails; echo "lab[$mode]: FAILED: ${failed[*]}"; exit 1; fi
echo "lab[$mode]: all steps passed"
exit 0
}
