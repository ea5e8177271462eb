// The --mr-pool table: every run of both searches, then the headline.
#include "bench.hpp"
#include "../text_format.hpp"

#include <algorithm>

namespace rpmbench {
namespace {

void print_header(const MrpReport& r, std::ostream& out) {
    const auto& m = r.model;
    const auto& b = r.base;
    out << "rpm-bench --mr-pool: connections a budget of " << m.budget
        << " MRs carries without a registration stall (virtual time)\n"
        << fmt("load per connection: %.0f IOPS mean, %.0f us per I/O (%.1f in flight on average); bursts %.0f %% of "
               "the time at %.1fx (%llu IOPS, %.0f in flight), %.1f ms long on average; between bursts %llu IOPS\n",
               r.iops, r.latency_us, r.iops * r.latency_us / 1e6, r.burst_fraction * 100, r.burst_factor,
               static_cast<unsigned long long>(m.burst_iops), in_flight_at(m, m.burst_iops), r.burst_ms,
               static_cast<unsigned long long>(m.quiet_iops))
        << fmt("each run: %.3g virtual seconds in ticks of %u us, seed %llu\n", r.duration, m.tick_us,
               static_cast<unsigned long long>(m.seed))
        << "machine: " << b.nproc << " CPUs, " << b.cpu_model << ", Linux " << b.kernel << "; pinned to CPUs " << b.cpus
        << "\n\n";
}

void print_run(const MrpModel& m, const MrpRun& r, const char* what, std::ostream& out) {
    if (!r.admitted) {
        out << fmt("  %-8s %5u  admission refused (%u MRs registered)\n", what, r.connections, r.registered);
        return;
    }
    out << fmt("  %-8s %5u %10llu %9llu %9.0f %8.1f %6llu %6llu %6u %6.2f %7.2f\n", what, r.connections,
               static_cast<unsigned long long>(r.ios), static_cast<unsigned long long>(r.stalled_ios),
               static_cast<double>(r.max_wait_ticks) * m.tick_us, r.mean_in_flight,
               static_cast<unsigned long long>(r.peak_in_flight),
               static_cast<unsigned long long>(r.peak_connection_in_flight), r.registered,
               r.registered ? r.mean_in_flight / r.registered : 0.0, r.real_seconds);
}

void print_stats(const rpm::MrPoolStats& s, std::ostream& out) {
    out << fmt("  pool counters at that N: hits L1 %llu, L2 %llu, global %llu; none now %llu; L2 reclaims %llu, "
               "L1 trims %llu\n",
               static_cast<unsigned long long>(s.l1_hits), static_cast<unsigned long long>(s.l2_hits),
               static_cast<unsigned long long>(s.global_hits), static_cast<unsigned long long>(s.none_now),
               static_cast<unsigned long long>(s.l2_reclaims), static_cast<unsigned long long>(s.l1_trims));
}

// Where the MRs were when N+1 first stalled: in flight, or parked where
// the stalled connection could not reach them.
void print_first_stall(const MrpModel& m, const MrpRun& r, std::ostream& out) {
    if (!r.first_stall_tick) return;
    out << fmt("  N+1 first stalled at %.3f virtual s with %llu of %u MRs in flight", static_cast<double>(*r.first_stall_tick) * m.tick_us / 1e6,
               static_cast<unsigned long long>(r.first_stall_in_flight), r.registered);
    if (const auto& s = r.first_stall_stats) {
        const auto l1 = s->registered - std::min(s->registered, s->in_use + s->free_l2 + s->free_global);
        out << fmt("; free then: %u in L1s, %u in L2 buckets, %u global", l1, s->free_l2, s->free_global);
    }
    out << "\n";
}

void print_search(const MrpReport& r, const MrpSearch& s, const std::string& title, std::ostream& out) {
    out << title << "\n"
        << fmt("  %-8s %5s %10s %9s %9s %8s %6s %6s %6s %6s %7s\n", "run", "N", "I/Os", "stalled", "max wait",
               "in fl.", "peak", "conn", "regd", "util", "real s");
    for (const auto& p : s.probes) print_run(r.model, p, p.complete || !p.admitted ? "probe" : "probe*", out);
    if (s.beyond) print_run(r.model, *s.beyond, "N+1", out);
    out << "  (max wait in virtual us; probe*: stopped at its first stall)\n";
    out << "  largest N without a stall: " << s.max_connections << "\n";
    if (s.at_max && s.at_max->stats) print_stats(*s.at_max->stats, out);
    if (s.beyond) print_first_stall(r.model, *s.beyond, out);
    if (!s.error.empty()) out << "  error: " << s.error << "\n";
    out << "\n";
}

} // namespace

void print_text(const MrpReport& r, std::ostream& out) {
    print_header(r, out);
    print_search(r, r.static_search,
                 fmt("static: %u MRs per connection, registered at admission (admission needs them free)",
                     r.model.per_connection), out);
    print_search(r, r.pool_search,
                 fmt("pool: rpm::MrPool, all %u MRs registered at create; L1 %u per connection, %u L2 buckets of %u",
                     r.pool.budget, r.pool.l1_entries, r.pool.l2_buckets, r.pool.l2_entries), out);
    print_search(r, r.shared_search,
                 fmt("shared (the bound): one free list of all %u MRs, no caches", r.model.budget), out);
    const auto q = mrp_ratio(r);
    out << fmt("headline: pool / static connections = %u / %u = ", r.pool_search.max_connections,
               r.static_search.max_connections)
        << (q ? fmt("%.2f (target >= %.0f: %s)\n", *q, kMrpTarget, *q >= kMrpTarget ? "met" : "missed")
              : std::string("n/a\n"));
    const auto shared = r.shared_search.max_connections;
    if (r.static_search.max_connections > 0)
        out << fmt("bound: one free list shared by all carries %u connections, %.2f x static; the pool reaches %.0f %% "
                   "of it\n", shared, static_cast<double>(shared) / r.static_search.max_connections,
                   shared ? 100.0 * r.pool_search.max_connections / shared : 0.0);
    for (const auto& n : r.base.notes) out << "note: " << n << "\n";
    if (r.base.interrupted) out << "interrupted: the results above are partial\n";
}

} // namespace rpmbench
