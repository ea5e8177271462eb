#!/usr/bin/env python3
"""Parse db_bench's output for tools/bench/rocksdb; print its table, write its JSON.

  rocksdb_report.py summarize --manifest FILE [--json OUT] [--command-line TEXT]
                    [--setting KEY=VALUE]... [--note TEXT]...
  rocksdb_report.py parse FILE        one db_bench output, parsed, as JSON
  rocksdb_report.py brief FILE        the same on one line (the script's progress)
  rocksdb_report.py check FILE --configs disk,tmpfs[,rpm-tcp,rpm-rdma] [--threads 1,4]
                    [--values 100,1024] [--floor]
  rocksdb_report.py wal-bytes --key-size 16 --values 100,1024

Why python and not awk: the text has a report line and a histogram block per
benchmark, and a histogram belongs to the report line above it; a parser
that knows that refuses output it does not understand instead of reading
the wrong number.

The manifest (tab-separated, one line per file, written by the script):
  db_bench CONFIG THREADS VALUE_SIZE ROUND PATH   a db_bench stdout
  floor    CONFIG 1       VALUE_SIZE TEST  PATH   rpm-bench --replication JSON
For a floor line, TEST is rpm-bench's test (persist or log) and the result
read is the one of size wal-bytes(VALUE_SIZE).

What db_bench 7.8.3 prints per benchmark (Stats::Report, --histogram=1):
  fillrandom   :      12.345 micros/op 81000 ops/sec 5.001 seconds 405000 operations;    9.9 MB/s
  Microseconds per write:
  Count: 405000 Average: 12.3456  StdDev: 1.23
  Min: 3  Median: 10.2300  Max: 9000
  Percentiles: P50: 10.23 P75: 12.00 P99: 45.67 P99.9: 100.00 P99.99: 900.00
micros/op is per thread (the threads' summed time over the operations);
ops/sec is the whole run's throughput, the figure the table compares.

check exits 1 naming what is missing; bad usage or unreadable input exits 2.
Only python3's standard library is used.
"""
import argparse
import datetime
import json
import os
import platform
import re
import statistics
import sys

CONFIGS = ("disk", "tmpfs", "rpm-tcp", "rpm-rdma")
BASELINES = ("disk", "tmpfs")
BENCHMARKS = ("fillrandom", "overwrite")

REPORT = re.compile(r"^(\w+)\s*:\s*([0-9.]+) micros/op (\d+) ops/sec\s+([0-9.]+) seconds\s+(\d+) operations;")
COUNT = re.compile(r"^Count: (\d+) Average: ([0-9.]+)")
PERCENTILES = re.compile(r"^Percentiles: P50: ([0-9.]+) P75: ([0-9.]+) P99: ([0-9.]+) "
                         r"P99\.9: ([0-9.]+) P99\.99: ([0-9.]+)")


class BadInput(Exception):
    """Input the report cannot read: exit 2 with its message."""


def parse_db_bench(text, name="db_bench output"):
    """Every benchmark's report line and write histogram, by benchmark name."""
    out, current, in_histogram = {}, None, False
    for line in text.splitlines():
        line = line.strip()
        m = REPORT.match(line)
        if m:
            current = m.group(1)
            out[current] = {"micros_per_op": float(m.group(2)), "ops_per_s": float(m.group(3)),
                            "seconds": float(m.group(4)), "operations": int(m.group(5))}
            in_histogram = False
        elif line == "Microseconds per write:":
            if current is None:
                raise BadInput(f"{name}: a histogram before any benchmark's report line")
            in_histogram = True
        elif in_histogram and COUNT.match(line):
            m = COUNT.match(line)
            out[current].update(count=int(m.group(1)), mean_us=float(m.group(2)))
        elif in_histogram and PERCENTILES.match(line):
            p = [float(x) for x in PERCENTILES.match(line).groups()]
            out[current].update(p50_us=p[0], p75_us=p[1], p99_us=p[2], p999_us=p[3], p9999_us=p[4])
            in_histogram = False
    for bench, fig in out.items():
        if "p50_us" not in fig:
            raise BadInput(f"{name}: {bench} has no 'Percentiles:' line (was --histogram=1 given?)")
    return out


def wal_bytes(key_size, value_size):
    """Bytes of the WAL record of one Put: what a 1-thread put must make durable.

    log::Writer's header (7) + WriteBatch header (12) + the record's type (1)
    + varint32 key length + key + varint32 value length + value.
    """
    def varint(n):
        size = 1
        while n >= 128:
            n >>= 7
            size += 1
        return size
    return 7 + 12 + 1 + varint(key_size) + key_size + varint(value_size) + value_size


def read_manifest(path):
    rows = []
    try:
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                parts = line.rstrip("\n").split("\t")
                if len(parts) != 6 or parts[0] not in ("db_bench", "floor") or parts[1] not in CONFIGS:
                    raise BadInput(f"{path}:{n}: expected KIND CONFIG THREADS VALUE ROUND PATH, tab-separated")
                kind, config, threads, value, round_or_test, file = parts
                if not os.path.isabs(file):
                    file = os.path.join(os.path.dirname(os.path.abspath(path)), file)
                rows.append({"kind": kind, "config": config, "threads": int(threads), "value_size": int(value),
                             "round": round_or_test, "path": file})
    except (OSError, ValueError) as e:
        raise BadInput(f"{path}: {e}") from e
    return rows


def read_text(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError as e:
        raise BadInput(str(e)) from e


def median(values):
    return statistics.median(values) if values else None


def db_bench_rows(entries):
    """One row per benchmark, threads, value size and config: medians over rounds."""
    groups = {}
    for e in entries:
        parsed = parse_db_bench(read_text(e["path"]), e["path"])
        for bench in BENCHMARKS:
            if bench not in parsed:
                raise BadInput(f"{e['path']}: no report line for {bench}")
            fig = parsed[bench]
            key = (bench, e["threads"], e["value_size"], e["config"])
            groups.setdefault(key, []).append({
                "round": int(e["round"]), "ops_per_s": fig["ops_per_s"], "p50_us": fig["p50_us"],
                "p99_us": fig["p99_us"], "micros_per_op": fig["micros_per_op"], "operations": fig["operations"]})
    rows = []
    for (bench, threads, value, config), rounds in groups.items():
        rounds.sort(key=lambda r: r["round"])
        rows.append({"benchmark": bench, "threads": threads, "value_size": value, "config": config,
                     "ops_per_s": median([r["ops_per_s"] for r in rounds]),
                     "p50_us": median([r["p50_us"] for r in rounds]),
                     "p99_us": median([r["p99_us"] for r in rounds]),
                     "per_round": rounds})
    add_ratios(rows)
    order = {b: i for i, b in enumerate(BENCHMARKS)}
    rows.sort(key=lambda r: (order[r["benchmark"]], r["threads"], r["value_size"], CONFIGS.index(r["config"])))
    return rows


def ratio_key(base):
    """The JSON key of a ratio: ratio_to_disk, ratio_to_tmpfs, ratio_to_rpm_tcp."""
    return "ratio_to_" + base.replace("-", "_")


def bases_of(config):
    """What a row's ops/s is divided by: the baselines, and for rpm-rdma rpm-tcp too."""
    if not config.startswith("rpm-"):
        return ()
    return BASELINES + (("rpm-tcp",) if config == "rpm-rdma" else ())


def add_ratios(rows):
    """rpm rows: ops/s against disk and tmpfs of the same case, rpm-rdma's
    against rpm-tcp's too (each omitted when its config did not run)."""
    by_key = {(r["benchmark"], r["threads"], r["value_size"], r["config"]): r for r in rows}
    for r in rows:
        for base in bases_of(r["config"]):
            b = by_key.get((r["benchmark"], r["threads"], r["value_size"], base))
            if b and b["ops_per_s"]:
                r[ratio_key(base)] = r["ops_per_s"] / b["ops_per_s"]


def floor_rows(entries, key_size):
    """rpm-bench's majority commit of one put's WAL bytes, per value size and test."""
    rows = []
    for e in entries:
        try:
            report = json.loads(read_text(e["path"]))
        except json.JSONDecodeError as err:
            raise BadInput(f"{e['path']}: not JSON: {err}") from err
        size = wal_bytes(key_size, e["value_size"])
        test = e["round"]
        found = [r for r in report.get("results", []) if r.get("test") == test and r.get("size") == size]
        if not found:
            raise BadInput(f"{e['path']}: no {test} result of {size} B")
        res = found[0]
        rows.append({"benchmark": "floor", "test": test, "threads": 1, "value_size": e["value_size"],
                     "commit_bytes": size, "config": e["config"], "durability": res.get("durability"),
                     "replicas": res.get("replicas"), "ops_per_s": res.get("ops_per_s"),
                     "p50_us": res["p50_ns"] / 1000.0, "p99_us": res["p99_ns"] / 1000.0,
                     "rounds": report.get("settings", {}).get("rounds")})
    return rows


def cpu_model():
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def fmt_int(x):
    return "–" if x is None else f"{x:,.0f}"


def fmt_us(x):
    return "–" if x is None else (f"{x:,.0f}" if x >= 100 else f"{x:.1f}")


def cell(row):
    if row is None:
        return "–"
    return f"{fmt_int(row['ops_per_s'])} ({fmt_us(row['p50_us'])}/{fmt_us(row['p99_us'])})"


def ratio(row, base):
    v = row.get(ratio_key(base)) if row else None
    return "–" if v is None else f"{v:.2f}x"


def table(rows, floors):
    """The markdown table: one line per benchmark, threads and value size.

    Without rpm-rdma, the columns of every run before it (disk, tmpfs,
    rpm-tcp and its two ratios, "–" for a config that did not run). With it
    (the lab, where there is no disk), only the configs that ran, then each
    rpm config's ratios to the baselines that ran, then rpm-rdma/rpm-tcp.
    """
    by_key = {(r["benchmark"], r["threads"], r["value_size"], r["config"]): r for r in rows}
    cases = sorted({(r["benchmark"], r["threads"], r["value_size"]) for r in rows},
                   key=lambda c: (BENCHMARKS.index(c[0]), c[1], c[2]))
    ran = [c for c in CONFIGS if any(r["config"] == c for r in rows)]
    if "rpm-rdma" in ran:
        header, cells = ran_columns(ran)
    else:
        header = ["disk ops/s (p50/p99 µs)", "tmpfs", "rpm-tcp", "rpm/disk", "rpm/tmpfs"]
        cells = [("disk", None), ("tmpfs", None), ("rpm-tcp", None), ("rpm-tcp", "disk"), ("rpm-tcp", "tmpfs")]
    lines = ["| benchmark | threads | value | " + " | ".join(header) + " |", "|---" * (3 + len(header)) + "|"]
    for bench, threads, value in cases:
        get = lambda config: by_key.get((bench, threads, value, config))  # noqa: E731
        row = [cell(get(c)) if base is None else ratio(get(c), base) for c, base in cells]
        lines.append(f"| {bench} | {threads} | {value} | " + " | ".join(row) + " |")
    if floors:
        lines.append("")  # below the table: a floor is not a db_bench case
    for f in floors:
        # Which servers a floor ran on, said only when there are two kinds.
        over = f", {f['config']}" if "rpm-rdma" in ran else ""
        lines.append(f"floor ({f['test']}{over}, {f['durability']} of {f['replicas']}, {f['commit_bytes']} B = one "
                     f"{f['value_size']} B put's WAL record): p50 {fmt_us(f['p50_us'])} µs, "
                     f"p99 {fmt_us(f['p99_us'])} µs, {fmt_int(f['ops_per_s'])} commits/s")
    lines += floor_warnings(by_key, floors)
    return "\n".join(lines)


def ran_columns(ran):
    """Headers and (config, base) cells: the configs that ran, then the ratios among them."""
    header = [f"{c} ops/s (p50/p99 µs)" if i == 0 else c for i, c in enumerate(ran)]
    cells = [(c, None) for c in ran]
    for c in ran:
        for base in bases_of(c):
            if base in ran:
                header.append(f"{c}/{base}")
                cells.append((c, base))
    return header, cells


def floor_warnings(by_key, floors):
    """A persist floor above the 1-thread puts it bounds: say why rather than print it bare.

    The floor runs once, after every db_bench run, not interleaved with them,
    and an unpinned loopback round trip on a 2-CPU machine is bimodal
    (docs/benchmarks.md, "This machine"): the two can land in different modes.
    Only persist bounds a put: log is the plug-in's own append and commit,
    which a put through RocksDB costs too, so a put can come out level with
    it within the noise.
    """
    out = []
    for f in floors:
        config = f.get("config", "rpm-tcp")
        rpm = by_key.get(("fillrandom", 1, f["value_size"], config))
        if f["test"] == "persist" and rpm and f["p50_us"] > rpm["p50_us"]:
            out.append(f"note: the {f['test']} floor's p50 ({fmt_us(f['p50_us'])} µs) is above {config}'s 1-thread "
                       f"fillrandom p50 at {f['value_size']} B ({fmt_us(rpm['p50_us'])} µs): it ran after the "
                       f"db_bench runs, not between them, and unpinned loopback latency here is bimodal; "
                       f"compare runs with --cpus 0")
    return out


NUMERIC_SETTINGS = ("duration_s", "rounds", "key_size", "slots", "slot_size", "write_buffer_size")


def settings_of(pairs):
    """KEY=VALUE pairs as a dict; the counts as numbers (not cpus: "0" is a CPU list)."""
    out = {}
    for pair in pairs:
        key, value = pair.split("=", 1)
        out[key] = int(value) if key in NUMERIC_SETTINGS and re.fullmatch(r"[0-9]+", value) else value
    return out


def summarize(args):
    entries = read_manifest(args.manifest)
    settings = settings_of(args.setting)
    key_size = int(settings.get("key_size", 16))
    rows = db_bench_rows([e for e in entries if e["kind"] == "db_bench"])
    floors = floor_rows([e for e in entries if e["kind"] == "floor"], key_size)
    print(table(rows, floors))
    for note in args.note:
        print(f"note: {note}")
    if args.json:
        report = {"tool": "tools/bench/rocksdb", "command_line": args.command_line,
                  "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                  "host": {"nproc": os.cpu_count(), "cpu_model": cpu_model(), "kernel": platform.release()},
                  "settings": settings,
                  "units": {"ops_per_s": "operations per second, all threads",
                            "p50_us": "microseconds per write (db_bench's histogram)"},
                  "rows": rows + floors, "notes": args.note}
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1)
            f.write("\n")
    return 0


def brief(parsed, name):
    """One line per run for the progress output; refuses a run lacking a benchmark."""
    missing = [b for b in BENCHMARKS if b not in parsed]
    if missing:
        raise BadInput(f"{name}: no report line for {', '.join(missing)}")
    return "; ".join(f"{b} {fmt_int(parsed[b]['ops_per_s'])} ops/s, p50 {fmt_us(parsed[b]['p50_us'])} µs, "
                     f"p99 {fmt_us(parsed[b]['p99_us'])} µs" for b in BENCHMARKS)


def positive(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and x > 0


def check_rows(report, configs, threads, values, floor):
    """What a run of these options must have written; the list of what is missing."""
    missing = [f"top-level '{k}'" for k in ("command_line", "date", "host", "rows") if k not in report]
    if not positive(report.get("host", {}).get("nproc")):
        missing.append("host.nproc")
    rows = report.get("rows", [])
    by_key = {(r.get("benchmark"), r.get("threads"), r.get("value_size"), r.get("config")): r for r in rows}
    for bench in BENCHMARKS:
        for t in threads:
            for v in values:
                for config in configs:
                    name = f"{bench} threads {t} value {v} {config}"
                    r = by_key.get((bench, t, v, config))
                    if r is None:
                        missing.append(f"row {name}")
                        continue
                    missing += [f"{name}: {k} > 0" for k in ("ops_per_s", "p50_us", "p99_us") if not positive(r.get(k))]
                    if not r.get("per_round") or not all(positive(p.get("ops_per_s")) for p in r["per_round"]):
                        missing.append(f"{name}: per_round with ops_per_s > 0")
                    missing += [f"{name}: {ratio_key(b)} > 0" for b in bases_of(config)
                                if b in configs and not positive(r.get(ratio_key(b)))]
    if floor:
        for config in [c for c in configs if c.startswith("rpm-")]:
            for v in values:
                found = [r for r in rows if r.get("benchmark") == "floor" and r.get("value_size") == v
                         and r.get("config", "rpm-tcp") == config]
                if not found or not all(positive(r.get("p50_us")) for r in found):
                    what = "" if config == "rpm-tcp" else f"{config} "
                    missing.append(f"{what}floor row of value {v} with p50_us > 0")
    return missing


def check(args):
    try:
        report = json.loads(read_text(args.file))
    except json.JSONDecodeError as e:
        raise BadInput(f"{args.file}: not JSON: {e}") from e
    missing = check_rows(report, args.configs.split(","), [int(t) for t in args.threads.split(",")],
                         [int(v) for v in args.values.split(",")], args.floor)
    for m in missing:
        print(f"rocksdb_report: {args.file} lacks {m}", file=sys.stderr)
    if not missing:
        print(f"rocksdb_report: {args.file}: {len(report['rows'])} rows, all present and positive")
    return 1 if missing else 0


def main(argv):
    p = argparse.ArgumentParser(prog="rocksdb_report.py", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("summarize")
    s.add_argument("--manifest", required=True)
    s.add_argument("--json")
    s.add_argument("--command-line", default="")
    s.add_argument("--setting", action="append", default=[], help="KEY=VALUE, copied to the JSON's settings")
    s.add_argument("--note", action="append", default=[])
    for name in ("parse", "brief"):
        s = sub.add_parser(name)
        s.add_argument("file")
    s = sub.add_parser("check")
    s.add_argument("file")
    s.add_argument("--configs", required=True)
    s.add_argument("--threads", default="1,4")
    s.add_argument("--values", default="100,1024")
    s.add_argument("--floor", action="store_true", help="floor rows must be there too")
    s = sub.add_parser("wal-bytes")
    s.add_argument("--key-size", type=int, default=16)
    s.add_argument("--values", required=True)
    args = p.parse_args(argv)
    try:
        if args.command == "summarize":
            if any("=" not in s for s in args.setting):
                raise BadInput("--setting takes KEY=VALUE")
            return summarize(args)
        if args.command == "parse":
            print(json.dumps(parse_db_bench(read_text(args.file), args.file), indent=1))
            return 0
        if args.command == "brief":
            print(brief(parse_db_bench(read_text(args.file), args.file), args.file))
            return 0
        if args.command == "wal-bytes":
            print(",".join(str(wal_bytes(args.key_size, int(v))) for v in args.values.split(",")))
            return 0
        return check(args)
    except BadInput as e:
        print(f"rocksdb_report: {e}", file=sys.stderr)
        return 2
    except ValueError as e:
        print(f"rocksdb_report: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
