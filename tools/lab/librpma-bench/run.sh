#!/usr/bin/env bash
# tools/lab/librpma-bench/run.sh: librpma 1.3's persist (librpma-bench) beside
# rpm's (rpm-bench over rdma://, every persist method rpm-server grants) and
# perftest's ib_read_lat, all in ONE lab VM run (Debian 13 userland, ADR PM
# as devdax), so that the ratios rpm/librpma and rpm/ib_read_lat compare
# figures taken under the same TCG conditions.
# Usage (on the host, as root): tools/lab/librpma-bench/run.sh [--sizes 8,64,4096]
#          [--ops N] [--warmup N] [--iters N] [--duration S] [--out DIR] [--timeout S]
#   --ops, --warmup  librpma-bench operations per size (default 2000, 200)
#   --iters     ib_read_lat iterations per size (default 1000)
#   --duration  rpm-bench seconds per test (default 1; warm-up 0.2 s)
#   --out       raw outputs (default build-trixie/librpma-bench/DATE)
#   --timeout   the whole VM run (default 600 s)
#   --report DIR  only print the table (and rewrite summary.json) from an earlier run's DIR
# Builds librpma-bench, rpm-server and rpm-bench against the trixie root
# first (tools/lab/userland-build.sh). Exit status: 0 when every figure was
# measured; 1 otherwise (the table says which is missing); 2 bad option.
set -uo pipefail
{
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
sizes=8,64,4096 ops=2000 warmup=200 iters=1000 duration=1 out='' vm_timeout=600 inside=0 report_only=''
while [ $# -gt 0 ]; do
  case "$1" in
    --sizes) sizes=${2:?--sizes needs a value}; shift 2 ;;
    --ops) ops=${2:?--ops needs a value}; shift 2 ;;
    --warmup) warmup=${2:?--warmup needs a value}; shift 2 ;;
    --iters) iters=${2:?--iters needs a value}; shift 2 ;;
    --duration) duration=${2:?--duration needs a value}; shift 2 ;;
    --out) out=${2:?--out needs a value}; shift 2 ;;
    --timeout) vm_timeout=${2:?--timeout needs a value}; shift 2 ;;
    --inside) inside=1; shift ;;
    --report) report_only=${2:?--report needs a folder}; shift 2 ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "librpma-bench/run.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
is_uint() { [[ "$1" =~ ^[0-9]+$ ]] && [ "$1" -gt 0 ]; }
is_uint "$ops" && [[ "$warmup" =~ ^[0-9]+$ ]] || { echo "run.sh: --ops is a positive integer, --warmup a whole number" >&2; exit 2; }
is_uint "$iters" && [ "$iters" -ge 5 ] || { echo "run.sh: --iters must be at least 5 (perftest's minimum)" >&2; exit 2; }
is_uint "$vm_timeout" || { echo "run.sh: --timeout is a positive number of seconds" >&2; exit 2; }
[[ "$duration" =~ ^[0-9]*\.?[0-9]+$ ]] || { echo "run.sh: --duration is seconds" >&2; exit 2; }
IFS=, read -ra size_list <<<"$sizes"
for s in "${size_list[@]}"; do
  is_uint "$s" && [ "$s" -le 1048576 ] || { echo "run.sh: --sizes takes bytes, 1 to 1048576 (got '$s')" >&2; exit 2; }
done
bin=$repo/build-trixie/bin

num() { [[ "$1" =~ ^[0-9.e+-]+$ ]] && printf "%$2.$3f" "$1" || printf "%$2s" "${1:-n/a}"; }

# The table, from the raw outputs: p50 per size, each ratio within this run.
report() {  # DIR
  local d=$1
  jq -s 'group_by(.size) | map({size: .[0].size,
      librpma: (map(select(.peer == "librpma")) | .[0]),
      rpm: (map(select(.peer == "rpm" and .method_choice == "decided")) | .[0]),
      # rpm with the flush path of librpma; where rpm's build cannot issue FLUSH
      # (rdma-core 44), for native_flush its one-sided read_after_write.
      rpm_same_method: (. as $rows | map(select(.peer == "librpma")) | .[0].method as $m
                        | ($rows | map(select(.peer == "rpm" and .method == $m)) | .[0])
                          // ($rows | map(select(.peer == "rpm" and .method == "read_after_write")) | .[0])),
      ib_read_lat: (map(select(.peer == "ib_read_lat")) | .[0])}
    | . + {ratio_rpm_librpma: (if .rpm and .librpma then .rpm.p50_us / .librpma.p50_us else null end),
           ratio_rpm_same_method_librpma: (if .rpm_same_method and .librpma then .rpm_same_method.p50_us / .librpma.p50_us else null end),
           ratio_rpm_ib_read_lat: (if .rpm and .ib_read_lat then .rpm.p50_us / .ib_read_lat.p50_us else null end),
           ratio_librpma_ib_read_lat: (if .librpma and .ib_read_lat then .librpma.p50_us / .ib_read_lat.p50_us else null end)})' \
    "$d"/librpma.jsonl "$d"/rpm.jsonl "$d"/perftest.jsonl >"$d/summary.json" || { echo "run.sh: jq could not read $d" >&2; return 1; }
  echo "persist p50 in microseconds, one VM run (Debian 13, ADR devdax, rxe), qd 1:"
  printf '  %5s  %-26s %9s  %-26s %9s  %-34s %9s  %11s  %9s %9s %9s\n' size "librpma method" p50 "rpm decided" p50 \
    "rpm one-sided" p50 ib_read_lat rpm/lrpma 1s/lrpma rpm/rd
  jq -r '.[] | [.size, (.librpma.method // "-"), (.librpma.p50_us // "n/a"), (.rpm.method // "-"), (.rpm.p50_us // "n/a"),
      ((.rpm_same_method.method // "-") + (if .rpm_same_method.method_choice == "decided" then "" else " (" + .rpm_same_method.method_choice + ")" end)),
      (.rpm_same_method.p50_us // "n/a"), (.ib_read_lat.p50_us // "n/a"), (.ratio_rpm_librpma // "n/a"),
      (.ratio_rpm_same_method_librpma // "n/a"), (.ratio_rpm_ib_read_lat // "n/a")] | @tsv' "$d/summary.json" |
    while IFS=$'\t' read -r size lm lp rm rp sm sp ib r1 r2 r3; do
      printf '  %5s  %-26s %s  %-26s %s  %-34s %s  %s  %s %s %s\n' "$size" "$lm" "$(num "$lp" 9 1)" "$rm" "$(num "$rp" 9 1)" \
        "$sm" "$(num "$sp" 9 1)" "$(num "$ib" 11 1)" "$(num "$r1" 9 2)" "$(num "$r2" 9 2)" "$(num "$r3" 9 2)"
    done
  echo "  rpm/lrpma: rpm's decided method over librpma; 1s/lrpma: rpm with librpma's flush path over librpma, or,"
  echo "  when rpm cannot take that path (a build whose rdma-core has no ibv_wr_flush), its read_after_write;"
  echo "  rpm/rd: rpm's decided method over ib_read_lat of the same size (a full round trip)."
  [ -s "$d/failures.txt" ] && { echo "NOT MEASURED:"; sed 's/^/  /' "$d/failures.txt"; return 1; }
  return 0
}

[ -n "$report_only" ] && { report "$report_only"; exit $?; }

# ---------------------------------------------------------------- the host
if [ "$inside" = 0 ]; then
  [ -z "${RPM_LAB_OUT:-}" ] || { echo "run.sh: already inside the lab VM; use --inside" >&2; exit 2; }
  "$repo/tools/lab/userland-build.sh" --dir "$repo/build-trixie" librpma-bench rpm-server rpm-bench | tail -n 1 || exit 1
  [ -x "$bin/librpma-bench" ] || { echo "run.sh: $bin/librpma-bench was not built (does the trixie root hold librpma-dev?)" >&2; exit 1; }
  # Outside /tmp: the VM has its own; tools/lab/run copies $RPM_LAB_OUT here.
  out=${out:-$repo/build-trixie/librpma-bench/$(date +%Y%m%d-%H%M%S)}
  mkdir -p "$out" && out=$(cd "$out" && pwd)
  status=0
  RPM_LAB_ARTIFACTS=$out "$repo/tools/lab/run" --userland trixie --pm adr --timeout "$vm_timeout" -- \
    "$here/run.sh" --inside --sizes "$sizes" --ops "$ops" --warmup "$warmup" --iters "$iters" --duration "$duration" || status=$?
  echo "run.sh: raw outputs in $out (exit status $status)" >&2
  exit "$status"
fi

# ------------------------------------------------------------ inside the VM
[ -n "${RPM_LAB_OUT:-}" ] && [ -n "${RPM_LAB_RDMA_ADDR:-}" ] && [ -n "${RPM_LAB_PM:-}" ] ||
  { echo "run.sh: --inside runs in the lab VM (tools/lab/run sets RPM_LAB_OUT, RPM_LAB_RDMA_ADDR, RPM_LAB_PM)" >&2; exit 2; }
out=$RPM_LAB_OUT addr=$RPM_LAB_RDMA_ADDR pm=$RPM_LAB_PM dev=rxe0
: >"$out/librpma.jsonl"; : >"$out/rpm.jsonl"; : >"$out/perftest.jsonl"; : >"$out/failures.txt"
log() { echo "run.sh: [$SECONDS s] $*" >&2; }
fail() { log "FAILED: $*"; echo "$*" >>"$out/failures.txt"; }
pids=()  # what this script started; stopped by id on exit
trap '[ ${#pids[@]} -eq 0 ] || kill "${pids[@]}" 2>/dev/null' EXIT

wait_line() {  # FILE TEXT PID SECONDS: until FILE holds TEXT, the PID lives, the time lasts
  local deadline=$((SECONDS + $4))
  while ((SECONDS < deadline)); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    kill -0 "$3" 2>/dev/null || return 1
    sleep 0.2
  done
  return 1
}
stop() {  # PID SECONDS: SIGTERM, then SIGKILL after SECONDS
  local deadline=$((SECONDS + $2))
  kill "$1" 2>/dev/null
  while ((SECONDS < deadline)) && kill -0 "$1" 2>/dev/null; do sleep 0.2; done
  kill -9 "$1" 2>/dev/null
  wait "$1" 2>/dev/null
}

librpma_pass() {
  local srv=$out/librpma-server.log pid rc
  "$bin/librpma-bench" server --addr "$addr" --pm "$pm" --accept-timeout 60 --session-timeout 600 >"$srv" 2>&1 &
  pid=$!; pids+=("$pid")
  wait_line "$srv" listening "$pid" 60 || { fail "librpma-bench server: not listening within 60 s: $(tail -2 "$srv" | tr '\n' ' ')"; stop "$pid" 5; return; }
  log "librpma-bench client, sizes $sizes, $ops ops after $warmup"
  timeout -k 5 300 "$bin/librpma-bench" client --addr "$addr" --sizes "$sizes" --ops "$ops" --warmup "$warmup" \
    >"$out/librpma.jsonl" 2>"$out/librpma-client.log"
  rc=$?
  [ "$rc" = 0 ] || fail "librpma-bench client: exit status $rc: $(tail -2 "$out/librpma-client.log" | tr '\n' ' ')"
  # The server ends when the client disconnects; bounded all the same.
  local deadline=$((SECONDS + 30))
  while ((SECONDS < deadline)) && kill -0 "$pid" 2>/dev/null; do sleep 0.2; done
  stop "$pid" 5
}

# rpm-server on the same devdax, rpm-bench's persist with every method the
# server grants (the decided one first), as tools/lab/bench runs them.
rpm_pass() {
  local port=7700 secrets=/tmp/rpm-lrb.secrets pid rc
  printf 'bench:%s\n' "$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')" >"$secrets"
  cut -d: -f2 "$secrets" >/tmp/rpm-lrb.secret
  "$bin/rpm-server" --listen "rdma://$addr:$port" --region "pm=$pm" --secrets-file "$secrets" >"$out/rpm-server.log" 2>&1 &
  pid=$!; pids+=("$pid")
  wait_line "$out/rpm-server.log" "region pm" "$pid" 120 ||
    { fail "rpm-server: not serving within 120 s: $(tail -2 "$out/rpm-server.log" | tr '\n' ' ')"; stop "$pid" 5; return; }
  log "rpm-bench persist over rdma://$addr:$port, sizes $sizes"
  timeout -k 5 300 "$bin/rpm-bench" --connect "rdma://$addr:$port" --id bench --secret-file /tmp/rpm-lrb.secret \
    --region pm --tests persist --sizes "$sizes" --qd 1 --threads 1 --duration "$duration" --warmup 0.2 --rounds 1 \
    --json --output "$out/rpm-bench.json" --quiet >/dev/null 2>"$out/rpm-bench.stderr"
  rc=$?
  [ "$rc" = 0 ] || fail "rpm-bench: exit status $rc: $(tail -2 "$out/rpm-bench.stderr" | tr '\n' ' ')"
  jq -c '.results[] | {peer: "rpm", op, size, method, method_choice, ops, errors, p50_us: (.p50_ns / 1000),
      p90_us: ((.p90_ns // null) | if . then . / 1000 else null end), p99_us: (.p99_ns / 1000), min_us: (.min_ns / 1000),
      mean_us: (.mean_ns / 1000)}' "$out/rpm-bench.json" >"$out/rpm.jsonl" 2>/dev/null ||
    fail "rpm-bench: no results in rpm-bench.json"
  # Deregistering the region under TCG takes a while: a minute, then KILL.
  stop "$pid" 60
}

# perftest without rdma_cm needs the GID index of our address's RoCE v2 entry.
gid_index() {
  local port=/sys/class/infiniband/$dev/ports/1 want g i
  # shellcheck disable=SC2086
  want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' ${addr//./ })
  for g in "$port"/gids/*; do
    i=${g##*/}
    [ "$(cat "$g" 2>/dev/null)" = "$want" ] && [ "$(cat "$port/gid_attrs/types/$i" 2>/dev/null)" = "RoCE v2" ] &&
      { echo "$i"; return 0; }
  done
  return 1
}

# ib_read_lat per size: a server, then the client against it; p50 is
# perftest's t_typical.
perftest_pass() {
  local gid size port=18515 pid line cli
  command -v ib_read_lat >/dev/null || { fail "ib_read_lat: not installed (perftest)"; return; }
  gid=$(gid_index) || { fail "ib_read_lat: no RoCE v2 GID for $addr on $dev"; return; }
  for size in "${size_list[@]}"; do
    port=$((port + 1)); cli=$out/ib_read_lat-$size.txt
    timeout -k 5 120 ib_read_lat -d "$dev" -i 1 -x "$gid" -s "$size" -n "$iters" -p "$port" >"$out/ib_read_lat-$size-server.txt" 2>&1 &
    pid=$!; pids+=("$pid")
    # Until the server listens on its TCP port (state 0A in /proc/net/tcp), at most 30 s.
    local hex deadline=$((SECONDS + 30)); printf -v hex ':%04X 00000000:0000 0A' "$port"
    while ((SECONDS < deadline)) && ! grep -q "$hex" /proc/net/tcp /proc/net/tcp6 2>/dev/null; do sleep 0.2; done
    log "ib_read_lat -s $size -n $iters"
    timeout -k 5 120 ib_read_lat -d "$dev" -i 1 -x "$gid" -s "$size" -n "$iters" -p "$port" "$addr" >"$cli" 2>&1
    wait "$pid" 2>/dev/null
    line=$(awk '/#bytes/ { getline; print; exit }' "$cli")
    # shellcheck disable=SC2086
    if [[ "$line" =~ ^[[:space:]]*[0-9]+([[:space:]]+[0-9]+(\.[0-9]+)?){8}[[:space:]]*$ ]]; then
      set -- $line
      jq -cn --argjson size "$1" --argjson min "$3" --argjson typ "$5" --argjson avg "$6" --argjson p99 "$8" \
        '{peer: "ib_read_lat", size: $size, p50_us: $typ, mean_us: $avg, p99_us: $p99, min_us: $min}' >>"$out/perftest.jsonl"
    else
      fail "ib_read_lat -s $size: no result line ($(grep -v '^ *$' "$cli" | tail -1))"
    fi
  done
}

log "PM $pm, $dev at $addr, kernel $(uname -r), librpma $(dpkg-query -W -f '${Version}' librpma0 2>/dev/null || echo '?')"
perftest_pass
librpma_pass
rpm_pass
report "$out"
}
