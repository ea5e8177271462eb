// The table rendering: microseconds for people, the same ratios as the JSON.
#include "report.hpp"

#include "text_format.hpp"

namespace rpmbench {
namespace {


std::string ratio_cell(const std::optional<double>& v) { return v ? fmt("%7.2f", *v) : std::string("    n/a"); }

std::string latency_cells(const Measurement& m) {
    const auto s = m.latency.summary();
    if (s.count == 0) return fmt("%9s %9s %9s %9s", "-", "-", "-", "-");
    return fmt("%9.2f %9.2f %9.2f %9.2f", us(s.mean_ns), us(s.p50_ns), us(s.p99_ns), us(s.p999_ns));
}

std::string method_label(const TestResult& r) {
    if (r.method_choice == "forced_unsafe") return r.method + " (FORCED, UNSAFE)";
    if (r.method_choice == "forced") return r.method + " (forced)";
    return r.method;
}

// The round-trip baseline's p50 and p99, and the stream baseline's MB/s.
std::string baseline_cells(const Report& r, const TestResult& res) {
    const auto* lat = r.baseline(res.latency_baseline);
    const auto* bw = r.baseline(res.bandwidth_baseline);
    std::string s = lat && lat->m ? fmt("%9.2f %9.2f", us(lat->m->latency.summary().p50_ns),
                                        us(lat->m->latency.summary().p99_ns))
                                  : fmt("%9s %9s", "n/a", "n/a");
    return s + fmt(" %9.1f", res.m.mb_per_s()) + (bw && bw->m ? fmt(" %9.1f", bw->m->mb_per_s()) : fmt(" %9s", "n/a"));
}

// CPU microseconds per operation of the whole process (client and in-process
// server), and of the test's round-trip baseline.
std::string cpu_cell(const Measurement& m) {
    if (m.cpu_seconds <= 0 || m.ops == 0) return fmt("%7s", "n/a");
    return fmt("%7.2f", m.cpu_seconds * 1e6 / static_cast<double>(m.ops));
}

std::string cpu_cells(const Report& r, const TestResult& res) {
    const auto* lat = r.baseline(res.latency_baseline);
    return cpu_cell(res.m) + " " + (lat && lat->m ? cpu_cell(*lat->m) : fmt("%7s", "n/a"));
}

// One row per test: rpm's figures, its paired baselines', and the ratios.
void print_results(const Report& r, std::ostream& out) {
    out << "latency in microseconds, bandwidth in MB/s; base_*: the test's own round-trip baseline, strm: the "
           "stream baseline;\nratios: latency rpm/baseline (lower is better), bandwidth rpm/stream (higher is "
           "better);\ncpu: CPU microseconds per operation of the whole process (client and in-process server), "
           "base_cpu: the round-trip baseline's (both its ends)\n"
        << fmt("  %-12s %7s %3s %3s %-32s %8s %9s %9s %9s %9s %9s %9s %9s %9s %7s %7s %7s %7s %7s %8s\n", "op", "size",
               "qd", "thr", "method", "ops", "mean", "p50", "p99", "p99.9", "base_p50", "base_p99", "MB/s",
               "strm_MB/s", "p50/rt", "mean/rt", "p99/rt", "bw/strm", "cpu", "base_cpu");
    for (const auto& res : r.results) {
        const auto q = ratios(r, res);
        out << fmt("  %-12s %7zu %3u %3u %-32s %8llu ", std::string(to_string(res.spec.op)).c_str(), res.spec.size,
                   res.spec.qd, res.threads, method_label(res).c_str(), static_cast<unsigned long long>(res.m.ops))
            << latency_cells(res.m) << " " << baseline_cells(r, res) << " " << ratio_cell(q.p50) << " "
            << ratio_cell(q.mean) << " " << ratio_cell(q.p99) << " " << ratio_cell(q.bandwidth) << " "
            << cpu_cells(r, res) << "\n";
        if (res.m.errors) out << "    errors: " << res.m.errors << " (first: " << res.m.first_error << ")\n";
    }
}

std::string stream_line(const Baseline& b) {
    if (!b.m) return b.unavailable;
    return fmt("%.1f MB/s", b.m->mb_per_s());
}

} // namespace

void print_text(const Report& r, std::ostream& out) {
    out << "rpm-bench: " << r.mode << " server " << r.uri << ", region " << r.region.name << " (" << r.region.size
        << " bytes): method " << r.region.method << ", server persist " << r.region.server_persist << ", domain "
        << r.region.domain << "\n"
        << "machine: " << r.nproc << " CPUs, " << r.cpu_model << ", Linux " << r.kernel << "; pinned to CPUs "
        << r.cpus << "\n"
        << "each test: " << r.warmup << " s warm-up, then " << r.duration << " s"
        << (r.ops_limit ? " or " + std::to_string(r.ops_limit) + " ops" : std::string()) << " in " << r.rounds
        << " slices alternating with its own baseline's slices\n\n";
    if (!r.baselines.empty()) {
        const auto& opening = r.baselines.front();
        out << "baselines: " << opening.path << "\n  opening stream (1 MiB messages): " << stream_line(opening)
            << "\n  every baseline: --json\n\n";
    }
    for (const auto& b : r.baselines)
        if (!b.m) {
            out << "baselines unavailable: " << b.unavailable << "\n\n";
            break;
        }
    print_results(r, out);
    for (const auto& s : r.skipped) out << "skipped: " << s.what << ": " << s.reason << "\n";
    for (const auto& n : r.notes) out << "note: " << n << "\n";
    if (r.interrupted) out << "interrupted: the results above are partial\n";
}

} // namespace rpmbench
