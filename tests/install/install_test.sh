#!/usr/bin/env bash
# Installs rpm from the build tree into a scratch (non-default) prefix, then
# uses it the way README.md says an outside user does:
#   1. the installed tools run from that prefix with no LD_LIBRARY_PATH
#      (their RUNPATH is $ORIGIN/../lib): rpm-probe answers, and rpm-server
#      serves an rpm-client put and get on 127.0.0.1;
#   2. README's two CMake lines (find_package(rpm), rpm::rpm) build a program
#      with the compiler's default C++ standard: the exported target must
#      carry C++20 itself;
#   3. pkg-config rpmpm builds the same program with no flags of our own.
# Both programs must run.
# Usage: install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build_dir=$1
src_dir=$2
work=$(mktemp -d "${build_dir}/install-test.XXXXXX")
server_pid=
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "install test: $*" >&2; exit 1; }
# Nothing of the caller's may help the installed files find each other.
unset LD_LIBRARY_PATH CXXFLAGS CPPFLAGS LDFLAGS CMAKE_PREFIX_PATH PKG_CONFIG_PATH
prefix=$work/prefix

cmake --install "$build_dir" --prefix "$prefix" >/dev/null
libdir=$(ls -d "$prefix"/lib*/ | head -n 1)
libdir=${libdir%/}

# 1. Installed tools, from a prefix the dynamic loader does not search.
for tool in rpm-probe rpm-server rpm-client rpm-bench rpm-nvmf rpm-kvstore; do
  [ -x "$prefix/bin/$tool" ] || fail "$prefix/bin/$tool was not installed"
done
runpath=$(readelf -d "$prefix/bin/rpm-server" | sed -n 's/.*(R[UN]*PATH).*\[\(.*\)\]$/\1/p')
echo "install test: installed rpm-server RUNPATH: ${runpath:-<none>}"
"$prefix/bin/rpm-probe" --sysfs-root "$src_dir/tests/fixtures/sysfs/adr_ddio_on" >/dev/null ||
  fail "the installed rpm-probe does not run"
region=/dev/shm/rpm-install-test-$$.pool
printf 'app:s3cret\n' >"$work/secrets"
"$prefix/bin/rpm-server" --listen tcp://127.0.0.1:0 --region "kv=$region:1M" --secrets-file "$work/secrets" \
  --port-file "$work/port" >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 200); do [ -s "$work/port" ] && break; kill -0 "$server_pid" 2>/dev/null || break; sleep 0.05; done
[ -s "$work/port" ] || { cat "$work/server.log" >&2; fail "the installed rpm-server did not start"; }
client() { "$prefix/bin/rpm-client" --connect "tcp://127.0.0.1:$(cat "$work/port")" --id app --secret s3cret "$@"; }
client put --region kv --offset 64 "installed" >/dev/null || fail "the installed rpm-client could not put"
got=$(client get --region kv --offset 64 --length 9) || fail "the installed rpm-client could not get"
[ "$got" = installed ] || fail "the installed tools read back '$got', not 'installed'"
kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=
rm -f "$region"
echo "install test: the installed rpm-server and rpm-client run from $prefix"
"$prefix/bin/rpm-kvstore" --help >/dev/null || fail "the installed rpm-kvstore does not run"
for tool in rpm-probe rpm-server rpm-client rpm-bench rpm-nvmf rpm-kvstore; do
  [ -s "$prefix/share/man/man1/$tool.1" ] || fail "the man page $tool.1 was not installed"
done
# The C API's pages (dev component): the overview, and a link (.so) page.
for page in rpm.3 rpm_region_write.3 rpm_region_flush.3; do
  [ -s "$prefix/share/man/man3/$page" ] || fail "the man page $page was not installed"
done
echo "install test: rpm-kvstore runs from $prefix; the six man pages are in $prefix/share/man/man1, the C API's in man3"

# 2. README's CMake lines; the consumer sets no C++ standard of its own.
cmake -S "$src_dir/tests/install/consumer" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/cmake-build" >/dev/null || fail "find_package(rpm) + rpm::rpm did not build"
"$work/cmake-build/consumer" "$region"
rm -f "$region"

# 3. pkg-config: its flags only; a non-default prefix is found at run time
#    through an rpath (README.md says so).
export PKG_CONFIG_PATH=$libdir/pkgconfig
c++ -o "$work/pc-consumer" "$src_dir/tests/install/consumer/main.cpp" $(pkg-config --cflags --libs rpmpm) \
  -Wl,-rpath,"$(pkg-config --variable=libdir rpmpm)" || fail "pkg-config rpmpm did not build"
"$work/pc-consumer" "$region"
rm -f "$region"
echo "install test: find_package(rpm) and pkg-config rpmpm both work"
