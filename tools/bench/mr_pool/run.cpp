// rpm-bench --mr-pool: the model from the options, the three searches
// (static, the pool, the shared bound; the same seed), the report.
#include "../measure.hpp"
#include "bench.hpp"
#include "../options.hpp"
#include "../setup.hpp"
#include "../text_format.hpp"

#include <iostream>

namespace rpmbench {
namespace {

MrpReport make_report(const Options& o, const std::string& cpus) {
    const auto& p = o.mr_pool;
    MrpReport r;
    r.base.command_line = o.command_line;
    r.base.mode = "virtual time";
    describe_machine(r.base);
    r.base.cpus = cpus;
    r.model = make_model(o);
    r.iops = p.iops;
    r.latency_us = p.latency_us;
    r.burst_factor = p.burst_factor;
    r.burst_fraction = p.burst_fraction;
    r.burst_ms = p.burst_ms;
    r.duration = p.duration;
    r.pool = pool_options(r.model);
    return r;
}

// What the reader needs to know to read the figures right.
void add_notes(MrpReport& r) {
    const auto peak = in_flight_at(r.model, r.model.burst_iops);
    if (peak > r.model.per_connection)
        r.base.notes.push_back(fmt("a burst needs %.0f MRs in flight, more than the static share of %u: the static "
                                   "scheme stalls at any N", peak, r.model.per_connection));
    if (r.model.ticks < 100 * r.model.latency_ticks)
        r.base.notes.push_back("runs shorter than 100 I/O latencies: few bursts overlap, the counts are optimistic");
    for (const auto* s : {&r.static_search, &r.pool_search, &r.shared_search})
        if (!s->error.empty()) r.base.notes.push_back(s->scheme + ": " + s->error);
}

bool any_error(const MrpReport& r) { return !r.static_search.error.empty() || !r.pool_search.error.empty(); }

} // namespace

int run_mr_pool(const Options& o) {
    std::string cpus = "all";
    if (!pin(o.cpus, cpus)) return std::cerr << "rpm-bench: cannot pin to --cpus " << cpus << "\n", 2;
    auto report = make_report(o, cpus);
    const auto start = Clock::now();
    report.static_search = search_connections("static", report.model, o.quiet);
    if (!interrupted()) report.pool_search = search_connections("pool", report.model, o.quiet);
    if (!interrupted()) report.shared_search = search_connections("shared", report.model, o.quiet);
    report.pool_search.scheme = "pool";
    report.shared_search.scheme = "shared";
    report.real_seconds = std::chrono::duration<double>(Clock::now() - start).count();
    report.base.interrupted = interrupted();
    add_notes(report);
    return emit_report(o, to_json(report).dump(2), [&](std::ostream& out) { print_text(report, out); },
                       any_error(report), report.base.interrupted);
}

} // namespace rpmbench
