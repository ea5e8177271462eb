#!/usr/bin/env bash
# Builds and runs examples/outside/ as a user outside rpm's tree would:
# against rpm installed into a scratch (non-default) prefix, first with its
# CMakeLists.txt (find_package(rpm) and rpm::rpm), then each program with a
# plain `c++ ... $(pkg-config --cflags --libs rpmpm)`, warnings as errors
# both times. Each build's three programs run (and examples/c's two, built
# as C with CMake's rpm::c and with pkg-config rpmpm-c: section 3):
#   outside-server-client   an in-process server and client;
#   outside-replicator      a primary over two installed rpm-server replicas
#                           on 127.0.0.1 (the second build's run recovers the
#                           group the first one wrote, with a new
#                           generation);
#   outside-errors          each error the documented errc, and a log line.
# Usage: outside_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build_dir=$1
src_dir=$2
example=$src_dir/examples/outside
work=$(mktemp -d "${build_dir}/outside-test.XXXXXX")
shm=$(mktemp -d /dev/shm/rpm-outside-test.XXXXXX)  # every region file, so one rm removes them
server_pids=()

stop() {  # PID: SIGTERM, then SIGKILL if it is still there after 5 s
  kill "$1" 2>/dev/null || return 0
  for _ in $(seq 100); do kill -0 "$1" 2>/dev/null || break; sleep 0.05; done
  kill -9 "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}
cleanup() {
  for pid in "${server_pids[@]}"; do stop "$pid"; done
  rm -rf "$work" "$shm"
}
trap cleanup EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
fail() { echo "outside test: $*" >&2; exit 1; }

# Nothing of the caller's may help the build find rpm, or the programs find
# librpmpm: only the prefix given below, and the RUNPATH or rpath it leads to.
unset LD_LIBRARY_PATH LIBRARY_PATH CPATH CPLUS_INCLUDE_PATH CXXFLAGS CPPFLAGS LDFLAGS \
      CMAKE_PREFIX_PATH rpm_ROOT RPM_ROOT PKG_CONFIG_PATH PKG_CONFIG_LIBDIR RPM_LOG
prefix=$work/prefix
cmake --install "$build_dir" --prefix "$prefix" >/dev/null
libdir=$(ls -d "$prefix"/lib*/ | head -n 1)  # lib or lib64, as the build chose
libdir=${libdir%/}

# Two replicas for outside-replicator: installed rpm-server processes, each
# serving region "data" (as large as the primary's 1 MiB copy) on a port of
# their choosing, which --port-file tells us.
printf 'app:s3cret\n' >"$work/secrets"
replica_uris=()
for name in replica-a replica-b; do
  "$prefix/bin/rpm-server" --listen tcp://127.0.0.1:0 --region "data=$shm/$name.pool:1M" \
    --region "cdata=$shm/$name-c.pool:1M" --region "scratch=$shm/$name-scratch.pool:64K" \
    --secrets-file "$work/secrets" --port-file "$work/$name.port" --io-threads 1 >"$work/$name.log" 2>&1 &
  server_pids+=($!)
  for _ in $(seq 200); do [ -s "$work/$name.port" ] && break; kill -0 "$!" 2>/dev/null || break; sleep 0.05; done
  [ -s "$work/$name.port" ] || { cat "$work/$name.log" >&2; fail "the installed rpm-server ($name) did not start"; }
  replica_uris+=("tcp://127.0.0.1:$(cat "$work/$name.port")")
done
echo "outside test: replicas ${replica_uris[*]}"

run() {  # BUILD NAME ARGS...: the program's output shown, kept in $work/BUILD-NAME.out; bounded
  local out=$work/$1-$2.out
  echo "--- $1: $2"
  timeout 60 "$work/$1/$2" "${@:3}" 2>&1 | tee "$out" || fail "$2 ($1 build) failed; its output is above"
}
run_all() {  # BUILD
  mkdir -p "$shm/$1"
  run "$1" outside-server-client "$shm/$1"
  grep -q "read back 'order 42" "$work/$1-outside-server-client.out" || fail "outside-server-client read nothing back"
  run "$1" outside-replicator "$work/secrets" "$shm/primary.pool" "${replica_uris[@]}"
  [ "$(grep -c '^replica [01] .*: live,' "$work/$1-outside-replicator.out")" = 2 ] ||
    fail "outside-replicator ($1 build) did not leave both replicas live"
  run "$1" outside-errors "$shm/$1"
  grep -q '^library log: warning \[server\]' "$work/$1-outside-errors.out" ||
    fail "outside-errors ($1 build) captured no warning of the server's"
}

# 1. examples/outside/CMakeLists.txt, against the prefix only.
cmake -S "$example" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_COMPILE_WARNING_AS_ERROR=ON >/dev/null ||
  fail "examples/outside did not configure against $prefix"
rpm_dir=$(sed -n 's/^rpm_DIR:PATH=//p' "$work/cmake/CMakeCache.txt")
case $rpm_dir in "$prefix"/*) ;; *) fail "find_package(rpm) found $rpm_dir, not the package in $prefix" ;; esac
cmake --build "$work/cmake" >/dev/null || fail "examples/outside did not build with CMake"
run_all cmake
echo "outside test: the CMake build's three programs ran"

# 2. pkg-config only, with the rpath README.md tells a user of a
#    non-default prefix to add.
export PKG_CONFIG_PATH=$libdir/pkgconfig
pc_libdir=$(pkg-config --variable=libdir rpmpm)
[ "$(cd "$pc_libdir" && pwd -P)" = "$(cd "$libdir" && pwd -P)" ] || fail "pkg-config rpmpm points at $pc_libdir, not $libdir"
mkdir -p "$work/pkg-config"
for pair in server_client:outside-server-client replicator:outside-replicator errors:outside-errors; do
  # shellcheck disable=SC2046 # pkg-config's flags are meant to be split into words
  c++ -Wall -Wextra -Wpedantic -Werror -o "$work/pkg-config/${pair#*:}" "$example/${pair%%:*}.cpp" \
    $(pkg-config --cflags --libs rpmpm) -Wl,-rpath,"$pc_libdir" || fail "${pair#*:} did not build with pkg-config rpmpm"
done
run_all pkg-config
# The second run opened the same local copy and replicas: it found what the
# first one committed, and went on with a newer generation.
gen1=$(sed -n 's/^open: generation \([0-9]*\),.*/\1/p' "$work/cmake-outside-replicator.out")
gen2=$(sed -n 's/^open: generation \([0-9]*\),.*/\1/p' "$work/pkg-config-outside-replicator.out")
[ -n "$gen1" ] && [ -n "$gen2" ] && [ "$gen2" -gt "$gen1" ] ||
  fail "the second outside-replicator run's generation ($gen2) is not above the first's ($gen1)"
grep -q "^found at offset 0: 'alpha (generation $gen1)'" "$work/pkg-config-outside-replicator.out" ||
  fail "the second outside-replicator run did not find the first run's record"
echo "outside test: the pkg-config build's three programs ran"

# 3. examples/c, the C API's: a C-only CMake project (rpm::c) and a plain
#    `cc ... $(pkg-config --cflags --libs rpmpm-c)`, C11, warnings as errors.
#    rpm-c-persist persists into region "scratch" and reads it back;
#    rpm-c-replicator appends to a replicated log over region "cdata" of
#    both replicas (the second build's run finds the first one's record).
c_example=$src_dir/examples/c
cmake -S "$c_example" -B "$work/c-cmake" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_COMPILE_WARNING_AS_ERROR=ON >/dev/null ||
  fail "examples/c did not configure against $prefix"
cmake --build "$work/c-cmake" >/dev/null || fail "examples/c did not build with CMake (rpm::c)"
mkdir -p "$work/c-pkg-config"
for program in persist replicator; do
  # shellcheck disable=SC2046 # pkg-config's flags are meant to be split into words
  cc -std=c11 -Wall -Wextra -Wpedantic -Werror -o "$work/c-pkg-config/rpm-c-$program" "$c_example/$program.c" \
    $(pkg-config --cflags --libs rpmpm-c) -Wl,-rpath,"$pc_libdir" || fail "rpm-c-$program did not build with pkg-config rpmpm-c"
done
for build in c-cmake c-pkg-config; do
  run "$build" rpm-c-persist "${replica_uris[0]}" app s3cret scratch "from $build"
  grep -qx "read back 'from $build'" "$work/$build-rpm-c-persist.out" || fail "rpm-c-persist ($build) read nothing back"
  run "$build" rpm-c-replicator app s3cret "$shm/c-primary.pool" cdata "${replica_uris[@]}"
  [ "$(grep -c '^replica [01]: live,' "$work/$build-rpm-c-replicator.out")" = 2 ] ||
    fail "rpm-c-replicator ($build) did not leave both replicas live"
done
grep -q "^record 1: 'written in generation 1'" "$work/c-pkg-config-rpm-c-replicator.out" &&
  grep -q "^record 2: 'written in generation 2'" "$work/c-pkg-config-rpm-c-replicator.out" ||
  fail "the second rpm-c-replicator run did not find the first run's record beside its own"
echo "outside test: examples/c builds as C against $prefix (CMake rpm::c and pkg-config rpmpm-c) and runs"

for pid in "${server_pids[@]}"; do kill -0 "$pid" 2>/dev/null || fail "a replica rpm-server died during the test"; done
echo "outside test: examples/outside builds and runs against $prefix with CMake and with pkg-config"
