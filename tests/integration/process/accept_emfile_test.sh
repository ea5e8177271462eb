#!/bin/bash
# rpm-server out of file descriptors: connections wait in the listen backlog
# and accept() fails with EMFILE, while the listening socket stays readable.
# The listener must pause until its next tick (one log line) instead of
# retrying in a loop: its CPU time stays small while the condition lasts,
# and it accepts again once descriptors are free.
# Usage: accept_emfile_test.sh BIN_DIR
set -euo pipefail
bin=$1
dir=$(mktemp -d)
server=
cleanup() {
    [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null || true
    rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; [ -f "$dir/err" ] && sed 's/^/  server: /' "$dir/err" >&2; exit 1; }

# Few descriptors for the server only; no per-address or total limit, so
# that it keeps every connection it accepts and runs out.
(ulimit -n 40; exec "$bin/rpm-server" --listen tcp://127.0.0.1:0 --region "kv=$dir/kv:65536" --client app:secret \
    --io-threads 1 --max-connections 100000 --max-handshakes-per-address 100000 --port-file "$dir/port") \
    2>"$dir/err" >/dev/null &
server=$!
for _ in $(seq 1 300); do [ -s "$dir/port" ] && break; sleep 0.1; done
[ -s "$dir/port" ] || fail "rpm-server did not start"
port=$(cat "$dir/port")

# More connections than it has descriptors: the rest wait in the backlog.
fds=()
for _ in $(seq 1 60); do
    exec {fd}<>"/dev/tcp/127.0.0.1/$port" || fail "cannot connect"
    fds+=("$fd")
done
sleep 1
grep -q "cannot accept connections" "$dir/err" || fail "no log line about the failing accept"

ticks() { awk '{print $14 + $15}' "/proc/$server/stat"; }
hz=$(getconf CLK_TCK)
before=$(ticks)
sleep 2
used=$(( $(ticks) - before ))
# Spinning costs a whole CPU: 2 s worth of ticks. Paused, next to nothing.
[ "$used" -lt $(( hz / 2 )) ] || fail "the listener spent $used of $((2 * hz)) ticks in 2 s: it spins on EMFILE"

# Descriptors freed: it accepts again and greets a new client.
for fd in "${fds[@]}"; do exec {fd}>&-; done
sleep 1
exec {probe}<>"/dev/tcp/127.0.0.1/$port" || fail "cannot connect after the descriptors were freed"
magic=$(timeout 5 head -c 4 <&"$probe" || true)
[ "$magic" = "RPM1" ] || fail "no hello after the descriptors were freed (got '$magic')"
echo "ok: $used ticks of CPU in 2 s while out of descriptors; accepting again afterwards"
