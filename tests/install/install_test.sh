#!/usr/bin/env bash
# Installs rpm from the build tree into a scratch prefix, then builds a tiny
# outside project against it twice: with find_package(rpm) and with
# pkg-config (rpmpm.pc). Both programs must run.
set -euo pipefail
build_dir=$1
src_dir=$2
work=$(mktemp -d "${build_dir}/install-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

cmake --install "$build_dir" --prefix "$prefix" >/dev/null
libdir=$(ls -d "$prefix"/lib*/ | head -n 1)
export LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

cmake -S "$src_dir/tests/install/consumer" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/cmake-build" >/dev/null
"$work/cmake-build/consumer" /dev/shm/rpm-install-test-$$.pool

export PKG_CONFIG_PATH=$libdir/pkgconfig
c++ -o "$work/pc-consumer" "$src_dir/tests/install/consumer/main.cpp" $(pkg-config --cflags --libs rpmpm)
"$work/pc-consumer" /dev/shm/rpm-install-test-$$.pool
rm -f /dev/shm/rpm-install-test-$$.pool
echo "install test: find_package(rpm) and pkg-config rpmpm both work"
