#!/bin/bash
# tools/lab/ab/syscalls.sh: runs INSIDE the lab VM. strace -f -c of two
# builds' rpm-bench (persist, write, read; 1000 and 3000 operations each,
# busy mode, 8 B): the difference of the two counts / 2000 is the system
# calls per operation (docs/benchmarks-history.md, "The verbs layer"). A third
# argument picks the completion mode (busy by default), a fourth the tests,
# a fifth the API (callback by default, or sync).
#   RPM_LAB_ARTIFACTS=OUT tools/lab/run --pm eadr --share BEFORE_CHECKOUT -- \
#     tools/lab/ab/syscalls.sh BEFORE_CHECKOUT/build/bin "$PWD/build/bin" [busy|adaptive|event] [persist,write,read] [callback|sync]
before=$1 after=$2 comp=${3:-busy} tests=${4:-persist,write,read} api=${5:-callback}; out=${RPM_LAB_OUT:-/tmp}
. "$(dirname "$0")/../../lib/own_library.sh"
own_library "$before" rpm-bench && own_library "$after" rpm-bench || exit 2
srvcomp=${3:-adaptive}  # the server: as given, else its default
case $comp in busy|adaptive|event) ;; *) echo "syscalls.sh: the mode must be busy, adaptive or event, not '$comp'" >&2; exit 2 ;; esac
case $api in callback|sync) ;; *) echo "syscalls.sh: the API must be callback or sync, not '$api'" >&2; exit 2 ;; esac
addr=$RPM_LAB_RDMA_ADDR; pm=$RPM_LAB_PM
printf 'bench:%s\n' 0123456789abcdef0123456789abcdef > /tmp/s.secrets; echo 0123456789abcdef0123456789abcdef > /tmp/s.secret
for build in before after; do
  b=$before; [ $build = after ] && b=$after
  $b/rpm-server --listen "rdma://$addr:7700" --region "pm=$pm" --secrets-file /tmp/s.secrets --completion $srvcomp > $out/server-$build.log 2>&1 &
  sp=$!
  for i in $(seq 1 100); do grep -q "region pm" $out/server-$build.log && break; sleep 0.2; done
  for t in ${tests//,/ }; do for n in 1000 3000; do
    strace -f -c -o $out/strace-$build-$t-$n.txt $b/rpm-bench --connect "rdma://$addr:7700" --id bench --secret-file /tmp/s.secret --region pm \
      --tests $t --sizes 8 --qd 1 --threads 1 --ops $n --duration 120 --warmup 0 --rounds 1 --api $api --completion $comp --no-forced --json --output $out/sc-$build-$t-$n.json --quiet > /dev/null 2>&1
    echo "$build $t $n rc=$?"
  done; done
  kill $sp; wait $sp
done
