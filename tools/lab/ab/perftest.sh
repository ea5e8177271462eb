# tools/lab/ab/perftest.sh: sourced by the A/B scripts here (inside the lab
# VM). perftest TOOL REP PORT: one perftest latency run of 8 bytes on rxe0,
# its server and client on $addr, the client's output in $out/TOOL-REP.txt.
# Both sides are bounded: a server whose client never came is killed.
perftest() {
  local tool=$1 rep=$2 port=$3 srv
  timeout 60 "$tool" -d rxe0 -i 1 -x 1 -s 8 -n 1000 -p "$port" > "$out/ibsrv-$tool-$rep.txt" 2>&1 &
  srv=$!
  sleep 3; timeout 60 "$tool" -d rxe0 -i 1 -x 1 -s 8 -n 1000 -p "$port" "$addr" > "$out/$tool-$rep.txt" 2>&1
  echo "$tool $rep rc=$?"; kill "$srv" 2>/dev/null; wait "$srv" 2>/dev/null
}
