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
case $seconds in
    ''|*[!0-9]*) echo "usage: $0 [SECONDS]" >&2; exit 2 ;;
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
status=0
for target in frames handshake nvmf_pdu nvmf_rdma; do
    work="$build/corpus/$target"
    mkdir -p "$work"
    cp -n "$here/corpus/$target"/* "$work"/ 2>/dev/null || true
    echo "== fuzz_$target for ${seconds}s"
    if ! "$build/fuzz_$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
            -print_final_stats=1 -artifact_prefix="$build/artifacts/$target-" "$work"; then
        echo "fuzz_$target FAILED (inputs in $build/artifacts/)" >&2
        status=1
    fi
done
exit $status
