#!/usr/bin/env bash
# Checks the section-3 man pages of the C API (docs/man/man3) against the
# functions they document:
#   (a) the functions: every prototype `int rpm_...(` or `const char
#       *rpm_...(` at the start of a line of include/rpm/c/*.h, and, given
#       the library, every rpm_ C symbol it defines (nm -D --defined-only),
#       so that a function exported without a declaration needs a page too;
#   (b) each of them, and the overview rpm, has a page docs/man/man3/NAME.3
#       (a page of its own, or a one-line `.so man3/PAGE.3` link to the page
#       of its group), so that `man 3 NAME` finds it;
#   (c) every page that is not a link renders with groff's warnings all on
#       (groff -ww) and with `man --warnings -l`, neither printing anything
#       on stderr, and has the sections NAME, SYNOPSIS, DESCRIPTION, RETURN
#       VALUE, ERRORS and SEE ALSO; every link is that one line and points
#       to a page that exists and is not a link itself;
#   (d) no stale page: every function a page's SYNOPSIS declares is one of
#       the headers', with the headers' prototype (whitespace aside), and a
#       function's page (or the page its link leads to) declares it there;
#   (e) option-like words escape their hyphens (\-), as man_test.sh wants
#       of the section-1 pages, and rpm(3)'s SEE ALSO names every function.
# It names each problem and its page, and exits 1 if there is any.
#
# Usage: man3_test.sh [--man3-dir DIR | --without PAGE] SOURCE_DIR [LIBRARY.so]
#   --man3-dir DIR  check the pages in DIR instead of SOURCE_DIR/docs/man/man3
#   --without PAGE  check a copy of the pages without PAGE (e.g.
#                   rpm_region_flush.3): the control, which must fail naming it
set -euo pipefail

man3_dir="" without=""
while [ $# -gt 0 ]; do
  case $1 in
    --man3-dir) man3_dir=$2; shift 2 ;;
    --without) without=$2; shift 2 ;;
    -*) echo "man3_test: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] && [ $# -le 2 ] ||
  { echo "usage: man3_test.sh [--man3-dir DIR | --without PAGE] SOURCE_DIR [LIBRARY.so]" >&2; exit 2; }
src=$1
lib=${2:-}
man3_dir=${man3_dir:-$src/docs/man/man3}

# The same rendering for everyone: no caller's man or groff settings.
# (MAN_DISABLE_SECCOMP: man-db's sandbox fails in some containers.)
unset MAN_KEEP_FORMATTING MANOPT MANROFFOPT MANPAGER PAGER MANSECT GROFF_SGR GROFF_NO_SGR
export LC_ALL=C.UTF-8 MANWIDTH=80 MAN_DISABLE_SECCOMP=1

for tool in man groff col nm; do
  command -v "$tool" >/dev/null ||
    { echo "man3 test: '$tool' not found (tools/install-deps installs man-db, groff-base and binutils)" >&2; exit 2; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/man3-test.XXXXXX")
trap 'rm -rf "$work"' EXIT

if [ -n "$without" ]; then
  # The control: the same pages but one, which the check must miss.
  cp -r "$man3_dir" "$work/man3"
  rm "$work/man3/$without"
  man3_dir=$work/man3
fi
[ -d "$man3_dir" ] || { echo "man3_test: no folder $man3_dir" >&2; exit 2; }

problems=0
problem() { echo "$*"; problems=$((problems + 1)); }

# (a) The headers' prototypes, one per line, whitespace squeezed:
# "NAME<TAB>PROTOTYPE;" (a prototype may run over several lines).
shopt -s nullglob
headers=("$src"/include/rpm/c/*.h)
[ ${#headers[@]} -gt 0 ] || { echo "man3_test: no headers in $src/include/rpm/c" >&2; exit 2; }
awk '
  /^(int |const char \*)rpm_[a-z0-9_]+\(/ { proto = ""; on = 1 }
  on { proto = proto " " $0 }
  on && /;[[:space:]]*$/ {
    gsub(/[[:space:]]+/, " ", proto); sub(/^ /, "", proto); sub(/ *$/, "", proto)
    name = proto; sub(/\(.*/, "", name); sub(/.*[ *]/, "", name)
    print name "\t" proto
    on = 0
  }' "${headers[@]}" | sort -u >"$work/protos"
cut -f1 "$work/protos" >"$work/declared"
n_declared=$(wc -l <"$work/declared")
[ "$n_declared" -gt 0 ] || { echo "man3_test: no rpm_ prototype found in include/rpm/c/*.h" >&2; exit 2; }

# The library's C symbols (C++ ones are mangled, _Z...), versions cut off.
: >"$work/exported"
if [ -n "$lib" ]; then
  [ -f "$lib" ] || { echo "man3_test: no library at $lib" >&2; exit 2; }
  nm -D --defined-only -P "$lib" | awk '$2 != "A" { print $1 }' | sed 's/@.*//' |
    { grep -E '^rpm_[A-Za-z0-9_]+$' || true; } | sort -u >"$work/exported"
fi
n_exported=$(wc -l <"$work/exported")
sort -u "$work/declared" "$work/exported" >"$work/functions"

# (b) A page for each function, and for the overview.
missing=0
while read -r name; do
  if [ ! -f "$man3_dir/$name.3" ]; then
    if grep -qx "$name" "$work/declared"; then where="declared in include/rpm/c"; else where="exported by the library, declared nowhere"; fi
    problem "NO PAGE: $name (docs/man/man3/$name.3; $where)"
    missing=$((missing + 1))
  fi
done < <(cat "$work/functions" - <<<"rpm")

# The pages: links (.so) and pages of their own.
is_link() { grep -q '^\.so ' "$1"; }
pages=() links=()
for f in "$man3_dir"/*.3; do
  if is_link "$f"; then links+=("$f"); else pages+=("$f"); fi
done

# (c) Each link is one `.so man3/PAGE.3` line to a page of its own.
for f in "${links[@]}"; do
  name=$(basename "$f")
  if [ "$(grep -c . "$f")" -ne 1 ] || ! grep -qE '^\.so man3/[A-Za-z0-9_]+\.3$' "$f"; then
    problem "$name: a link must be the one line '.so man3/PAGE.3'"
    continue
  fi
  target=$(sed 's|^\.so man3/||' "$f")
  if [ ! -f "$man3_dir/$target" ]; then
    problem "$name: links to $target, which does not exist"
  elif is_link "$man3_dir/$target"; then
    problem "$name: links to $target, which is a link itself"
  fi
done

# section FILE NAME: that section of a rendered page (from its heading in
# column 0 to the next).
section() { awk -v want="$2" '/^[A-Z]/ { on = ($0 == want) } on' "$1"; }

# (c) Each page renders without a warning and has the sections.
esc=$'\x01'
for f in "${pages[@]}"; do
  name=$(basename "$f")
  rendered=$work/$name.txt
  if ! groff -man -Tutf8 -ww -z "$f" 2>"$work/groff.err" || [ -s "$work/groff.err" ]; then
    problem "$name: groff -man -ww warns:"
    sed 's/^/  /' "$work/groff.err"
  fi
  if ! man --warnings -l "$f" 2>"$work/man.err" | col -bx >"$rendered" || [ -s "$work/man.err" ]; then
    problem "$name: man --warnings -l warns or fails:"
    sed 's/^/  /' "$work/man.err"
  fi
  for s in NAME SYNOPSIS DESCRIPTION "RETURN VALUE" ERRORS "SEE ALSO"; do
    grep -qx "$s" "$rendered" || problem "$name: no section $s"
  done

  # (d) Every function the SYNOPSIS declares is the headers', as they
  # declare it. One line of text, squeezed, split into declarations.
  section "$rendered" SYNOPSIS | tr '\n' ' ' | tr -s ' ' |
    { grep -oE '(int |const char \*)rpm_[a-z0-9_]+\([^;]*\);' || true; } >"$work/$name.decls"
  while IFS= read -r decl; do
    fn=$(sed -E 's/^(int |const char \*)(rpm_[a-z0-9_]+)\(.*/\2/' <<<"$decl")
    want=$(awk -F'\t' -v n="$fn" '$1 == n { print $2 }' "$work/protos")
    if [ -z "$want" ]; then
      problem "$name: STALE: its SYNOPSIS declares $fn, which include/rpm/c/*.h does not"
    elif [ "$decl" != "$want" ]; then
      problem "$name: its SYNOPSIS declares $fn as"
      echo "  $decl"
      echo "  but include/rpm/c declares"
      echo "  $want"
    fi
  done <"$work/$name.decls"

  # (e) Option-like words escape their hyphens: no "-" that starts a word
  # and is followed by a letter or another "-", and no plain "-" inside a
  # word that starts with "\-\-" (the rule of man_test.sh (d)).
  bad=$(grep -vnE '^\.\\"' "$f" | sed "s/\\\\-/$esc/g" |
          grep -E -e "[^[:alnum:]]-+[[:alpha:]]" \
                  -e "${esc}${esc}[[:alnum:]${esc}]*[[:alnum:]]-[[:alnum:]]" | sed "s/$esc/\\\\-/g" || true)
  if [ -n "$bad" ]; then
    problem "$name: hyphens not escaped as \\- in an option-like word (line: text):"
    sed 's/^/  /' <<<"$bad"
  fi
done

# (d) Each declared function's page, or the page its link leads to,
# declares it in its SYNOPSIS (a link to the wrong group's page fails).
while read -r fn; do
  [ -f "$man3_dir/$fn.3" ] || continue
  page=$fn.3
  is_link "$man3_dir/$page" && page=$(sed -n 's|^\.so man3/||p' "$man3_dir/$page")
  [ -f "$work/$page.decls" ] || continue  # a broken link, named above
  grep -qE "^(int |const char \\*)$fn\\(" "$work/$page.decls" ||
    problem "$fn.3: $page does not declare $fn in its SYNOPSIS"
done <"$work/declared"

# (e) The overview's SEE ALSO names every function.
if [ -f "$work/rpm.3.txt" ]; then
  section "$work/rpm.3.txt" "SEE ALSO" >"$work/seealso"
  while read -r fn; do
    grep -qE "(^|[^a-z0-9_])$fn\\(3\\)" "$work/seealso" || problem "rpm.3: SEE ALSO does not name $fn(3)"
  done <"$work/functions"
fi

echo "man3: $(wc -l <"$work/functions") functions ($n_declared declared, $n_exported exported by the library)," \
     "${#pages[@]} pages and ${#links[@]} links; $missing function(s) without a page, $problems problem(s)"
[ "$problems" -eq 0 ]
