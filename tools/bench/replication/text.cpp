// The --replication table: microseconds for people, the same ratios as the JSON.
#include "replication.hpp"

#include "../text_format.hpp"

namespace rpmbench {
namespace {


std::string cell(const std::optional<double>& v, const char* f = "%8.2f") {
    return v ? fmt(f, *v) : fmt("%8s", "n/a");
}

// Process CPU (every thread) per operation, in microseconds.
std::string cpu_cell(const Measurement& m) {
    if (m.cpu_seconds <= 0 || m.ops == 0) return fmt("%8s", "n/a");
    return fmt("%8.1f", m.cpu_seconds * 1e6 / static_cast<double>(m.ops));
}

std::string latency_cells(const Measurement& m) {
    const auto s = m.latency.summary();
    if (s.count == 0) return fmt("%8s %8s %8s", "-", "-", "-");
    return fmt("%8.2f %8.2f %8.2f", us(s.p50_ns), us(s.p99_ns), us(s.p999_ns));
}

void print_header(const ReplicationReport& r, std::ostream& out) {
    const auto& b = r.base;
    out << "rpm-bench --replication: " << b.mode << ", transport " << b.transport << "\n";
    for (std::size_t i = 0; i < r.servers.size(); ++i) {
        const auto& g = r.servers[i].region;
        out << "  replica " << i << ": " << r.servers[i].uri << ", region " << g.name << " (" << g.size
            << " bytes): method " << g.method << ", server persist " << g.server_persist << ", domain " << g.domain
            << "\n";
    }
    out << "  local copy: " << r.local_path << " (" << r.local_size << " bytes)\n"
        << "machine: " << b.nproc << " CPUs, " << b.cpu_model << ", Linux " << b.kernel << "; pinned to CPUs "
        << b.cpus << "\n"
        << "each test: " << b.warmup << " s warm-up, then " << b.duration << " s"
        << (b.ops_limit ? " or " + std::to_string(b.ops_limit) + " commits" : std::string()) << " in " << b.rounds
        << " rounds; the baselines' slices alternate with the tests' (qd 1, one thread, synchronous calls)\n\n";
}

void print_baselines(const ReplicationReport& r, std::ostream& out) {
    out << "baselines (latency in microseconds; single_*: a plain rpm client on replica 0; cpu/op: CPU "
           "microseconds of the whole process, in-process servers included):\n"
        << fmt("  %-52s %8s %8s %8s %8s %10s %9s %8s\n", "id", "ops", "p50", "p99", "p99.9", "ops/s", "MB/s", "cpu/op");
    for (const auto& b : r.base.baselines) {
        if (!b.m) {
            out << fmt("  %-52s unavailable: %s\n", b.id.c_str(), b.unavailable.c_str());
            continue;
        }
        out << fmt("  %-52s %8llu ", b.id.c_str(), static_cast<unsigned long long>(b.m->ops)) << latency_cells(*b.m)
            << fmt(" %10.0f %9.1f ", b.m->ops_per_s(), b.m->mb_per_s()) << cpu_cell(*b.m) << "\n";
    }
    out << "\n";
}

void print_results(const ReplicationReport& r, std::ostream& out) {
    out << "results (latency per commit in microseconds; ratios to the single-replica baseline of the same test "
           "and size: latency lower is better, throughput (commits/s) higher is better; p50/rt: to the TCP round "
           "trip; p50/fan: to the TCP fan-out to as many replicas, awaiting as many answers):\n"
        << fmt("  %-7s %7s %4s %-16s %6s %8s %8s %8s %8s %10s %9s %8s %8s %8s %8s %8s %8s\n", "test", "size", "repl",
               "durability", "needs", "commits", "p50", "p99", "p99.9", "commits/s", "MB/s", "cpu/op", "p50/sgl",
               "p99/sgl", "tput/sgl", "p50/rt", "p50/fan");
    for (const auto& res : r.results) {
        const auto q = rep_ratios(r, res);
        const auto needs = std::to_string(res.config.needed) + "/" + std::to_string(res.config.members);
        const auto test = res.test != RepTest::batch ? std::string(to_string(res.test))
                                                     : "batch" + std::to_string(res.writes_per_commit);
        out << fmt("  %-7s %7zu %4u %-16s %6s %8llu ", test.c_str(), res.size, res.config.replicas,
                   res.config.name.c_str(), needs.c_str(), static_cast<unsigned long long>(res.m.ops))
            << latency_cells(res.m) << fmt(" %10.0f %9.1f ", res.m.ops_per_s(), res.m.mb_per_s()) << cpu_cell(res.m)
            << " " << cell(q.p50)
            << " " << cell(q.p99) << " " << cell(q.throughput) << " " << cell(q.rt_p50) << " " << cell(q.fanout_p50)
            << "\n";
        if (res.m.errors) out << "    errors: " << res.m.errors << " (first: " << res.m.first_error << ")\n";
        if (res.replica_failures) out << "    replicas that left during the test: " << res.replica_failures << "\n";
    }
}

void print_headline(const ReplicationReport& r, std::ostream& out) {
    const auto hs = headlines(r);
    out << fmt("\nheadline: majority-of-3 commit p50 / single-replica persist p50 (target <= %.1f):\n",
               kHeadlineTarget);
    if (hs.empty()) out << "  not measured (needs --replicas 3 and a majority durability)\n";
    for (const auto& h : hs) {
        out << fmt("  %7zu B, %s: %.2f / %.2f us = ", h.size, h.durability.c_str(), us(h.commit_p50_ns),
                   us(h.single_p50_ns));
        if (!h.ratio) out << "n/a\n";
        else if (*h.ratio <= kHeadlineTarget) out << fmt("%.2f (within the target)\n", *h.ratio);
        else out << fmt("%.2f (missed: %.1f times the target)\n", *h.ratio, *h.ratio / kHeadlineTarget);
        if (h.plain_ratio)
            out << fmt("    the same fan-out over plain sockets / the plain round trip: %.2f\n", *h.plain_ratio);
    }
}

} // namespace

void print_text(const ReplicationReport& r, std::ostream& out) {
    print_header(r, out);
    print_baselines(r, out);
    print_results(r, out);
    print_headline(r, out);
    for (const auto& s : r.base.skipped) out << "skipped: " << s.what << ": " << s.reason << "\n";
    for (const auto& n : r.base.notes) out << "note: " << n << "\n";
    if (r.base.interrupted) out << "interrupted: the results above are partial\n";
}

} // namespace rpmbench
