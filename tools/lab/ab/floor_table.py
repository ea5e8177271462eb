#!/usr/bin/env python3
"""The goal table from tools/lab/ab/floor.sh's output, on the host.

  python3 tools/lab/ab/floor_table.py OUT [OUT...]

For each of rpm-floor's patterns and rpm-bench's runs (busy and adaptive,
sync and callback): the median over the rounds of the p50, and of each
round's ratio to that round's perftest (ib_read_lat, or ib_write_lat for a
write). A round's baseline is the mean of the perftest p50s at its start
and at its end (floor.sh's ROUND-end files), or the start's alone where
there is no end run (output of floor.sh before it had one).

Given several OUT folders (one VM run each), the rounds of all of them are
pooled: the median is over every round, and each run's own median follows
in brackets, so the spread from one VM run to the next shows beside it.
"""
import glob
import json
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from summary import perftest_p50  # noqa: E402  (ops.sh's summary reads perftest the same way)

REF = {'read': 'ib_read_lat', 'write': 'ib_write_lat', 'persist': 'ib_read_lat',
       'read_after_write': 'ib_read_lat', 'send_flush': 'ib_read_lat'}


def baseline(out, tool, rep):
    both = [x for x in (perftest_p50(f'{out}/{tool}-{rep}.txt'), perftest_p50(f'{out}/{tool}-{rep}-end.txt'))
            if x]
    return sum(both) / len(both) if both else None


def rounds(out):
    found = set()
    for p in glob.glob(f'{out}/ib_read_lat-*.txt'):
        m = re.search(r'ib_read_lat-(\d+)\.txt$', p)
        if m:
            found.add(int(m.group(1)))
    return sorted(found)


def collect(out):
    rows = {}
    for rep in rounds(out):
        base = {t: baseline(out, t, rep) for t in ('ib_read_lat', 'ib_write_lat')}
        for t, b in base.items():
            if b:
                rows.setdefault(('perftest', t), []).append((b, 1.0))
        try:
            with open(f'{out}/floor-{rep}.json') as f:
                for r in json.load(f)['results']:
                    b = base[REF[r['pattern']]]
                    if b:
                        rows.setdefault(('floor', r['pattern']), []).append((r['p50_us'], r['p50_us'] / b))
        except (OSError, ValueError, KeyError):
            pass
        for comp in ('busy', 'adaptive'):
            for api in ('sync', 'callback'):
                try:
                    with open(f'{out}/{comp}-{api}-{rep}.json') as f:
                        results = json.load(f).get('results', [])
                except (OSError, ValueError):
                    continue
                for r in results:
                    b = base[REF[r['op']]]
                    if r.get('errors') or 'p50_ns' not in r or not b:
                        continue
                    us = r['p50_ns'] / 1000
                    # A persist is named by its method, as rpm-floor's
                    # patterns are: runs of both PM modes pool apart.
                    op = f"persist {r['method']}" if r['op'] == 'persist' and r.get('method') else r['op']
                    rows.setdefault((f'{comp} {api}', op), []).append((us, us / b))
    return rows


def main():
    outs = sys.argv[1:]
    if not outs:
        raise SystemExit(__doc__)
    runs = []
    for out in outs:
        rows = collect(out)
        if not rows:
            raise SystemExit(f'floor_table.py: no floor.sh output in {out}')
        runs.append(rows)
    keys = list(dict.fromkeys(k for rows in runs for k in rows))
    for key in keys:
        v = [r for rows in runs for r in rows.get(key, [])]
        who, op = key
        line = (f'{who:18s} {op:24s} p50 {statistics.median(x for x, _ in v):7.1f} us  '
                f'ratio median {statistics.median(y for _, y in v):5.2f}')
        if len(runs) == 1:
            line += '  rounds: ' + ' '.join(f'{y:.2f}' for _, y in v)
        else:
            per_run = [statistics.median(y for _, y in rows[key]) if rows.get(key) else None for rows in runs]
            line += f'  over {len(v)} rounds; by run: ' + ' '.join('-' if m is None else f'{m:.2f}' for m in per_run)
        print(line)


if __name__ == '__main__':
    main()
