#!/usr/bin/env python3
"""Summarise tools/lab/ab/calls.sh's output: per --calls N, the medians over
the rounds of rpm-floor's read p50, its ratio to the round's ib_read_lat,
the added latency against N = 0 in the same round, and the calls' own time.

  python3 tools/lab/ab/calls_summary.py OUT
"""
import glob, json, os, re, statistics, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from summary import perftest_p50  # noqa: E402  (ops.sh's summary reads perftest's reports)


def ib_read_lat(out, rep):
    return perftest_p50(f'{out}/ib_read_lat-{rep}.txt')


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    out = sys.argv[1]
    runs = {}
    for path in glob.glob(f'{out}/calls-*-*.json'):
        n, rep = map(int, re.search(r'calls-(\d+)-(\d+)\.json$', path).groups())
        r = json.load(open(path))['results'][0]
        runs[(n, rep)] = (r['p50_us'], r.get('calls_alone_us', 0.0))
    print('| calls per read | p50 µs | / ib_read_lat | added, µs | the calls alone, µs |')
    print('|---|---|---|---|---|')
    for n in sorted({n for n, _ in runs}):
        reps = sorted(rep for m, rep in runs if m == n)
        p50 = [runs[(n, r)][0] for r in reps]
        ratio = [runs[(n, r)][0] / ib_read_lat(out, r) for r in reps]
        added = [runs[(n, r)][0] - runs[(0, r)][0] for r in reps if (0, r) in runs]
        alone = [runs[(n, r)][1] for r in reps]
        med = statistics.median
        print(f'| {n} | {med(p50):.1f} | {med(ratio):.2f}x | {med(added) if added else 0:+.1f} | {med(alone):.2f} |')


if __name__ == '__main__':
    main()
