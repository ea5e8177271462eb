#!/usr/bin/env python3
"""tools/lab/ab/summary.py OUT: the medians of an ops.sh run (on the host).

ops.sh leaves, per round REP, BUILD-API-REP.json (rpm-bench) and
ib_read_lat-REP.txt / ib_write_lat-REP.txt (perftest) in OUT. For every
operation, API and build this prints the median over the rounds of the
p50 in us, of the p50 over the same round's perftest p50 (ib_write_lat for
write and atomic_write, ib_read_lat otherwise), and of the client's CPU per
operation: the table docs/benchmarks-history.md quotes.
"""
import glob
import json
import os
import re
import statistics
import sys


def perftest_p50(path):
    """t_typical (the median) of a perftest latency report, in us."""
    try:
        with open(path) as f:
            for line in f:
                cols = line.split()
                if len(cols) >= 5 and cols[0] == "8" and re.fullmatch(r"[0-9.]+", cols[4]):
                    return float(cols[4])
    except OSError:
        pass
    return None


def main():
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        sys.exit("usage: summary.py OUT (the artifacts folder of an ops.sh run)")
    out = sys.argv[1]
    rows = {}  # (op, api, build) -> lists
    for path in sorted(glob.glob(os.path.join(out, "*-*-*.json"))):
        m = re.fullmatch(r"(before|after)-(sync|callback)-(\d+)\.json", os.path.basename(path))
        if not m:
            continue
        build, api, rep = m.groups()
        base = {t: perftest_p50(os.path.join(out, f"{t}-{rep}.txt")) for t in ("ib_read_lat", "ib_write_lat")}
        with open(path) as f:
            report = json.load(f)
        for r in report.get("results", []):
            if r.get("errors") or "p50_ns" not in r:
                continue
            p50 = r["p50_ns"] / 1000.0
            ref = base["ib_write_lat" if r["op"] in ("write", "atomic_write") else "ib_read_lat"]
            e = rows.setdefault((r["op"], api, build), {"p50": [], "ratio": [], "cpu": []})
            e["p50"].append(p50)
            if ref:
                e["ratio"].append(p50 / ref)
            if "process_cpu_us_per_op" in r:
                e["cpu"].append(r["process_cpu_us_per_op"])
    if not rows:
        sys.exit(f"summary.py: no rpm-bench reports in {out}")
    med = lambda v: statistics.median(v) if v else float("nan")
    print("| op | API | before p50 us, ratio | after p50 us, ratio | CPU us/op before -> after | rounds |")
    print("|---|---|---|---|---|---|")
    for op in ("read", "write", "persist", "atomic_write"):
        for api in ("sync", "callback"):
            b, a = rows.get((op, api, "before")), rows.get((op, api, "after"))
            if not b or not a:
                continue
            print(f"| {op} | {api} | {med(b['p50']):.1f}, {med(b['ratio']):.2f}x | {med(a['p50']):.1f}, "
                  f"{med(a['ratio']):.2f}x | {med(b['cpu']):.1f} -> {med(a['cpu']):.1f} | {len(a['p50'])} |")
    refs = {t: [perftest_p50(p) for p in glob.glob(os.path.join(out, f"{t}-*.txt"))] for t in ("ib_read_lat", "ib_write_lat")}
    for t, v in refs.items():
        v = [x for x in v if x]
        if v:
            print(f"\n{t} p50, median of {len(v)} rounds: {med(v):.2f} us", end="")
    print()


if __name__ == "__main__":
    main()
