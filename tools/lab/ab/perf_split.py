#!/usr/bin/env python3
"""Per-operation CPU time from tools/lab/ab/perf.sh's samples, on the host.

  python3 tools/lab/ab/perf_split.py OUT [ROUND]

For rpm (rpm-bench against rpm-server) and for rpm-floor: microseconds per
operation of each thread, user and kernel (softirq work is charged to the
thread it interrupted), of the idle task, and rpm's busiest user-space
symbols. Operations in the 2 s window: 2 s over the run's mean latency
(one operation at a time). Needs the host's perf (linux-perf).
"""
import collections, json, subprocess, sys

HZ = 2000  # perf.sh samples at -F 2000: one sample is 500 µs of a CPU


def samples(out, name):
    cmd = ['perf', 'script', '-i', f'{out}/{name}.data', f'--kallsyms={out}/kallsyms',
           '-F', 'comm,tid,ip,sym,dso', '-G']
    text = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    for line in text.splitlines():
        head, _, rest = line.partition(' (')
        parts = head.split()
        if len(parts) < 3 or not rest:
            continue
        # comm may hold spaces: the tid is the first all-digit field
        i = next((k for k, p in enumerate(parts) if p.isdigit()), None)
        if i is None:
            continue
        comm, tid = ' '.join(parts[:i]), parts[i]
        sym = ' '.join(parts[i + 2:]) or '?'
        dso = rest.rstrip(')').split('/')[-1]
        yield comm, tid, sym, dso


def mean_us(out, name):
    d = json.load(open(f'{out}/{name}.json'))
    for r in d['results']:
        if 'mean_ns' in r:
            return r['mean_ns'] / 1000, r['p50_ns'] / 1000
        if 'mean_us' in r:
            return r['mean_us'], r['p50_us']
    raise SystemExit(f'{name}.json: no mean latency')


def report(out, name):
    mean, p50 = mean_us(out, name)
    ops = 2e6 / mean
    per = 1e6 / HZ / ops
    threads = collections.Counter()
    syms = collections.Counter()
    for comm, tid, sym, dso in samples(out, name):
        kernel = dso.startswith('[')
        who = 'idle' if tid == '0' else f'{comm}/{tid}'
        threads[(who, 'kernel' if kernel else 'user')] += per
        if not kernel and comm.startswith('rpm-bench'):
            syms[f'{dso}: {sym}'] += per
    print(f'== {name}: p50 {p50:.1f} µs, mean {mean:.1f} µs, {ops:.0f} operations in the window')
    for (who, ring), us in sorted(threads.items(), key=lambda x: -x[1]):
        if us >= 0.2:
            print(f'  {us:6.2f} µs/op  {who} {ring}')
    for s, us in syms.most_common(15):
        print(f'  {us:6.2f} µs/op  {s[:100]}')


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    out, rep = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else '1'
    for name in (f'rpm-{rep}', f'floor-{rep}'):
        report(out, name)


if __name__ == '__main__':
    main()
