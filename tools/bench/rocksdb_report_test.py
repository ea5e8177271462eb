#!/usr/bin/env python3
"""bench.rocksdb.report (CMakeLists.txt): rocksdb_report.py on captured output.

  rocksdb_report_test.py FIXTURES SCRATCH_DIR

FIXTURES is tests/fixtures/rocksdb-bench/: db_bench 7.8.3 outputs captured
from tools/bench/rocksdb runs, rpm-bench's floor reports and a manifest
naming them (README there). Checked:
  - each file's report lines and percentiles, parsed to the digit;
  - the medians over rounds, rpm-tcp's ratios to disk and tmpfs, the floor
    rows and the table's lines, from the manifest;
  - refusals: output without a histogram or without overwrite exits 2,
    and `check` names a missing row and exits 1;
  - rdma/, a lab run of tmpfs, rpm-tcp and rpm-rdma: rpm-rdma's medians,
    its ratios to tmpfs and to rpm-tcp, a floor per transport, the table
    with a column per config that ran, and `check` wanting ratio_to_rpm_tcp.
It asserts no performance figure: the expected numbers are the fixtures'.
Only python3's standard library is used.
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import rocksdb_report as rr  # noqa: E402

REPORT = os.path.join(HERE, "rocksdb_report.py")
failures = []


def expect(what, got, want):
    if isinstance(want, float):  # a missing figure (None) fails rather than raising
        ok = isinstance(got, (int, float)) and abs(got - want) <= 1e-9 * max(1.0, abs(want))
    else:
        ok = got == want
    if not ok:
        failures.append(f"{what}: got {got!r}, want {want!r}")


def run(*args):
    return subprocess.run([sys.executable, REPORT, *args], capture_output=True, text=True, check=False)


def parsed(fixtures, name):
    with open(os.path.join(fixtures, name), encoding="utf-8") as f:
        return rr.parse_db_bench(f.read(), name)


def test_parse(fixtures):
    """Every figure of two files, as db_bench printed it."""
    p = parsed(fixtures, "disk.t1.v100.r1.out")
    expect("disk r1 fillrandom", p["fillrandom"], {
        "micros_per_op": 284.106, "ops_per_s": 3483.0, "seconds": 1.148, "operations": 3999, "count": 3999,
        "mean_us": 284.2021, "p50_us": 211.38, "p75_us": 236.69, "p99_us": 3022.03, "p999_us": 6600.83,
        "p9999_us": 8972.0})
    expect("disk r1 overwrite p50", p["overwrite"]["p50_us"], 208.65)
    expect("disk r1 overwrite p99", p["overwrite"]["p99_us"], 3922.95)
    expect("disk r1 overwrite ops/s", p["overwrite"]["ops_per_s"], 2510.0)
    p = parsed(fixtures, "tmpfs.t4.v1024.r1.out")
    expect("tmpfs 4 threads fillrandom micros/op (per thread)", p["fillrandom"]["micros_per_op"], 39.211)
    expect("tmpfs 4 threads fillrandom ops/s", p["fillrandom"]["ops_per_s"], 101183.0)
    expect("tmpfs 4 threads fillrandom p50", p["fillrandom"]["p50_us"], 5.52)
    expect("tmpfs 4 threads overwrite p99.99", p["overwrite"]["p9999_us"], 13873.97)
    expect("tmpfs 4 threads overwrite operations", p["overwrite"]["operations"], 103996)


def rows_by_key(rows):
    return {(r["benchmark"], r["threads"], r["value_size"], r["config"]): r for r in rows}


def test_summary(fixtures, scratch):
    """Medians, ratios, floors and the table, through the command line."""
    out = os.path.join(scratch, "report.json")
    res = run("summarize", "--manifest", os.path.join(fixtures, "manifest.tsv"), "--json", out,
              "--command-line", "tools/bench/rocksdb --fixture", "--setting", "key_size=16")
    if res.returncode != 0:
        failures.append(f"summarize exited {res.returncode}: {res.stderr}")
        return
    with open(out, encoding="utf-8") as f:
        report = json.load(f)
    rows = rows_by_key(report["rows"])
    disk = rows[("fillrandom", 1, 100, "disk")]
    expect("disk fillrandom median ops/s (3483, 4242)", disk["ops_per_s"], 3862.5)
    expect("disk fillrandom median p50 (211.38, 212.68)", disk["p50_us"], 212.03)
    expect("disk fillrandom rounds", [r["round"] for r in disk["per_round"]], [1, 2])
    expect("disk fillrandom round 2 p99", disk["per_round"][1]["p99_us"], 1085.22)
    tmpfs = rows[("overwrite", 1, 100, "tmpfs")]
    expect("tmpfs overwrite median ops/s (161673, 153798)", tmpfs["ops_per_s"], 157735.5)
    expect("tmpfs overwrite median p99 (14.56, 30.91)", tmpfs["p99_us"], 22.735)
    rpm = rows[("fillrandom", 1, 100, "rpm-tcp")]
    expect("rpm-tcp fillrandom median ops/s (19807, 16984)", rpm["ops_per_s"], 18395.5)
    expect("rpm-tcp fillrandom ratio to disk", rpm["ratio_to_disk"], 18395.5 / 3862.5)
    expect("rpm-tcp fillrandom ratio to tmpfs (211516, 198000)", rpm["ratio_to_tmpfs"], 18395.5 / 204758.0)
    expect("disk row has no ratio", "ratio_to_disk" in disk, False)
    four = rows[("overwrite", 4, 1024, "rpm-tcp")]
    expect("4 threads, 1024 B, one round: ops/s", four["ops_per_s"], 13671.0)
    expect("4 threads, 1024 B, ratio to disk", four["ratio_to_disk"], 13671.0 / 7595.0)
    expect("no 1-thread 1024 B row (not in the manifest)", ("fillrandom", 1, 1024, "disk") in rows, False)
    floors = {(r["test"], r["value_size"]): r for r in report["rows"] if r["benchmark"] == "floor"}
    expect("floor rows", sorted(floors), [("log", 100), ("log", 1024), ("persist", 100), ("persist", 1024)])
    expect("floor persist, 100 B put: commit bytes", floors[("persist", 100)]["commit_bytes"], 138)
    expect("floor persist, 100 B put: p50", floors[("persist", 100)]["p50_us"], 32.448)
    expect("floor log, 1024 B put: commit bytes", floors[("log", 1024)]["commit_bytes"], 1063)
    expect("floor log, 1024 B put: p99", floors[("log", 1024)]["p99_us"], 241.152)
    expect("floor durability", floors[("log", 1024)]["durability"], "majority-local")
    expect("top level", sorted(k for k in ("command_line", "date", "host", "rows") if k in report),
           ["command_line", "date", "host", "rows"])
    return res.stdout


def test_table(stdout, fixtures):
    with open(os.path.join(fixtures, "expected-table.md"), encoding="utf-8") as f:
        want = f.read()
    expect("the table (expected-table.md)", stdout, want)


def test_refusals(fixtures, scratch):
    with open(os.path.join(fixtures, "disk.t1.v100.r1.out"), encoding="utf-8") as f:
        text = f.read()
    cut = os.path.join(scratch, "no-histogram.out")
    with open(cut, "w", encoding="utf-8") as f:
        f.write("\n".join(l for l in text.splitlines() if not l.startswith("Percentiles:")))
    res = run("brief", cut)
    expect("output without percentiles: exit", res.returncode, 2)
    expect("output without percentiles: says so", "no 'Percentiles:' line" in res.stderr, True)
    one = os.path.join(scratch, "no-overwrite.out")
    with open(one, "w", encoding="utf-8") as f:
        f.write(text.split("DB path:")[0] + "DB path:" + text.split("DB path:")[1])
    res = run("brief", one)
    expect("output without overwrite: exit", res.returncode, 2)
    expect("output without overwrite: says so", "no report line for overwrite" in res.stderr, True)
    out = os.path.join(scratch, "report.json")
    res = run("check", out, "--configs", "disk,tmpfs,rpm-tcp", "--threads", "1,4", "--values", "100")
    expect("check of a missing row: exit", res.returncode, 1)
    expect("check names it", "lacks row fillrandom threads 4 value 100 disk" in res.stderr, True)
    res = run("check", out, "--configs", "disk,tmpfs,rpm-tcp", "--threads", "4", "--values", "1024", "--floor")
    expect("check of the 4-thread rows: exit", (res.returncode, res.stderr), (0, ""))
    res = run("check", out, "--configs", "disk,tmpfs,rpm-tcp", "--threads", "1", "--values", "100", "--floor")
    expect("check of the fixture's own rows: exit", (res.returncode, res.stderr), (0, ""))


def test_floor_warning():
    """A floor above the puts it bounds gets a note; one below does not."""
    rpm = {("fillrandom", 1, 100, "rpm-tcp"): {"p50_us": 50.0}}
    floor = {"test": "persist", "value_size": 100, "p50_us": 60.0}
    notes = rr.floor_warnings(rpm, [floor])
    expect("a floor above rpm-tcp's p50: one note", len(notes), 1)
    expect("the note names both p50s", "(60.0 µs)" in notes[0] and "(50.0 µs)" in notes[0], True)
    expect("a floor below it: none", rr.floor_warnings(rpm, [dict(floor, p50_us=40.0)]), [])
    expect("the log test above it: none (it is not a bound)", rr.floor_warnings(rpm, [dict(floor, test="log")]), [])


def test_rdma(fixtures, scratch):
    """A lab run with rpm-rdma (rdma/): its columns and ratio_to_rpm_tcp, figures the fixture's."""
    rdma = os.path.join(fixtures, "rdma")
    out = os.path.join(scratch, "rdma.json")
    res = run("summarize", "--manifest", os.path.join(rdma, "manifest.tsv"), "--json", out, "--setting", "key_size=16")
    if res.returncode != 0:
        failures.append(f"rdma: summarize exited {res.returncode}: {res.stderr}")
        return
    with open(out, encoding="utf-8") as f:
        report = json.load(f)
    rows = rows_by_key(report["rows"])
    one = rows[("fillrandom", 1, 100, "rpm-rdma")]
    expect("rpm-rdma fillrandom median ops/s (168, 164)", one["ops_per_s"], 166.0)
    expect("rpm-rdma fillrandom median p50 (4630.23, 5367.83)", one["p50_us"], 4999.03)
    expect("rpm-rdma fillrandom ratio to rpm-tcp (223, 165)", one.get("ratio_to_rpm_tcp"), 166.0 / 194.0)
    expect("rpm-rdma fillrandom ratio to tmpfs (10980, 11677)", one["ratio_to_tmpfs"], 166.0 / 11328.5)
    expect("rpm-rdma: no disk ran, no ratio to it", "ratio_to_disk" in one, False)
    four = rows[("overwrite", 4, 100, "rpm-rdma")]
    expect("rpm-rdma overwrite 4 threads ratio to rpm-tcp (286, 354 / 548, 442)", four.get("ratio_to_rpm_tcp"), 320.0 / 495.0)
    expect("rpm-tcp has no ratio to itself", "ratio_to_rpm_tcp" in rows[("overwrite", 4, 100, "rpm-tcp")], False)
    floors = {(r["config"], r["test"]): r for r in report["rows"] if r["benchmark"] == "floor"}
    expect("a floor per transport", sorted(floors), [("rpm-rdma", "log"), ("rpm-rdma", "persist"),
                                                    ("rpm-tcp", "log"), ("rpm-tcp", "persist")])
    expect("rpm-rdma persist floor p50", floors[("rpm-rdma", "persist")]["p50_us"], 1781.76)
    with open(os.path.join(rdma, "expected-table.md"), encoding="utf-8") as f:
        expect("the rdma table (rdma/expected-table.md)", res.stdout, f.read())
    res = run("check", out, "--configs", "tmpfs,rpm-tcp,rpm-rdma", "--threads", "1,4", "--values", "100", "--floor")
    expect("check of the rdma run: exit", (res.returncode, res.stderr), (0, ""))
    one.pop("ratio_to_rpm_tcp", None)
    cut = os.path.join(scratch, "rdma-no-ratio.json")
    with open(cut, "w", encoding="utf-8") as f:
        json.dump(report, f)
    res = run("check", cut, "--configs", "tmpfs,rpm-tcp,rpm-rdma", "--threads", "1", "--values", "100")
    expect("check without ratio_to_rpm_tcp: exit", res.returncode, 1)
    expect("check names it", "fillrandom threads 1 value 100 rpm-rdma: ratio_to_rpm_tcp > 0" in res.stderr, True)


def main():
    if len(sys.argv) != 3:
        print("usage: rocksdb_report_test.py FIXTURES SCRATCH_DIR", file=sys.stderr)
        return 2
    fixtures, scratch = sys.argv[1], sys.argv[2]
    os.makedirs(scratch, exist_ok=True)
    test_parse(fixtures)
    test_floor_warning()
    stdout = test_summary(fixtures, scratch)
    if stdout is not None:
        test_table(stdout, fixtures)
        test_refusals(fixtures, scratch)
    test_rdma(fixtures, scratch)
    for f in failures:
        print(f"rocksdb_report_test: {f}", file=sys.stderr)
    print(f"rocksdb_report_test: {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
