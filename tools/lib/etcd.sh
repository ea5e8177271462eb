# A 3-member etcd cluster on 127.0.0.1 for a test or a benchmark script
# (source this file). Data lives under the caller's directory; the caller
# stops the members (etcd_stop_all, e.g. from its EXIT trap).
#
#   take_port VAR        a free port on 127.0.0.1 (below the ephemeral range) into VAR
#   etcd_start_all DIR   start 3 members; true once all answer with a leader (20 s)
#   etcd_kill I [SIG]    stop member I (0..2) with SIG (default KILL; STOP pauses it)
#   etcd_resume I        SIGCONT a paused member
#   etcd_start I         start member I again (same data dir)
#   etcd_stop_all
# Environment: ETCD_HEARTBEAT_MS (50), ETCD_ELECTION_MS (500), ETCD_WAIT_S (20:
# how long etcd_healthy waits; an emulated VM needs longer).
# After etcd_start_all: ETCD_URI=etcd://127.0.0.1:P0,127.0.0.1:P1,127.0.0.1:P2,
# ETCD_CLIENT_PORTS=(P0 P1 P2), ETCD_PIDS=(...).

# A port that no socket of this machine uses now (listening or not):
# random, below the kernel's ephemeral range (so no outgoing connection is
# given it later) and checked against /proc/net/tcp*. Another process may
# still take it before it is bound; the member then fails to start and the
# wait says so. Ports handed out by take_port are never returned again.
free_port() {
  local used port low
  read -r low _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || low=32768
  [ "$low" -gt 12000 ] || low=32768
  # Column 2 is LOCAL_ADDRESS:PORT, the port in 4 hex digits.
  used=" $(awk 'NR > 1 { split($2, a, ":"); printf "%s ", a[2] }' /proc/net/tcp /proc/net/tcp6 2>/dev/null)"
  for _ in $(seq 100); do
    port=$((low - 12000 + RANDOM % 12000))
    [[ "$used" == *" $(printf %04X "$port") "* || " ${FREE_PORTS_TAKEN:-} " == *" $port "* ]] ||
      { echo "$port"; return 0; }
  done
  return 1
}
# take_port VAR: a free_port into VAR, remembered so that no later call
# hands it out again (ports picked at random collide otherwise: about 1 in
# 100 for 15 ports).
take_port() {
  local p
  p=$(free_port) || return 1
  FREE_PORTS_TAKEN="${FREE_PORTS_TAKEN:-} $p"
  printf -v "$1" %s "$p"
}

# POST {} to a member's maintenance status; prints the body (empty on failure).
etcd_status() {
  local body
  body=$(timeout 2 bash -c 'exec 5<>/dev/tcp/127.0.0.1/'"$1"' || exit 1
    printf "POST /v3/maintenance/status HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}" >&5
    cat <&5' 2>/dev/null) || true
  printf '%s' "$body"
}

etcd_start() {
  local i=$1 cluster="" j
  for j in 0 1 2; do cluster+="${cluster:+,}m$j=http://127.0.0.1:${ETCD_PEER_PORTS[$j]}"; done
  etcd --name "m$i" --data-dir "$ETCD_DIR/m$i" \
    --listen-client-urls "http://127.0.0.1:${ETCD_CLIENT_PORTS[$i]}" \
    --advertise-client-urls "http://127.0.0.1:${ETCD_CLIENT_PORTS[$i]}" \
    --listen-peer-urls "http://127.0.0.1:${ETCD_PEER_PORTS[$i]}" \
    --initial-advertise-peer-urls "http://127.0.0.1:${ETCD_PEER_PORTS[$i]}" \
    --initial-cluster "$cluster" --initial-cluster-state new --initial-cluster-token "$(basename "$ETCD_DIR")" \
    --heartbeat-interval "${ETCD_HEARTBEAT_MS:-50}" --election-timeout "${ETCD_ELECTION_MS:-500}" \
    >>"$ETCD_DIR/m$i.log" 2>&1 &
  ETCD_PIDS[$i]=$!
}

etcd_kill() {
  local i=$1 sig=${2:-KILL}
  [ -n "${ETCD_PIDS[$i]:-}" ] || return 0
  kill -"$sig" "${ETCD_PIDS[$i]}" 2>/dev/null
  [ "$sig" = STOP ] && return 0
  kill -CONT "${ETCD_PIDS[$i]}" 2>/dev/null
  wait "${ETCD_PIDS[$i]}" 2>/dev/null
  ETCD_PIDS[$i]=""
}

etcd_resume() { [ -n "${ETCD_PIDS[$1]:-}" ] && kill -CONT "${ETCD_PIDS[$1]}" 2>/dev/null; }

etcd_stop_all() {
  local i
  for i in 0 1 2; do etcd_kill "$i"; done
}

# True once every running member answers with a leader (bounded: ETCD_WAIT_S).
etcd_healthy() {
  local end=$((SECONDS + ${ETCD_WAIT_S:-20})) i ok
  while [ $SECONDS -lt $end ]; do
    ok=1
    for i in 0 1 2; do
      [ -n "${ETCD_PIDS[$i]:-}" ] || continue
      etcd_status "${ETCD_CLIENT_PORTS[$i]}" | grep -q '"leader"' || ok=0
    done
    [ $ok = 1 ] && return 0
    sleep 0.1
  done
  return 1
}

etcd_start_all() {
  ETCD_DIR=$1/etcd
  mkdir -p "$ETCD_DIR"
  ETCD_CLIENT_PORTS=() ETCD_PEER_PORTS=() ETCD_PIDS=()
  local i
  for i in 0 1 2; do
    take_port "ETCD_CLIENT_PORTS[$i]" && take_port "ETCD_PEER_PORTS[$i]" || return 1
  done
  ETCD_URI="etcd://127.0.0.1:${ETCD_CLIENT_PORTS[0]},127.0.0.1:${ETCD_CLIENT_PORTS[1]},127.0.0.1:${ETCD_CLIENT_PORTS[2]}"
  for i in 0 1 2; do etcd_start "$i"; done
  etcd_healthy
}
