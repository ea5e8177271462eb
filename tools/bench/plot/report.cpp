// The --plot figures of the operation benchmark and of --replication: one
// series per result, against the baseline its latency ratios use (the
// round trip of the same size, qd and threads; the single-replica persist
// or batch), so the picture and the table compare the same pairs.
#include "plot.hpp"
#include "../replication/replication.hpp"
#include "../report.hpp"

#include <fstream>
#include <iostream>

namespace rpmbench::plot {
namespace {

// The legend's name of a test: the progress line's words, so a reader can
// find the row of the table (a replicated test: the table's columns in
// order). tools/bench/plot/smoke builds the same names from the JSON report.
std::string test_name(const TestResult& r) {
    std::string s = std::string(to_string(r.spec.op)) + (r.spec.registered ? " (registered)" : "") + " " +
                    std::to_string(r.spec.size) + " B qd=" + std::to_string(r.spec.qd) +
                    " threads=" + std::to_string(r.threads) + " " + r.method;
    return r.method_choice == "decided" ? s : s + " (" + r.method_choice + ")";
}

std::string test_name(const RepResult& r) {
    const auto test = r.test == RepTest::batch ? "batch" + std::to_string(r.writes_per_commit)
                                               : std::string(to_string(r.test));
    return test + " " + std::to_string(r.size) + " B replicas=" + std::to_string(r.config.replicas) + " " +
           r.config.name;
}

// The test's CDF and its baseline's; an unmeasured baseline is named in
// the legend instead (rdma:// has none built in).
Series series(std::string name, const Measurement& m, const Baseline* b) {
    Series s{std::move(name), cdf_points(m.latency), {}, {}};
    if (!b) s.baseline_note = "no baseline";
    else if (!b->m) s.baseline_note = b->kind + " (unavailable: " + b->unavailable + ")";
    else if (b->m->latency.count() == 0) s.baseline_note = b->kind + " (no sample)";
    else s.baseline_note = b->kind, s.baseline = cdf_points(b->m->latency);
    return s;
}

std::string subtitle(const Report& r) {
    return r.transport + (r.interrupted ? ", interrupted (partial)" : "") + ": " + r.command_line;
}

} // namespace

Figure figure_of(const Report& r) {
    Figure f;
    f.title = "rpm-bench: latency CDF of each test (solid) and of its baseline (dashed)";
    f.subtitle = subtitle(r);
    for (const auto& res : r.results) f.series.push_back(series(test_name(res), res.m, r.baseline(res.latency_baseline)));
    return f;
}

Figure figure_of(const ReplicationReport& r) {
    Figure f;
    f.title = "rpm-bench --replication: commit latency CDF (solid) and single-replica baseline (dashed)";
    f.subtitle = subtitle(r.base);
    f.x_label = "latency per commit, microseconds (log scale)";
    f.y_label = "fraction of commits";
    for (const auto& res : r.results)
        f.series.push_back(series(test_name(res), res.m, r.base.baseline(res.single_baseline)));
    return f;
}

int write_plot(const std::string& path, const Figure& f, int status) {
    if (path.empty()) return status;
    const auto fail = [&](const std::string& why) {
        std::cerr << "rpm-bench: --plot " << path << ": " << why << "\n";
        return status != 0 ? status : 1;
    };
    // An empty frame would look like a result; say there is none instead.
    if (!has_curves(f)) return fail("no test measured a latency: nothing to plot, not written");
    std::ofstream out(path, std::ios::trunc);
    out << render_svg(f);
    out.close();
    return out ? status : fail("cannot write the file");
}

} // namespace rpmbench::plot
