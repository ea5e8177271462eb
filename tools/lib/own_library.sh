# shellcheck shell=bash
# Sourced by the benchmarks that run a given build's programs (an A/B
# benchmark's before and after, kv-peer --bin, nvmf-bench --build).
#
# own_library BIN_DIR PROGRAM: succeeds when BIN_DIR/PROGRAM loads the
# librpmpm of its own build (BIN_DIR/../lib); otherwise says which one it
# would load and fails. A build folder copied aside before the build tree
# used $ORIGIN (CMakeLists.txt, CMAKE_BUILD_RPATH_USE_ORIGIN) names the
# original folder's library in its RUNPATH: the "before" half of a
# before/after run then measured the "after" library.
own_library() {
  local bin=$1 prog=$2 got want
  [ -x "$bin/$prog" ] || { echo "$bin/$prog: no such program" >&2; return 1; }
  # Not linked to librpmpm (a static tool): nothing to check.
  got=$(ldd "$bin/$prog" 2>/dev/null | awk '/librpmpm/ {print $3}')
  [ -n "$got" ] || return 0
  if [ "$got" = not ]; then  # "librpmpm.so.1 => not found"
    echo "$bin/$prog finds no librpmpm at all (its RUNPATH names a folder that is gone?)" >&2; return 1
  fi
  want=$(cd "$bin/../lib" 2>/dev/null && pwd -P)
  [ -n "$want" ] && [ "$(dirname "$(readlink -f "$got")")" = "$want" ] && return 0
  echo "$bin/$prog loads $got, not its own build's ($bin/../lib): its RUNPATH names another folder." >&2
  echo "  rebuild it with -DCMAKE_BUILD_RPATH_USE_ORIGIN=ON (the default since then), or run it with LD_LIBRARY_PATH=$bin/../lib" >&2
  return 1
}
