#!/usr/bin/env bash
# tools/lab/bench without a VM: its report of a run with --peers librpma
# (tests/fixtures/lab-bench/peers: two rounds, numbers chosen so every ratio
# is known), a run without peers, and its refusals of bad options.
# Usage: bench_report_test.sh CHECKOUT
set -uo pipefail
src=$1 bench=$1/tools/lab/bench
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
fail() { echo "bench_report_test: FAILED: $*"; exit 1; }

# The peers rows: per method and size, rpm over librpma within each round,
# the median of those (native_flush: 60/40 and 50/50, median 1.25), and
# rpm-floor's likewise (44/40, 55/50: 1.1); rpm forced to read_after_write
# is named so, and a method without floor rows has a null floor.
cp "$src"/tests/fixtures/lab-bench/peers/* "$work/"
out=$("$bench" --report "$work") || fail "--report exited $? on the fixture: $out"
peer() { jq -r --arg m "$1" ".peers[] | select(.method == \$m and .size == 8) | $2" "$work/summary.json"; }
[ "$(jq '.peers | length' "$work/summary.json")" = 2 ] || fail "expected 2 peers rows"
[ "$(peer native_flush '[.op, .peer, .ratio, .floor_ratio, .librpma_p50_us, .rpm_p50_us] | @tsv')" = \
  "$(printf 'persist\tlibrpma\t1.25\t1.1\t45\t55')" ] || fail "native_flush row: $(peer native_flush 'tostring')"
[ "$(peer read_after_write '[.ratio, .rpm_method_choice, (.floor_p50_us | tostring)] | @tsv')" = \
  "$(printf '1.5\tforced_unsafe\tnull')" ] || fail "read_after_write row: $(peer read_after_write 'tostring')"
grep -q "^  native_flush *8 *45.0 *49.5 *55.0 | *1.25 *1.10$" <<<"$out" || fail "the table's native_flush line: $out"
grep -q "^  read_after_write \* *8 " <<<"$out" || fail "the forced method is not marked in the table"

# Without --peers there are no such rows, and no such table.
rm "$work/librpma.jsonl" "$work/floor.jsonl"
out=$("$bench" --report "$work") || fail "--report without peers exited $?"
[ "$(jq '.peers | length' "$work/summary.json")" = 0 ] || fail "peers rows without librpma figures"
! grep -q "beside librpma" <<<"$out" || fail "a librpma table without librpma figures"

# Bad options end with status 2 and say why, before any VM.
refused() {  # EXPECTED-TEXT ARGS...
  local want=$1 got rc; shift
  got=$("$bench" "$@" 2>&1); rc=$?
  [ "$rc" = 2 ] && grep -q -- "$want" <<<"$got" || fail "'$*': status $rc, '$got' (wanted 2 and '$want')"
}
refused "needs --userland trixie" --peers librpma
refused "--userland is bookworm or trixie" --userland sid
refused "--peers takes librpma" --userland trixie --peers perftest
echo "bench_report_test: the peers rows, their table, a run without peers and three refusals as expected"
