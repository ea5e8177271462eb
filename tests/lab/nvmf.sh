#!/usr/bin/env bash
# NVMe/TCP and NVMe/RDMA interoperability with the Linux kernel, inside
# the lab VM (suite.sh runs it; all traffic stays on the VM's loopback and
# its own veth pair under rxe0):
#   kernel-host    rpm-nvmf target exports the VM's NVMe drive (nsid 1) and
#                  the PM device (nsid 2); the kernel's NVMe/TCP host
#                  (nvme discover / connect) writes and reads them: 8 MiB of
#                  random data by dd with O_DIRECT compared byte for byte, a
#                  data-verifying fio run, and the bytes found on the backing
#                  drive itself after disconnect; blkdiscard through Dataset
#                  Management (deallocate) on both namespaces, the PM one then
#                  reading zeroes where it was discarded and its data elsewhere;
#                  then again with header and data digests.
#   kernel-host-rdma  the same over NVMe/RDMA (rpm-nvmf target --transport
#                  rdma on rxe0's address, nvme connect -t rdma), without
#                  the digests (NVMe/TCP's own), with 2 I/O queues; fio
#                  verifying at several block sizes and depths; an ext4
#                  file system made, filled, checked; then the target
#                  killed (SIGKILL) under the connected host and restarted:
#                  the host reconnects and the files are intact.
#   kernel-target-rdma  the same against the kernel's nvmet-rdma on rxe0.
#   kernel-target  the kernel's nvmet-tcp exports the same drive (configfs);
#                  rpm-nvmf (rpm::nvmf::Host) discovers, identifies, writes,
#                  flushes and reads it back, with and without digests, and an
#                  LBA out of range comes back as the kernel's NVMe status.
# Usage: nvmf.sh kernel-host|kernel-host-rdma|kernel-target|kernel-target-rdma BUILD_DIR
{
set -uo pipefail
what=$1 build=$2
: "${RPM_LAB_NVME:?needs tools/lab/run --nvme-cmb}"
bin=$build/bin
nqn=nqn.2026-11.io.rpm:lab
knqn=nqn.2026-11.io.rpm:kernel
hostnqn=nqn.2026-11.io.rpm:kernel-host
hostid=4b1d0c2e-5a6f-4e1b-9c3d-2f7a8e6b5d40
work=/tmp/nvmf.$$
mkdir -p "$work"
target_pid=
# The fabric kernel_host_round uses: tcp on loopback, or rdma on rxe0's address.
tr=tcp addr=127.0.0.1

modules() { for m in "$@"; do /run/modprobe "$m" || { echo "modprobe $m failed"; return 1; }; done; }

cleanup() {
  nvme disconnect -n "$nqn" >/dev/null 2>&1
  [ -n "$target_pid" ] && kill "$target_pid" 2>/dev/null && wait "$target_pid" 2>/dev/null
  target_pid=
}
trap cleanup EXIT

# The block device the kernel host made for subsystem $1 (multipath names
# it after the subsystem: nvmeXnY).
block_of() {
  local d
  for d in /sys/class/nvme-subsystem/*; do
    [ "$(cat "$d/subsysnqn" 2>/dev/null)" = "$1" ] || continue
    ls "$d" | grep -E '^nvme[0-9]+n1$' | head -1
    return 0
  done
  return 1
}

start_rpm_target() {  # EXTRA ARGS...
  # Failed commands are printed (RPM_LOG=debug): the kernel probes
  # for optional features, and the log shows which.
  RPM_LOG=debug "$bin/rpm-nvmf" target --transport "$tr" --listen "$addr:4420" --subsystem "$nqn" \
      --ns "1=$RPM_LAB_NVME" --ns "2=$RPM_LAB_PM,pmem,bs=4096" --nic rxe0 --port-file "$work/port" "$@" \
      >"$work/target.log" 2>&1 &
  target_pid=$!
  for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
  cat "$work/target.log"
  [ -s "$work/port" ]
}

# dd 8 MiB of random data through the kernel's block device with O_DIRECT,
# read it back, compare; then fio writes and verifies (crc32c per block).
exercise() {  # DEV OFFSET_MIB
  local dev=/dev/$1 off=$2
  head -c 8M /dev/urandom >"$work/data"
  dd if="$work/data" of="$dev" bs=1M seek="$off" oflag=direct status=none || return 1
  dd if="$dev" of="$work/back" bs=1M skip="$off" count=8 iflag=direct status=none || return 1
  cmp "$work/data" "$work/back" || { echo "data read back through $dev differs"; return 1; }
  echo "dd: 8 MiB written to $dev at $off MiB with O_DIRECT and read back equal"
  # fio keeps its verify state in the current folder: the VM's is read-only.
  (cd "$work" && fio --name=verify --filename="$dev" --direct=1 --ioengine=libaio --iodepth=8 --rw=randwrite --bs=4k \
      --offset=$(( (off + 8) << 20 )) --size=8M --verify=crc32c --verify_fatal=1 --do_verify=1 \
      --output="$work/fio.txt") || { cat "$work/fio.txt"; return 1; }
  grep -E "verify|err=" "$work/fio.txt" | head -3
  echo "fio: 8 MiB random 4 KiB writes to $dev verified (crc32c)"
}

# Dataset Management (deallocate): the kernel discards through it once
# Identify Controller's ONCS says so. PM says deallocated blocks read as
# zeroes (DLFEAT 001b): 1 MiB discarded at the start of what exercise()
# just wrote, then zeroes there and its data after it. A block device
# promises nothing of the bytes (DLFEAT 000b): rpm discards on the drive,
# and the command must succeed.
discard() {  # DEV ZEROES(yes|no)
  local dev=$1 max
  max=$(cat "/sys/block/$dev/queue/discard_max_bytes")
  [ "$max" -gt 0 ] || { echo "$dev: the kernel host does not discard (ONCS lacks Dataset Management)"; return 1; }
  if [ "$2" = no ]; then
    blkdiscard -o $((32 << 20)) -l $((1 << 20)) "/dev/$dev" || { echo "blkdiscard on $dev failed"; return 1; }
    echo "blkdiscard: 1 MiB of $dev at 32 MiB deallocated (discard_max_bytes $max)"
    return 0
  fi
  blkdiscard -o 0 -l $((1 << 20)) "/dev/$dev" || { echo "blkdiscard on $dev failed"; return 1; }
  dd if="/dev/$dev" of="$work/back" bs=1M count=8 iflag=direct status=none || return 1
  head -c 1M /dev/zero >"$work/expected.discard"
  tail -c +$(((1 << 20) + 1)) "$work/data" >>"$work/expected.discard"
  cmp "$work/expected.discard" "$work/back" ||
    { echo "$dev after discarding its first MiB: not zeroes there and the data after"; return 1; }
  echo "blkdiscard: the first MiB of $dev deallocated and reads as zeroes, the 7 MiB after it intact"
}

kernel_host_round() {  # DIGEST ARGS for nvme connect...
  nvme discover -t "$tr" -a "$addr" -s 4420 --hostnqn="$hostnqn" --hostid="$hostid" >"$work/disc" || return 1
  grep -E "trtype|subnqn|trsvcid|rdma_" "$work/disc"
  grep -q "$nqn" "$work/disc" || { echo "discovery log lacks $nqn"; return 1; }
  grep -q "trtype: *$tr" "$work/disc" || { echo "discovery log: the transport is not $tr"; return 1; }
  nvme connect -t "$tr" -a "$addr" -s 4420 -n "$nqn" --hostnqn="$hostnqn" --hostid="$hostid" "$@" || return 1
  local dev
  for _ in $(seq 50); do dev=$(block_of "$nqn") && [ -n "$dev" ] && [ -b "/dev/$dev" ] && break; sleep 0.2; done
  [ -n "$dev" ] || { echo "no block device for $nqn"; return 1; }
  echo "kernel host: /dev/$dev, $(cat /sys/block/$dev/size) sectors, model '$(cat /sys/block/$dev/device/model 2>/dev/null | xargs)'"
  exercise "$dev" 0 || return 1
  cp "$work/data" "$work/expected"
  discard "$dev" no || return 1
  # The PM namespace (nsid 2) too.
  local pm=${dev%n1}n2
  [ -b "/dev/$pm" ] && exercise "$pm" 0 || { echo "no PM namespace at /dev/$pm"; return 1; }
  discard "$pm" yes || return 1
  nvme disconnect -n "$nqn" >/dev/null || return 1
  # The bytes must be on the drive itself, not only in rpm's hands.
  dd if="$RPM_LAB_NVME" of="$work/drive" bs=1M count=8 iflag=direct status=none || return 1
  cmp "$work/expected" "$work/drive" || { echo "the backing drive does not hold the data"; return 1; }
  echo "backing drive $RPM_LAB_NVME holds the 8 MiB written through NVMe/$tr"
}

kernel_host() {
  modules nvme_tcp || return 1
  start_rpm_target || return 1
  kernel_host_round || return 1
  echo "--- again with header and data digests"
  kernel_host_round --hdr-digest --data-digest || return 1
  kill "$target_pid"; wait "$target_pid"; target_pid=
  echo "commands that failed (the kernel probing optional features):"
  grep "^rpm nvmf: qid" "$work/target.log" | sort | uniq -c
  tail -1 "$work/target.log"
}

# The controller (nvmeX) the kernel host made for subsystem $1, and its state.
ctrl_state() {
  local d c
  for d in /sys/class/nvme-subsystem/*; do
    [ "$(cat "$d/subsysnqn" 2>/dev/null)" = "$1" ] || continue
    for c in "$d"/nvme*; do [ -f "$c/state" ] && cat "$c/state" && return 0; done
  done
  return 1
}

# fio verifying at several block sizes and queue depths (libaio, O_DIRECT),
# one job per pair, one after the other (stonewall), all in one fio run:
# under TCG each fio start and its jq checks cost about 5 s, so fourteen
# separate runs spent more time starting than doing I/O.
fio_matrix() {  # DEV
  local bs qd lbs sizes=() jobs=0
  lbs=$(cat "/sys/block/$1/queue/logical_block_size")
  for bs in 512 4096 65536 131072; do [ "$bs" -ge "$lbs" ] && sizes+=("$bs"); done
  {
    printf '[global]\nfilename=/dev/%s\ndirect=1\nioengine=libaio\nrw=randwrite\noffset=%d\nsize=4M\n' "$1" $((40 << 20))
    printf 'verify=crc32c\nverify_fatal=1\ndo_verify=1\nstonewall\n'
    for bs in "${sizes[@]}"; do
      for qd in 1 16; do printf '[bs%s-qd%s]\nbs=%s\niodepth=%s\n' "$bs" "$qd" "$bs" "$qd"; jobs=$((jobs + 1)); done
    done
  } >"$work/matrix.fio"
  (cd "$work" && fio --output-format=json --output="$work/fio.json" "$work/matrix.fio") || { cat "$work/fio.json"; return 1; }
  # Every job ran, and each both wrote and read back (verified) all 4 MiB.
  local ok
  ok=$(jq --argjson n $jobs --argjson b $((4 << 20)) \
    '(.jobs | length) == $n and all(.jobs[]; .write.io_bytes == $b and .read.io_bytes == $b and .error == 0)' \
    "$work/fio.json")
  [ "$ok" = true ] || {
    jq -r '.jobs[] | "\(.jobname): wrote \(.write.io_bytes), verified \(.read.io_bytes), error \(.error)"' "$work/fio.json"
    echo "fio on /dev/$1: not every job wrote and verified 4 MiB"; return 1; }
  echo "fio: random writes verified (crc32c) at ${sizes[*]} bytes, depths 1 and 16 on /dev/$1 ($jobs jobs)"
}

# ext4 on the namespace, filled and checked; the target killed under the
# connected host and restarted; the host reconnects, the files are intact.
fs_and_restart() {
  nvme connect -t "$tr" -a "$addr" -s 4420 -n "$nqn" --hostnqn="$hostnqn" --hostid="$hostid" --nr-io-queues=2 \
      --reconnect-delay=1 --ctrl-loss-tmo=60 || return 1
  local dev mnt=$work/mnt
  for _ in $(seq 50); do dev=$(block_of "$nqn") && [ -n "$dev" ] && [ -b "/dev/$dev" ] && break; sleep 0.2; done
  [ -n "$dev" ] || { echo "no block device for $nqn"; return 1; }
  fio_matrix "$dev" || return 1
  fio_matrix "${dev%n1}n2" || return 1   # the PM namespace
  mkfs.ext4 -q -F "/dev/$dev" || { echo "mkfs.ext4 on /dev/$dev failed"; return 1; }
  mkdir -p "$mnt" && mount "/dev/$dev" "$mnt" || { echo "mount /dev/$dev failed"; return 1; }
  local i
  for i in 1 2 3 4; do head -c $((i << 20)) /dev/urandom >"$mnt/f$i"; done
  (cd "$mnt" && sha256sum f*) >"$work/sums"
  umount "$mnt" || return 1
  fsck.ext4 -fn "/dev/$dev" >"$work/fsck" 2>&1 || { cat "$work/fsck"; echo "fsck found errors"; return 1; }
  echo "ext4: made on /dev/$dev, 10 MiB of files written, unmounted, fsck -fn clean"
  kill -9 "$target_pid"; wait "$target_pid" 2>/dev/null; target_pid=
  echo "target killed (SIGKILL) under the connected host"
  for _ in $(seq 50); do [ "$(ctrl_state "$nqn")" != live ] && break; sleep 0.2; done
  echo "host controller state: $(ctrl_state "$nqn")"
  mv "$work/target.log" "$work/target.killed.log"
  start_rpm_target || return 1
  local state
  for _ in $(seq 150); do state=$(ctrl_state "$nqn"); [ "$state" = live ] && break; sleep 0.2; done
  [ "$state" = live ] || { echo "the host did not reconnect within 30 s (state $state)"; return 1; }
  echo "host reconnected to the restarted target"
  mount "/dev/$dev" "$mnt" || { echo "mount after the restart failed"; return 1; }
  (cd "$mnt" && sha256sum -c --quiet "$work/sums") || { umount "$mnt"; echo "files differ after the restart"; return 1; }
  umount "$mnt"
  echo "the 4 files read back intact after the restart"
  nvme disconnect -n "$nqn" >/dev/null
}

kernel_host_rdma() {
  tr=rdma addr=${RPM_LAB_RDMA_ADDR:?needs tools/lab/run}
  modules nvme_rdma || return 1
  start_rpm_target || return 1
  kernel_host_round --nr-io-queues=2 || return 1
  fs_and_restart || return 1
  kill "$target_pid"; wait "$target_pid"; target_pid=
  echo "commands that failed (the kernel probing optional features):"
  grep "^rpm nvmf: qid" "$work/target.log" | sort | uniq -c
  tail -1 "$work/target.log"
}

# The kernel target over the same drive (configfs, nvmet-tcp on port 4421).
kernel_target_up() {
  modules nvmet "nvmet_$tr" || return 1
  mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config || return 1
  local c=/sys/kernel/config/nvmet
  mkdir -p "$c/subsystems/$knqn/namespaces/1" "$c/ports/1" || return 1
  echo 1 >"$c/subsystems/$knqn/attr_allow_any_host"
  echo "$RPM_LAB_NVME" >"$c/subsystems/$knqn/namespaces/1/device_path"
  echo 1 >"$c/subsystems/$knqn/namespaces/1/enable" || return 1
  echo "$tr" >"$c/ports/1/addr_trtype"; echo ipv4 >"$c/ports/1/addr_adrfam"
  echo "$addr" >"$c/ports/1/addr_traddr"; echo 4421 >"$c/ports/1/addr_trsvcid"
  ln -sf "$c/subsystems/$knqn" "$c/ports/1/subsystems/$knqn" || return 1
}

kernel_target_down() {
  local c=/sys/kernel/config/nvmet
  rm -f "$c/ports/1/subsystems/$knqn"; rmdir "$c/ports/1" 2>/dev/null
  echo 0 >"$c/subsystems/$knqn/namespaces/1/enable" 2>/dev/null
  rmdir "$c/subsystems/$knqn/namespaces/1" "$c/subsystems/$knqn" 2>/dev/null
  return 0
}

kernel_target() {
  kernel_target_up || { kernel_target_down; return 1; }
  local h=(--transport "$tr" --address "$addr" --port 4421 --subsystem "$knqn")
  local rc=0
  "$bin/rpm-nvmf" discover --transport "$tr" --address "$addr" --port 4421 | tee "$work/disc" && grep -q "$knqn" "$work/disc" || rc=1
  [ $rc = 0 ] && "$bin/rpm-nvmf" identify "${h[@]}" || rc=1
  [ $rc = 0 ] && "$bin/rpm-nvmf" verify "${h[@]}" --lba 0 --blocks 2048 --seed 7 || rc=1       # 1 MiB: R2T + H2CData
  [ $rc = 0 ] && "$bin/rpm-nvmf" verify "${h[@]}" --lba 4096 --blocks 8 --seed 8 || rc=1       # 4 KiB: in-capsule
  [ $rc = 0 ] && [ "$tr" = tcp ] && { "$bin/rpm-nvmf" verify "${h[@]}" --lba 8192 --blocks 256 --seed 9 --header-digest --data-digest || rc=1; }
  [ $rc = 0 ] && "$bin/rpm-nvmf" verify "${h[@]}" --lba 16384 --blocks 8192 --seed 10 || rc=1  # 4 MiB: split at MDTS
  [ $rc = 0 ] && "$bin/rpm-nvmf" write-zeroes "${h[@]}" --lba 0 --blocks 8 && "$bin/rpm-nvmf" read "${h[@]}" --lba 0 --blocks 8 --out "$work/z" &&
    head -c 4096 /dev/zero >"$work/zeros" && cmp "$work/z" "$work/zeros" && echo "write-zeroes: 8 blocks read back as zeroes" || rc=1
  if [ $rc = 0 ]; then
    # A block past the end comes back as the kernel's NVMe status, exit 1.
    # (nvmet's block backend does not check the range itself: the block
    # layer fails the bio and nvmet answers Internal Error, SC 0x06.)
    local blocks=$(( $(blockdev --getsz "$RPM_LAB_NVME") ))
    "$bin/rpm-nvmf" read "${h[@]}" --lba "$blocks" --blocks 1 --out "$work/x" 2>"$work/err"; local st=$?
    cat "$work/err"
    [ $st = 1 ] && grep -qE "SC 0x(80|06)" "$work/err" || { echo "expected an NVMe status for a read past the end"; rc=1; }
  fi
  kernel_target_down
  return $rc
}

case "$what" in
  kernel-host) kernel_host; rc=$? ;;
  kernel-host-rdma) kernel_host_rdma; rc=$? ;;
  kernel-target) kernel_target; rc=$? ;;
  kernel-target-rdma) tr=rdma addr=${RPM_LAB_RDMA_ADDR:?needs tools/lab/run}; kernel_target; rc=$? ;;
  *) echo "usage: nvmf.sh kernel-host|kernel-host-rdma|kernel-target|kernel-target-rdma BUILD_DIR"; rc=2 ;;
esac
exit $rc
}
