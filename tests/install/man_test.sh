#!/usr/bin/env bash
# Checks the man pages in docs/man against the programs they describe:
#   (a) each page renders with `man -l` and with groff's warnings all on
#       (groff -ww, man --warnings), and neither prints anything on stderr;
#   (b) every long option (--name) and short option (-x) that the built
#       program's --help prints, and the --help of each of its subcommands
#       (recursively), appears as a whole word in the OPTIONS section of
#       the rendered page;
#   (c) every subcommand name appears in its COMMANDS section;
#   (d) option names in the page source escape their hyphens (\-), so that
#       they render as ASCII hyphen-minus wherever groff is set up to make
#       "-" a typographic hyphen, and copy-paste works.
# It names each missing option and its page, prints one summary line per
# page, and exits 1 if anything is missing.
# Usage: man_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build_dir=$1
src_dir=$2
bin=$build_dir/bin
man_dir=$src_dir/docs/man
programs=(rpm-probe rpm-bench rpm-server rpm-client rpm-nvmf rpm-kvstore)

# The same rendering for everyone: no caller's man or groff settings.
# (MAN_DISABLE_SECCOMP: man-db's sandbox fails in some containers.)
unset MAN_KEEP_FORMATTING MANOPT MANROFFOPT MANPAGER PAGER MANSECT GROFF_SGR GROFF_NO_SGR
export LC_ALL=C.UTF-8 MANWIDTH=80 MAN_DISABLE_SECCOMP=1

for tool in man groff col; do
  command -v "$tool" >/dev/null ||
    { echo "man test: '$tool' not found (tools/install-deps installs man-db and groff-base)" >&2; exit 1; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/man-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
failed=0

# contains FILE WORD: WORD occurs in FILE as a whole word (not as part of a
# longer option: --secret must not be satisfied by --secret-file).
contains() { grep -qE -e "(^|[^A-Za-z0-9_-])$2([^A-Za-z0-9_-]|\$)" "$1"; }

# collect PROGRAM [SUBCOMMAND...]: append "OPTION<TAB>WHERE" lines to
# $work/options and "NAME<TAB>WHERE" to $work/commands for this (sub)command
# and, recursively, its subcommands.
collect() {
  local where="$*" help
  # tr: no NUL byte of a help text may reach a shell variable.
  if ! help=$("$bin/$1" "${@:2}" --help 2>&1 | tr -d '\000'); then
    echo "man test: '$where --help' failed:" >&2
    echo "$help" >&2
    return 1
  fi
  {
    grep -oE -e '--[A-Za-z0-9][A-Za-z0-9-]*' <<<"$help" || true
    grep -oE -e '(^|[[:space:],])-[A-Za-z]([^A-Za-z0-9-]|$)' <<<"$help" | grep -oE -e '-[A-Za-z]' || true
  } | sed "s|\$|	$where --help|" >>"$work/options"
  local sub
  for sub in $(awk '/^Subcommands:/ { on = 1; next } on && /^$/ { on = 0 } on && /^  [^ ]/ { print $1 }' <<<"$help"); do
    printf '%s\t%s --help\n' "$sub" "$where" >>"$work/commands"
    collect "$@" "$sub" || return 1
  done
}

# section NAME: that section of the rendered page (from its heading in
# column 0 to the next).
section() { awk -v want="$1" '/^[A-Z]/ { on = ($0 == want) } on' "$work/rendered"; }

for prog in "${programs[@]}"; do
  page=$man_dir/$prog.1
  name=$(basename "$page")
  problems=0
  if [ ! -f "$page" ]; then
    echo "$name: missing (expected at $page)"
    failed=1
    continue
  fi
  if [ ! -x "$bin/$prog" ]; then
    echo "$name: $bin/$prog was not built"
    failed=1
    continue
  fi

  # (a) Renders, without a warning from groff or man.
  if ! groff -man -Tutf8 -ww -z "$page" 2>"$work/groff.err" || [ -s "$work/groff.err" ]; then
    echo "$name: groff -man -ww warns:"
    sed 's/^/  /' "$work/groff.err"
    problems=$((problems + 1))
  fi
  if ! man --warnings -l "$page" 2>"$work/man.err" | col -bx >"$work/rendered" || [ -s "$work/man.err" ]; then
    echo "$name: man --warnings -l warns or fails:"
    sed 's/^/  /' "$work/man.err"
    problems=$((problems + 1))
  fi
  if [ ! -s "$work/rendered" ]; then
    echo "$name: man -l rendered nothing"
    failed=1
    continue
  fi

  # (b), (c) Every option and subcommand of --help is in the rendered page,
  # in its section.
  section OPTIONS >"$work/options.txt"
  section COMMANDS >"$work/commands.txt"
  : >"$work/options"
  : >"$work/commands"
  if ! collect "$prog"; then
    failed=1
    continue
  fi
  sort -u -t'	' -k1,1 "$work/options" >"$work/options.u"
  sort -u -t'	' -k1,1 "$work/commands" >"$work/commands.u"
  n_options=$(wc -l <"$work/options.u")
  n_commands=$(wc -l <"$work/commands.u")
  while IFS='	' read -r opt where; do
    if ! contains "$work/options.txt" "$opt"; then
      echo "$name: option $opt (printed by '$where') is not in OPTIONS"
      problems=$((problems + 1))
    fi
  done <"$work/options.u"
  while IFS='	' read -r cmd where; do
    if ! contains "$work/commands.txt" "$cmd"; then
      echo "$name: command $cmd (listed by '$where') is not in COMMANDS"
      problems=$((problems + 1))
    fi
  done <"$work/commands.u"

  # (d) In the source (comments aside), an option name's hyphens are all
  # escaped: no "-" that starts a word and is followed by a letter or
  # another "-", and no plain "-" inside a word that starts with "\-\-".
  esc=$'\x01'
  bad=$(grep -vnE '^\.\\"' "$page" | sed "s/\\\\-/$esc/g" |
          grep -E -e "[^[:alnum:]]-+[[:alpha:]]" \
                  -e "${esc}${esc}[[:alnum:]${esc}]*[[:alnum:]]-[[:alnum:]]" | sed "s/$esc/\\\\-/g" || true)
  if [ -n "$bad" ]; then
    echo "$name: hyphens not escaped as \\- in an option name (line: text):"
    sed 's/^/  /' <<<"$bad"
    problems=$((problems + 1))
  fi

  what="$n_options options"
  [ "$n_commands" -gt 0 ] && what="$what and $n_commands commands"
  if [ "$problems" -eq 0 ]; then
    echo "$name: $what, all documented"
  else
    echo "$name: $what, $problems problem(s)"
    failed=1
  fi
done

exit "$failed"
