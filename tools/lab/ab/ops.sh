#!/bin/bash
# tools/lab/ab/ops.sh: runs INSIDE the lab VM. Two builds' rpm-bench, before
# and after a change, alternating round by round in one VM run (write, read,
# persist, atomic_write, 8 B, qd 1, sync and callback APIs), each client
# against its own build's rpm-server, with ib_read_lat and ib_write_lat in
# every round; JSON and perftest output to $RPM_LAB_OUT. docs/benchmarks-history.md,
# "The verbs layer", has the figures and summarises them by the medians.
#   RPM_LAB_ARTIFACTS=OUT tools/lab/run [--pm eadr] --share BEFORE_CHECKOUT -- \
#     tools/lab/ab/ops.sh BEFORE_CHECKOUT/build/bin "$PWD/build/bin" [busy|adaptive|event] [ROUNDS] [TESTS]
# TESTS: rpm-bench's --tests (write,read,persist,atomic_write by default).
# A VM run's rounds move by 10% to 30% (docs/benchmarks-history.md): five or more
# rounds make the medians worth comparing.
before=$1 after=$2 comp=${3:-adaptive} rounds=${4:-3} tests=${5:-write,read,persist,atomic_write}; out=${RPM_LAB_OUT:-/tmp}
addr=$RPM_LAB_RDMA_ADDR; pm=$RPM_LAB_PM
. "$(dirname "$0")/../../lib/own_library.sh"
own_library "$before" rpm-bench && own_library "$after" rpm-bench || exit 2
. "$(dirname "$0")/perftest.sh"
printf 'bench:%s\n' 0123456789abcdef0123456789abcdef > /tmp/s.secrets; echo 0123456789abcdef0123456789abcdef > /tmp/s.secret
# Only the measured build's server runs: an idle server is not free in a
# 2-vCPU VM (its pools' threads woke 100 times a second each, 6% to 13% of a vCPU:
# docs/benchmarks-history.md, "Quiet pools sleep"), and the other build's would
# weigh on this one's figures.
start_server() {  # BUILD_BIN PORT LOG: starts it (pid in $srv), waits for its region
  "$1/rpm-server" --listen "rdma://$addr:$2" --region "pm=$pm" --secrets-file /tmp/s.secrets --completion $comp > "$3" 2>&1 &
  srv=$!
  for i in $(seq 1 100); do grep -q "region pm" "$3" && break; sleep 0.2; done
}
port=18600
for rep in $(seq 1 "$rounds"); do
  for tool in ib_read_lat ib_write_lat; do
    port=$((port+1)); perftest $tool $rep $port
  done
  for build in before after; do
    b=$before; [ $build = after ] && b=$after
    port=$((port+1)); start_server "$b" $port "$out/server-$build-$rep.log"
    for api in sync callback; do
      timeout 120 $b/rpm-bench --connect "rdma://$addr:$port" --id bench --secret-file /tmp/s.secret --region pm \
        --tests "$tests" --sizes 8 --qd 1 --threads 1 --duration 1 --warmup 0.2 --rounds 1 --api $api \
        --completion $comp --no-forced --json --output $out/$build-$api-$rep.json --quiet > /dev/null 2> $out/$build-$api-$rep.err
      echo "$build $api $rep rc=$?"
    done
    kill "$srv"; wait "$srv"
  done
done
