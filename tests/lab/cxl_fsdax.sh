#!/usr/bin/env bash
# The CXL region as fsdax (tools/lab/run --pm cxl --dax fsdax), inside the
# lab VM: rpm-probe finds the block device in the CXL-backed nd region, and
# rpm-server serves a file of an ext4 mounted with -o dax on it over tcp://
# (rxe cannot register fsdax pages, pmem/rpma#1197: devdax is suite.sh's),
# with the grant docs/flush-methods.md's table gives memory_controller.
# Usage: cxl_fsdax.sh BUILD_DIR
set -uo pipefail
build=${1:?usage: cxl_fsdax.sh BUILD_DIR}
: "${RPM_LAB_PM:?run me through tools/lab/run --pm cxl --dax fsdax}"
dev=$(basename "$RPM_LAB_PM")
json=$("$build/bin/rpm-probe" --json) || exit 1
got=$(jq -r '.regions[0] | [(.devices | join(",")), .persistence_domain, .cxl.cxl_region] | join(" ")' <<<"$json")
echo "probe: devices, domain, CXL region of region0 = $got"
[ "$got" = "$dev memory_controller region0" ] || { echo "expected: $dev memory_controller region0"; exit 1; }
mnt=/tmp/cxl-fsdax
mkdir -p "$mnt"
mkfs.ext4 -q -F -b 4096 "$RPM_LAB_PM" || exit 1
mount -o dax "$RPM_LAB_PM" "$mnt" || { echo "mount -o dax $RPM_LAB_PM failed"; exit 1; }
trap 'umount "$mnt"' EXIT
truncate -s 64M "$mnt/kv" || exit 1
env RPM_IT_TRANSPORT=tcp RPM_IT_ADDR=127.0.0.1 RPM_IT_PM="$mnt/kv" RPM_IT_PM_DOMAIN=memory_controller \
  RPM_IT_PM_METHOD=send_flush RPM_IT_PM_PERSIST=cache_flush_sfence "$build/tests/ops_test" --gtest_brief=1
