#!/usr/bin/env bash
# Every program exits 2 on a command-line error, 0 on --help, as their man
# pages say (tools/lib/parse_args.hpp), for the top level and a subcommand.
# Usage: usage_test.sh BUILD_DIR
set -uo pipefail
bin=$1/bin
failed=0
check() {  # WANT PROGRAM ARGS...
  local want=$1 got; shift
  "$bin/$1" "${@:2}" >/dev/null 2>&1; got=$?
  if [ "$got" != "$want" ]; then echo "$* exited $got, not $want"; failed=1; fi
}
for t in rpm-probe rpm-server rpm-client rpm-bench rpm-nvmf rpm-kvstore rpm-floor rpm-kvbench; do
  [ -x "$bin/$t" ] || { echo "$bin/$t was not built"; failed=1; continue; }
  check 0 "$t" --help
  check 2 "$t" --no-such-option
done
check 2 rpm-server --listen tcp://127.0.0.1:0              # --region missing
check 2 rpm-client --connect tcp://127.0.0.1:1 --id a --secret b put --no-such-option
check 2 rpm-nvmf identify --port not-a-number
check 2 rpm-kvstore primary --local /nonexistent/x --replica tcp://127.0.0.1:1 get
for n in 0 1025 x; do
  check 2 rpm-kvstore client --node 127.0.0.1:1 load --count 1 --acked /dev/null --pipeline $n
done
[ $failed = 0 ] && echo "usage test: every program exits 2 on a command-line error and 0 on --help"
exit $failed
