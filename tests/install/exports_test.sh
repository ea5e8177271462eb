#!/usr/bin/env bash
# librpmpm.so exports the public API and nothing else (include/rpm/export.hpp).
# Every dynamic symbol the library defines must name only things the public
# headers declare: in each rpm::A::B::f name in it, A and B are namespaces or
# classes that include/rpm/*.hpp define (outside comments; a class they only
# forward-declare, a pimpl's Impl, is internal), f is a word there, and none
# is a detail:: namespace. A symbol without rpm:: in it (a leaked
# Boost, Asio or OpenSSL helper) fails too. So does a library that exports
# too little to be the API: a few names every user needs are looked for.
# A C name (the C API, include/rpm/rpm.h) must be a function that
# include/rpm/c/*.h declares.
# And every name is bound to a version node (RPM_1: cmake/librpmpm.map).
#
# Usage: exports_test.sh SOURCE_DIR LIBRARY.so
#        exports_test.sh SOURCE_DIR --symbols FILE   (mangled names, one per
#        line: the planted control, tests/fixtures/exports/)
{
set -uo pipefail
src=$1
if [ "${2:-}" = --symbols ]; then
  mangled=$(cat "$3") || exit 2
else
  lib=$2
  [ -f "$lib" ] || { echo "exports_test: no library at $lib"; exit 2; }
  # Defined (not U) dynamic symbols; the POSIX format's first column is the
  # name, with its version (name@@RPM_1): every name must be bound to one of
  # rpm's version nodes (cmake/librpmpm.map), whose own symbol (RPM_1, type A)
  # is not a name of the API.
  versioned=$(nm -D --defined-only -P "$lib" | awk '$2 != "A" { print $1 }') || exit 2
  unversioned=$(grep -vE '@@?RPM_[0-9]+$' <<<"$versioned")
  if [ -n "$unversioned" ]; then
    sed 's/^/UNVERSIONED: /; s/$/: not in an RPM_ version node (cmake\/librpmpm.map)/' <<<"$unversioned" | head -40
    echo "exports: $(wc -l <<<"$unversioned") symbols without rpm's version node"
    exit 1
  fi
  mangled=$(sed 's/@.*//' <<<"$versioned")
fi

# The public headers, comments and string literals left out: their words,
# and the scopes they define (namespaces, and classes with a body: a class
# only declared there, such as a pimpl's Impl, is the library's own).
text=$(cat "$src"/include/rpm/*.hpp | sed -e 's://.*$::' -e 's/"[^"]*"//g' | tr '\n' ' ')
declare -A word scope
for w in $(grep -oE '[A-Za-z_~][A-Za-z0-9_]*' <<<"$text" | sort -u); do word[$w]=1; done
for w in $(grep -oE '\bnamespace +[A-Za-z_][A-Za-z0-9_:]*' <<<"$text" | sed 's/namespace *//; s/::/ /g'); do scope[$w]=1; done
for w in $(grep -oE '\b(class|struct|union) +[A-Za-z_][A-Za-z0-9_]*( +final)? *[:{]' <<<"$text" |
           awk '{ print $2 }' | tr -d ':{'); do scope[$w]=1; done
demangled=$(c++filt <<<"$mangled")
# The C API's functions: "int rpm_x(" or "const char *rpm_x(" at a line's start.
declare -A c_function
for f in $(cat "$src"/include/rpm/c/*.h | grep -oE '^(int|const char \*) *rpm_[a-z0-9_]+\(' |
           grep -oE 'rpm_[a-z0-9_]+'); do c_function[$f]=1; done

total=0 bad=0
while IFS= read -r name; do
  [ -n "$name" ] || continue
  total=$((total + 1))
  why=""
  if [[ "$name" =~ ^rpm_[a-z0-9_]+$ ]]; then
    [ -n "${c_function[$name]:-}" ] || why="a C name that include/rpm/c/*.h does not declare"
  elif [[ "$name" != *rpm::* ]]; then
    why="names nothing of rpm's"
  else
    # Each rpm:: path in the name: rpm::flush::Decision, rpm::Client::connect...
    for path in $(grep -oE 'rpm(::[A-Za-z_~][A-Za-z0-9_]*)+' <<<"$name" | sort -u); do
      IFS=: read -r -a parts <<<"${path//::/:}"
      local_n=$(( ${#parts[@]} - 1 ))
      for i in $(seq 1 "$local_n"); do
        p=${parts[$i]}
        [ "$p" = operator ] && continue
        if [ "$p" = detail ]; then why="a detail:: name ($path)"; break 2; fi
        if [ "$i" -lt "$local_n" ]; then  # a scope: a namespace or a class defined in the headers
          [ -n "${scope[$p]:-}" ] || { why="$p is not a namespace or class the public headers define ($path)"; break 2; }
        else
          [ -n "${word[$p]:-}" ] || { why="$p is not in the public headers ($path)"; break 2; }
        fi
      done
    done
  fi
  if [ -n "$why" ]; then
    bad=$((bad + 1))
    [ $bad -le 40 ] && echo "NOT PUBLIC: $name: $why"
  fi
done <<<"$demangled"

# What every user calls must be there (a library exporting nothing would
# pass the loop above).
missing=0
for want in 'rpm::Client::' 'rpm::Server::' 'rpm::Replicator::' 'rpm::RemoteRegion::' 'rpm::rpm_category()' \
            'rpm::pmem::Region::' 'rpm::nvmf::Target::' 'rpm::version()' rpm_conn_new rpm_errormsg \
            rpm_replicator_commit; do
  grep -qF -- "$want" <<<"$demangled" || { echo "MISSING: nothing exported for $want"; missing=$((missing + 1)); }
done

echo "exports: $total symbols, $bad not public, $missing expected names missing"
[ $bad -eq 0 ] && [ $missing -eq 0 ]
exit
}
