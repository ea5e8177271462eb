#!/usr/bin/env bash
# Native RDMA FLUSH on the wire, in the trixie lab VM (tools/lab/run
# --userland trixie --pm adr|eadr, binaries from tools/lab/userland-build.sh):
# rxe on Linux 6.12 reports persistent FLUSH, rdma-core 56 has
# ibv_wr_flush, and the region is devdax on the NVDIMM. Separate rpm-server
# and rpm-client processes:
#   1. rpm-probe: rxe0 native flush yes, the plan's method native_flush
#   2. a put on devdax: the grant is native_flush (server persist none)
#   3. 300 records streamed and verified; rxe0's counters around them, then
#      around the same with send_flush forced: native sends no message per
#      persist (rdma_sends, the server's rdma_recvs, barely move), send_flush
#      one Flush frame each
#   4. controls: a forced native_flush on a tmpfs region is refused with the
#      reason; with RPM_FAULT=flush-global-only (the region registered for
#      global FLUSH only, persistent claimed) the first persist fails with a
#      remote access error and nothing is acknowledged (empty acked log)
# Usage: native_flush.sh BUILD_DIR
{
set -uo pipefail
build=$1 bin=$1/bin
: "${RPM_LAB_PM:?run me through tools/lab/run}" "${RPM_LAB_RDMA_ADDR:?run me through tools/lab/run}"
addr=$RPM_LAB_RDMA_ADDR port=7810 work=$(mktemp -d /tmp/native-flush.XXXXXX)
hw=/sys/class/infiniband/rxe0/ports/1/hw_counters
fail() { echo "native_flush: FAILED: $*"; [ -n "${srv:-}" ] && kill "$srv" 2>/dev/null; exit 1; }
counters() { for c in sent_pkts rcvd_pkts rdma_sends rdma_recvs ack_deferred; do printf '%s=%s ' "$c" "$(cat "$hw/$c")"; done; }
count() { cat "$hw/$1"; }

echo "--- rxe0's counters: $(ls "$hw" | paste -sd' ')"
echo "--- rpm-probe"
json=$("$bin/rpm-probe" --json --pmem "$RPM_LAB_PM") || fail "rpm-probe"
jq -r '.rdma_devices[] | "device \(.name): native_flush \(.native_flush) (\(.caps_detail)), atomic_write \(.atomic_write)"' <<<"$json"
jq -r '.decisions[] | select(.device == "rxe0") | "plan \(.region) on \(.device): \(.method), server \(.server_persist)\n  why: \(.reason)"' <<<"$json"
[ "$(jq -r '.rdma_devices[] | select(.name == "rxe0") | .native_flush' <<<"$json")" = true ] || fail "rxe0 reports no FLUSH"

truncate -s 16M /dev/shm/native-flush-tmp
server() {  # [ENV...]: rpm-server in the background, on $port
  rm -f "$work/port"
  env "$@" "$bin/rpm-server" --listen "rdma://$addr:$port" --region "kv=$RPM_LAB_PM" \
    --region "tmp=/dev/shm/native-flush-tmp" --client app:pw --port-file "$work/port" >"$work/server.log" 2>&1 &
  srv=$!
  for _ in $(seq 1 200); do [ -s "$work/port" ] && return 0; sleep 0.1; done
  cat "$work/server.log"; fail "rpm-server did not start"
}
stop() { kill "$srv"; wait "$srv" 2>/dev/null; srv=; }
client() { timeout -k 5 120 "$bin/rpm-client" --connect "rdma://$addr:$port" --id app --secret pw "$@"; }

server
echo "--- put on devdax (method as decided)"
out=$(client put --region kv --offset 0 "native FLUSH over rdma://") || { echo "$out"; fail "put"; }
echo "$out"
grep -q "method native_flush, server persist none" <<<"$out" || fail "the grant is not native_flush"

stream() {  # NAME [--force-method M]: 300 records, counters around them, then verified
  local name=$1; shift
  rm -f "$work/acked-$name"
  local s0 r0 p0
  s0=$(count rdma_sends) r0=$(count rdma_recvs) p0=$(count sent_pkts)
  echo "--- $name: before: $(counters)"
  client "$@" stream --region kv --count 300 --record-size 256 --acked-log "$work/acked-$name" --run 49 ||
    fail "stream ($name)"
  echo "--- $name: after:  $(counters)"
  local sends=$(($(count rdma_sends) - s0)) recvs=$(($(count rdma_recvs) - r0)) pkts=$(($(count sent_pkts) - p0))
  echo "--- $name: 300 persists: rdma_sends +$sends, rdma_recvs +$recvs, sent_pkts +$pkts" \
       "($((pkts / 300)) a persist, both ends: client and server share rxe0)"
  client "$@" verify --region kv --acked-log "$work/acked-$name" --record-size 256 --run 49 || fail "verify ($name)"
  eval "sends_$name=$sends"
}
stream native
stream send_flush --force-method send_flush
# Per persist send_flush sends a Flush frame and gets a Response (two
# messages); native FLUSH none: what is left is the stream run's handshake.
[ "$sends_native" -lt 20 ] || fail "native_flush sent $sends_native messages for 300 persists"
[ "$sends_send_flush" -ge 600 ] || fail "send_flush sent only $sends_send_flush messages for 300 persists"

echo "--- control: native_flush forced on tmpfs (page cache)"
out=$(client --force-method native_flush --unsafe put --region tmp "no" 2>&1) && fail "forced native_flush on tmpfs was granted: $out"
echo "$out"
grep -q "page cache, not PM" <<<"$out" || fail "the refusal does not say why"
stop

echo "--- control: RPM_FAULT=flush-global-only (registered for global FLUSH only, persistent claimed)"
server RPM_FAULT=flush-global-only
rm -f "$work/acked-refused"
p0=$(count sent_pkts)
out=$(client stream --region kv --count 50 --record-size 256 --acked-log "$work/acked-refused" --run 50 2>&1) &&
  fail "the stream succeeded: $out"
echo "$out"
put=$(client put --region kv --offset 0 "refused" 2>&1) && fail "the put succeeded: $put"
echo "$put"
acked=$(wc -l <"$work/acked-refused")
echo "acknowledged records: $acked (sent_pkts +$(($(count sent_pkts) - p0)))"
[ "$acked" -eq 0 ] || fail "$acked records acknowledged"
grep -q "method native_flush" <<<"$put" || fail "the control's grant was not native_flush"
echo "--- server log"; cat "$work/server.log"
stop
rm -rf "$work" /dev/shm/native-flush-tmp
echo "native_flush: passed"
exit 0
}
