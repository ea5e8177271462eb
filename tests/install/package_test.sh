#!/usr/bin/env bash
# The Debian packages (cmake/Package.cmake), as a Debian user meets them:
#   1. cpack makes librpmpmN (N: the SONAME's major version, 0 for now),
#      librpmpm-dev and rpmpm-tools, each holding
#      what it should (the library; headers, CMake and pkg-config files,
#      the C API's man pages; the tools and their man pages) and nothing of
#      the others';
#   2. dpkg installs them on this machine (their dependencies are Debian
#      packages tools/install-deps installed);
#   3. a program outside the tree builds against /usr with find_package(rpm)
#      and with pkg-config, neither given a path, and runs; the installed
#      rpm-probe runs and man finds its page;
#   4. the packages are purged again (also when a step fails).
# With the RocksDB plug-in built, its package librpm-rocksdbN too: its
# library and headers, nothing of the others'; installed, the library
# registers rpm:// with Debian's db_bench (when rocksdb-tools is there).
# Usage: package_test.sh BUILD_DIR SOURCE_DIR     (as root)
set -euo pipefail
build_dir=$1
src_dir=$2
[ "$(id -u)" = 0 ] || { echo "package test: needs root (dpkg -i)"; exit 1; }
# The runtime package is named after the SONAME, librpmpm.so.MAJOR (Debian's
# policy; cmake/Package.cmake): librpmpm1 since 1.0.
major=$(sed -n 's/^#define RPM_VERSION_MAJOR \([0-9][0-9]*\)$/\1/p' "$src_dir/include/rpm/version.hpp")
[ -n "$major" ] || { echo "package test: no RPM_VERSION_MAJOR in $src_dir/include/rpm/version.hpp"; exit 1; }
runtime=librpmpm$major
packages=(rpmpm-tools librpmpm-dev "$runtime")
rocksdb=
if grep -q '^set(CPACK_COMPONENTS_ALL ".*rocksdb' "$build_dir/CPackConfig.cmake"; then
  rocksdb=librpm-rocksdb$major
  packages=("$rocksdb" "${packages[@]}")
fi
# The test purges what it installs: it must not take away packages someone
# installed on purpose.
for p in "${packages[@]}"; do
  if dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q 'ok installed'; then
    echo "package test: $p is already installed on this machine; the test installs and then purges its own" \
         "build of it, so it stops here (dpkg -P ${packages[*]} first to run it)"
    exit 1
  fi
done
work=$(mktemp -d "${build_dir}/package-test.XXXXXX")
region=/dev/shm/rpm-package-test-$$.pool
cleanup() {
  dpkg -P "${packages[@]}" >/dev/null 2>&1 || true
  rm -rf "$work" "$region"
}
trap cleanup EXIT
fail() { echo "package test: $*" >&2; exit 1; }
unset LD_LIBRARY_PATH CXXFLAGS CPPFLAGS LDFLAGS CMAKE_PREFIX_PATH PKG_CONFIG_PATH

# 1. The packages and what each holds.
(cd "$work" && cpack -G DEB --config "$build_dir/CPackConfig.cmake" -B "$work/out" >"$work/cpack.log" 2>&1) ||
  { tail -n 30 "$work/cpack.log"; fail "cpack failed"; }
deb() { ls "$work"/out/"$1"_*.deb 2>/dev/null | head -n 1; }
for p in "${packages[@]}"; do [ -n "$(deb "$p")" ] || fail "no $p package (cpack made: $(ls "$work/out"))"; done
# The listing is taken whole before grep reads it: grep -q leaves at its
# first match, and under pipefail the writer's SIGPIPE then failed `has`
# (seen once the -dev package grew the C API's man pages).
files_of() { dpkg-deb -c "$(deb "$1")" | awk '{ print $6 }'; }
has() {  # PACKAGE PATTERN: the package holds a file matching it
  local files
  files=$(files_of "$1") && grep -qE "$2" <<<"$files" || fail "$1 has no file like $2"
}
lacks() {
  local files
  files=$(files_of "$1") && ! grep -qE "$2" <<<"$files" || fail "$1 holds $2, which is not its"
}
has "$runtime" "^\./usr/lib/.*librpmpm\.so\.$major\."
lacks "$runtime" 'include/|/bin/|cmake/|pkgconfig/'
has librpmpm-dev '^\./usr/include/rpm/client\.hpp$'
has librpmpm-dev '^\./usr/lib/.*cmake/rpm/rpmConfig\.cmake$'
has librpmpm-dev '^\./usr/lib/.*pkgconfig/rpmpm\.pc$'
has librpmpm-dev '^\./usr/include/rpm/rpm\.h$'
has librpmpm-dev '^\./usr/include/rpm/c/client\.h$'
has librpmpm-dev '^\./usr/lib/.*pkgconfig/rpmpm-c\.pc$'
has librpmpm-dev '^\./usr/share/man/man3/rpm_conn_new\.3'
has librpmpm-dev '^\./usr/lib/.*librpmpm\.so$'
has librpmpm-dev '^\./usr/share/doc/rpm/(README|architecture)\.md$'
has librpmpm-dev '^\./usr/share/man/man3/rpm\.3'
has librpmpm-dev '^\./usr/share/man/man3/rpm_region_flush\.3'
lacks librpmpm-dev "/bin/|librpmpm\.so\.$major"
for tool in rpm-probe rpm-server rpm-client rpm-bench rpm-nvmf rpm-kvstore; do
  has rpmpm-tools "^\./usr/bin/$tool$"
  has rpmpm-tools "^\./usr/share/man/man1/$tool\.1"
done
lacks rpmpm-tools 'include/|librpmpm|/man3/'
if [ -n "$rocksdb" ]; then
  has "$rocksdb" "^\./usr/lib/.*librpm_rocksdb\.so\.$major\."
  has "$rocksdb" '^\./usr/include/rpm_rocksdb/file_system\.hpp$'
  lacks "$rocksdb" 'librpmpm|/bin/|include/rpm/'
fi
for p in "${packages[@]}"; do
  echo "package test: $(basename "$(deb "$p")"): $(dpkg-deb -f "$(deb "$p")" Depends | cut -c1-160)"
done

# 2. Installed on this machine.
debs=()
for p in "${packages[@]}"; do debs+=("$(deb "$p")"); done
dpkg -i "${debs[@]}" >"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log"; fail "dpkg -i failed"; }
echo "package test: installed $(dpkg-query -W -f '${Package} ${Version}, ' "${packages[@]}")"

# 3. The outside program, with no path given to either tool.
cmake -S "$src_dir/tests/install/consumer" -B "$work/cmake-build" >"$work/cmake.log" 2>&1 ||
  { cat "$work/cmake.log"; fail "find_package(rpm) did not find the installed package"; }
cmake --build "$work/cmake-build" >"$work/build.log" 2>&1 || { cat "$work/build.log"; fail "the consumer did not build"; }
"$work/cmake-build/consumer" "$region" || fail "the consumer built with CMake does not run"
rm -f "$region"
c++ -o "$work/pc-consumer" "$src_dir/tests/install/consumer/main.cpp" $(pkg-config --cflags --libs rpmpm) ||
  fail "pkg-config rpmpm did not build the consumer"
"$work/pc-consumer" "$region" || fail "the consumer built with pkg-config does not run"
# The C API from the packages: examples/c's client, compiled as C with
# rpmpm-c.pc (run by the outside test against a server; here it must build
# and link against /usr), and its man pages found.
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror -o "$work/c-persist" "$src_dir/examples/c/persist.c" $(pkg-config --cflags --libs rpmpm-c) ||
  fail "pkg-config rpmpm-c did not build examples/c/persist.c"
c_status=0; "$work/c-persist" >/dev/null 2>&1 || c_status=$?  # no arguments: its usage, status 2
[ "$c_status" = 2 ] || fail "the C client built against /usr does not run (status $c_status, not its usage's 2)"
man -w 3 rpm_region_persist >/dev/null || fail "man does not find rpm_region_persist(3)"
echo "package test: pkg-config rpmpm --cflags: $(pkg-config --cflags rpmpm)"
/usr/bin/rpm-probe --sysfs-root "$src_dir/tests/fixtures/sysfs/adr_ddio_on" >/dev/null || fail "the installed rpm-probe does not run"
man -w rpm-server >/dev/null || fail "man does not find rpm-server's page"
echo "package test: the consumer builds against /usr with CMake and pkg-config; rpm-probe runs; man rpm-server is found"
# The installed plug-in registers rpm:// with RocksDB: db_bench then names
# the plug-in's refusal of a URI with no port (without it, it would crash).
if [ -n "$rocksdb" ] && command -v db_bench >/dev/null; then
  plugin=$(dpkg -L "$rocksdb" | grep -E "/librpm_rocksdb\.so\.$major$" | head -n 1)
  [ -n "$plugin" ] || fail "$rocksdb installed no librpm_rocksdb.so.$major"
  out=$(LD_PRELOAD=$plugin timeout 60 db_bench --fs_uri=rpm://no-port --db="$work/db" --benchmarks=fillrandom 2>&1) || true
  grep -q 'Failed creating env: .*rpm-rocksdb URI' <<<"$out" ||
    { echo "$out" | tail -n 5; fail "db_bench with the installed $plugin preloaded did not use the plug-in"; }
  echo "package test: db_bench with the installed $plugin preloaded takes rpm:// URIs"
fi
