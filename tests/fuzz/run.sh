#!/bin/sh
# Build the fuzz targets (rpm's protocol, NVMe/TCP PDUs) with clang-14 into
# build-fuzz/ (or $RPM_FUZZ_BUILD) and run each for SECONDS seconds
# (default 60), starting from the committed seeds
# in tests/fuzz/corpus/. Exits non-zero if a target crashes or a check in
# it fails; the crashing input is left in build-fuzz/artifacts/.
#
# usage: tests/fuzz/run.sh [SECONDS]
set -eu

seconds=${1:-60}
# 0 would be libFuzzer's "no limit": refused like any other non-positive count.
case $seconds in
    ''|*[!0-9]*|0|0*) echo "usage: $0 [SECONDS] (a positive number of seconds, not '$seconds')" >&2; exit 2 ;;
esac

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${RPM_FUZZ_BUILD:-$root/build-fuzz}
jobs=$(nproc 2>/dev/null || echo 2)

CC=${CC:-clang-14} CXX=${CXX:-clang++-14} \
    cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "$jobs"

# Fuzz into a scratch copy: new inputs the fuzzer finds stay out of the
# source tree (copy interesting ones into tests/fuzz/corpus/ by hand).
mkdir -p "$build/artifacts"
# A libFuzzer process uses one CPU: the targets run as many at a time as
# there are CPUs, each for the full SECONDS into its own log, printed in
# turn once it ended (one at a time left a CPU idle: 60 s of tools/test's
# fuzzing stage on these 2-CPU machines).
fuzz() {  # TARGET: runs it into $build/fuzz_TARGET.log
    work="$build/corpus/$1"
    mkdir -p "$work"
    cp -n "$here/corpus/$1"/* "$work"/ 2>/dev/null || true
    "$build/fuzz_$1" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$build/artifacts/$1-" "$work" >"$build/fuzz_$1.log" 2>&1
}
status=0
set -- frames handshake nvmf_pdu nvmf_rdma nvmf_auth
while [ $# -gt 0 ]; do
    batch=
    while [ $# -gt 0 ] && [ "$(echo $batch | wc -w)" -lt "$jobs" ]; do
        fuzz "$1" &
        batch="$batch $1:$!"
        shift
    done
    for tp in $batch; do
        rc=0
        wait "${tp#*:}" || rc=1
        echo "== fuzz_${tp%%:*} for ${seconds}s"
        cat "$build/fuzz_${tp%%:*}.log"
        if [ $rc -ne 0 ]; then
            echo "fuzz_${tp%%:*} FAILED (inputs in $build/artifacts/)" >&2
            status=1
        fi
    done
done
exit $status
