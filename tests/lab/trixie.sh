#!/usr/bin/env bash
# The lab on Debian 13 (tools/lab/run --userland trixie): builds what the VM
# runs against trixie's root (tools/lab/userland-build.sh, into BUILD_DIR,
# default <checkout>/build-trixie; through the compiler cache), then runs
# suite.sh's trixie flavor in a VM with trixie's 6.12 kernel on ADR PM, or
# on the PM mode given (cxl: tools/lab/run --pm cxl).
# Usage: tests/lab/trixie.sh CHECKOUT [BUILD_DIR [PM]]
set -euo pipefail
src=$(cd "${1:?usage: trixie.sh CHECKOUT [BUILD_DIR]}" && pwd)
build=${2:-$src/build-trixie}
pm=${3:-adr}
# What suite.sh's trixie flavor runs, and nothing else.
targets=(rpm-probe rpm-server rpm-client rpm-bench rpm-kvstore rpm-floor ops_test lab_rdma_test lab_pmem_test)
t0=$SECONDS
"$src/tools/lab/userland-build.sh" --suite trixie --dir "$build" "${targets[@]}" | tail -n 3
echo "trixie.sh: build-trixie ready in $((SECONDS - t0)) s"
exec "$src/tools/lab/run" --userland trixie --pm "$pm" --timeout 900 -- "$src/tests/lab/suite.sh" "$pm" "$build" trixie
