#!/bin/bash
# A build's bin/ and lib/ copied elsewhere run their own librpmpm: the
# "before" half of an A/B benchmark is such a copy, and with an absolute
# build RUNPATH it loaded whatever the original build folder held by then
# (the "after" library). Every program in BUILD/bin must find librpmpm
# through $ORIGIN; a copy's rpm-probe must resolve and run the copy's.
#   build_copy_test.sh BUILD        the check
#   build_copy_test.sh --control    a planted program with an absolute rpath must fail it
set -euo pipefail
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# Prints each program of DIR that links librpmpm without an $ORIGIN RUNPATH.
absolute_runpaths() {
  local f rp bad=0
  for f in "$1"/*; do
    [ -f "$f" ] && [ -x "$f" ] && head -c4 "$f" | grep -q ELF || continue
    readelf -d "$f" | grep -q 'NEEDED.*librpmpm' || continue
    rp=$(readelf -d "$f" | sed -n 's/.*R\(UN\)\{0,1\}PATH.*\[\(.*\)\]/\2/p')
    case $rp in '$ORIGIN'*) ;; *) echo "  $(basename "$f"): RUNPATH '${rp:-<none>}'"; bad=1 ;; esac
  done
  return $bad
}

if [ "${1:-}" = --control ]; then
  # Linked to a librpmpm stand-in through an absolute rpath, as CMake's
  # default build RPATH did.
  mkdir -p "$tmp/lib" "$tmp/bin"
  echo 'int rpm_stand_in(void) { return 0; }' > "$tmp/s.c"
  cc -shared -fPIC -Wl,-soname,librpmpm.so.1 -o "$tmp/lib/librpmpm.so.1" "$tmp/s.c"
  ln -s librpmpm.so.1 "$tmp/lib/librpmpm.so"
  echo 'int rpm_stand_in(void); int main(void) { return rpm_stand_in(); }' > "$tmp/m.c"
  cc -o "$tmp/bin/planted" "$tmp/m.c" -L"$tmp/lib" -lrpmpm -Wl,-rpath,"$tmp/lib" -Wl,--enable-new-dtags
  if absolute_runpaths "$tmp/bin"; then echo "control: the planted absolute RUNPATH was not caught" >&2; exit 1; fi
  echo "control: the planted absolute RUNPATH was caught"
  exit 0
fi

build=${1:?usage: build_copy_test.sh BUILD | --control}
if ! absolute_runpaths "$build/bin"; then
  echo "build copy test: the programs above would load another build's librpmpm once copied" >&2; exit 1
fi
mkdir -p "$tmp/copy/bin" "$tmp/copy/lib"
cp "$build/bin/rpm-probe" "$tmp/copy/bin/"
cp -P "$build"/lib/librpmpm.so* "$tmp/copy/lib/"
resolved=$(ldd "$tmp/copy/bin/rpm-probe" | awk '/librpmpm/ {print $3}')
# ldd prints the path as the RUNPATH made it ($ORIGIN expanded, not tidied).
[ -n "$resolved" ] && [ "$(dirname "$(readlink -f "$resolved")")" = "$(readlink -f "$tmp/copy/lib")" ] || {
  echo "build copy test: the copy's rpm-probe resolves librpmpm to '$resolved', not the copy's" >&2; exit 1; }
"$tmp/copy/bin/rpm-probe" --help > /dev/null || { echo "build copy test: the copy's rpm-probe does not run" >&2; exit 1; }
echo "build copy test: every program finds librpmpm through \$ORIGIN; a copy runs its own ($resolved)"
