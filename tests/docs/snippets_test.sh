#!/usr/bin/env bash
# The C++ snippets of README.md and docs/*.md compile against the public
# headers (include/ only, nothing of src/) and link against librpmpm, so a
# snippet that calls a renamed member, or a function the library does not
# export, fails here instead of misleading a reader. docs/rocksdb.md's use
# the RocksDB plug-in: CMake adds its headers and libraries (and RocksDB's)
# when the build has it, and skips that file when it does not.
#
# The convention (docs/testing.md, "Documentation snippets"):
#   - Every block fenced ```cpp (or ```c++) is a snippet, and so is every
#     block fenced ```c (the C API's, compiled as C11 by --cc's compiler
#     with -Wall -Wextra -Wpedantic, and its standard C headers free);
#     nothing else is.
#     Shell, output, pseudo-code and diagrams are fenced otherwise.
#   - A block with `int main(` is a whole program: compiled as it is (it
#     takes no `given`).
#   - Any other block is a run of statements: its #include lines go to file
#     scope, the rest becomes the body of `int f(GIVEN) { ... return 0; }`
#     (so `return 1;` on an error reads as it would in main).
#   - `// given: T name; U other;` lines (anywhere in the block, usually
#     first) declare what the block assumes and does not show: each
#     declaration becomes a parameter of f.
#   - Each block is its own translation unit: it must #include the rpm
#     headers it uses. These standard headers come for free: <chrono>
#     <cstddef> <cstdint> <cstring> <functional> <iostream> <memory> <span>
#     <string> <string_view> <system_error> <utility> <vector>.
#   - The project's warnings apply (and -Werror when the build has it),
#     except unused variables and parameters: a snippet names a result to
#     show what a call returns, and a callback's status it leaves unread.
# Errors name the markdown file and line (#line directives).
#
# Usage: snippets_test.sh [--skip FILE.md]... [--cc CC] SOURCE_DIR LIBRARY.so[:LIBRARY.so...] [FILE.md...] -- CXX [FLAGS...]
#   FILE.md relative to SOURCE_DIR; none = README.md and docs/*.md, less
#   each --skip (named in the summary): a file whose snippets need what this
#   build lacks (docs/rocksdb.md without the RocksDB plug-in).
#   LIBRARY.so: what the snippets link, librpmpm; more after ':' (the
#   plug-in and librocksdb, for docs/rocksdb.md).
#   CXX FLAGS: the compiler and the project's warning flags (CMake passes
#   them, and -I for the plug-in's headers when it is built).
{
set -uo pipefail

usage() { echo "usage: snippets_test.sh [--skip FILE.md]... [--cc CC] SOURCE_DIR LIBRARY.so[:LIBRARY.so...] [FILE.md...] -- CXX [FLAGS...]" >&2; exit 2; }

# The blocks, as translation units (extract_snippets.awk).
extract() {  # WORK FILE.md...
  awk -v work="$1" -f "$here/extract_snippets.awk" "${@:2}"
}

# Compiles the snippets in one compiler run per CPU (at most 4), each given
# every Nth file: a run goes on past a failing file, so a snippet without
# its object failed, and the compiler said why. The runs' words are shown
# one run after the other, not interleaved.
compile_all() {  # WORK
  local work=$1 runs i
  local -a cpps
  mapfile -t cpps < <(ls "$work"/*.cpp "$work"/*.c 2>/dev/null)
  runs=$(nproc 2>/dev/null || echo 1)
  [ "$runs" -le 4 ] || runs=4
  [ "$runs" -le ${#cpps[@]} ] || runs=${#cpps[@]}
  for ((i = 0; i < runs; i++)); do
    compile_run "$work" "$i" "$runs" "${cpps[@]}" >"$work/run$i.log" 2>&1 &
  done
  wait
  cat "$work"/run*.log
}

compile_run() {  # WORK I RUNS FILE... : compiles files I, I+RUNS, I+2*RUNS...
  local work=$1 i=$2 runs=$3 k mine=()
  shift 3
  local -a all=("$@")
  for ((k = i; k < ${#all[@]}; k += runs)); do mine+=("${all[$k]}"); done
  local -a c=() cpp=() quiet=(-Wno-unused-variable -Wno-unused-parameter -Wno-unused-but-set-variable)
  for k in "${mine[@]}"; do if [[ "$k" == *.c ]]; then c+=("$k"); else cpp+=("$k"); fi; done
  cd "$work" || return 1
  [ ${#cpp[@]} -eq 0 ] || "${cxx[@]}" -std=c++20 -O0 -g1 -I"$src/include" "${quiet[@]}" -c "${cpp[@]}"
  [ ${#c[@]} -eq 0 ] && return 0
  [ -n "$cc" ] || { echo "snippets_test: C snippets (${c[*]##*/}) need --cc"; return 1; }
  "$cc" -std=c11 -O0 -g1 -Wall -Wextra -Wpedantic -Werror -I"$src/include" "${quiet[@]}" -c "${c[@]}"
}

# Links the fragments that compiled into one program (a main of its own
# calls none of them: linking is the check), and each whole program alone.
# On a failed link of the fragments each is linked alone, to name it.
link_all() {  # WORK
  local work=$1 id file line kind objs=()
  printf 'int main() { return 0; }\n' >"$work/main.c++"
  "${cxx[@]}" -c -o "$work/main.o" -x c++ "$work/main.c++" || return 2
  while IFS=$'\t' read -r id file line kind; do
    [ -f "$work/$id.o" ] || continue
    if [ "$kind" = program ]; then
      link_one "$work/$id" "$file:$line" "$work/$id.o"
    else
      objs+=("$work/$id.o")
    fi
  done <"$work/list"
  [ ${#objs[@]} -gt 0 ] || return 0
  "${cxx[@]}" -o "$work/fragments" "$work/main.o" "${objs[@]}" "${libs[@]}" >/dev/null 2>&1 && return 0
  while IFS=$'\t' read -r id file line kind; do
    [ -f "$work/$id.o" ] && [ "$kind" = fragment ] && link_one "$work/$id" "$file:$line" "$work/main.o" "$work/$id.o"
  done <"$work/list"
  return 0  # each failure is counted below, by its missing object
}

# The linker names the generated file (NNN.cpp, NNN.o) where the compiler
# follows #line: its words are put back on the markdown file.
link_one() {  # OUT FILE:LINE OBJECT...
  local out=$1 where=$2 id=${1##*/}
  shift 2
  "${cxx[@]}" -o "$out" "$@" "${libs[@]}" 2>&1 | sed -e "s#[^ ]*/$id\.c\(pp\)\{0,1\}:#${where%:*}:#g" -e "s#[^ ]*/$id\.o#${where%:*}#g"
  [ "${PIPESTATUS[0]}" -eq 0 ] && return 0
  echo "SNIPPET DOES NOT LINK: $where (above: what it calls that librpmpm does not export)"
  rm -f "${out}.o"  # counted as failed below
}

skip=()
cc=
while [ "${1:-}" = --skip ] || [ "${1:-}" = --cc ]; do
  [ $# -ge 2 ] || usage
  if [ "$1" = --cc ]; then cc=$2; else skip+=("$2"); fi
  shift 2
done
[ $# -ge 2 ] || usage
here=$(cd "$(dirname "$0")" && pwd) || exit 2
src=$(cd "$1" && pwd) || exit 2
libs=()
IFS=: read -ra given_libs <<<"$2"
for l in "${given_libs[@]}"; do
  [ -f "$l" ] || { echo "snippets_test: no library at $l"; exit 2; }
  libs+=("$(realpath "$l")")
done
[ ${#libs[@]} -gt 0 ] || usage
shift 2
files=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do files+=("$1"); shift; done
[ "${1:-}" = -- ] || usage
shift
cxx=("$@")
[ ${#cxx[@]} -gt 0 ] || usage
cd "$src" || exit 2
if [ ${#files[@]} -eq 0 ]; then
  for f in README.md docs/*.md; do
    [[ " ${skip[*]} " == *" $f "* ]] || files+=("$f")
  done
fi

work=$(mktemp -d) || exit 2
trap 'rm -rf "$work"' EXIT
: >"$work/list"
extract "$work" "${files[@]}" || exit 1
total=$(wc -l <"$work/list")
[ "$total" -gt 0 ] || { echo "snippets_test: no \`\`\`cpp block in ${files[*]}"; exit 1; }

compile_all "$work"
link_all "$work" || exit 2

failed=0
while IFS=$'\t' read -r id file line kind; do
  if [ ! -f "$work/$id.o" ]; then
    failed=$((failed + 1))
    echo "SNIPPET FAILS: $file:$line ($kind; the compiler or linker said why above)"
  fi
done <"$work/list"
[ ${#skip[@]} -eq 0 ] || echo "snippets: not compiled in this build (--skip): ${skip[*]}"
echo "snippets: $total from $(cut -f2 "$work/list" | sort -u | wc -l) files, $failed fail"
[ "$failed" -eq 0 ]
exit
}
