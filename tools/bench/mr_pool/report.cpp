// The --mr-pool report as JSON: the model, the pool's options, each
// scheme's search and the headline ratio.
#include "bench.hpp"

#include <algorithm>

namespace rpmbench {
namespace {

using nlohmann::json;

double us_of(const MrpModel& m, std::uint64_t ticks) { return static_cast<double>(ticks) * m.tick_us; }

json stats_json(const rpm::MrPoolStats& s) {
    return {{"l1_hits", s.l1_hits},
            {"l2_hits", s.l2_hits},
            {"global_hits", s.global_hits},
            {"none_now", s.none_now},
            {"stalls_avoided", s.stalls_avoided},
            {"registrations", s.registrations},
            {"registration_failures", s.registration_failures},
            {"deregistrations", s.deregistrations},
            {"l2_reclaims", s.l2_reclaims},
            {"l1_trims", s.l1_trims},
            {"idle_deregistered", s.idle_deregistered},
            {"monitor_rounds", s.monitor_rounds},
            {"registered", s.registered},
            {"free_global", s.free_global},
            {"free_l2", s.free_l2},
            {"in_use", s.in_use},
            {"users", s.users}};
}

json run_json(const MrpModel& m, const MrpRun& r) {
    json j = {{"connections", r.connections},
              {"admitted", r.admitted},
              {"complete", r.complete},
              {"ticks", r.ticks},
              {"virtual_seconds", us_of(m, r.ticks) / 1e6},
              {"arrivals", r.arrivals},
              {"ios", r.ios},
              {"stalled_ios", r.stalled_ios},
              {"stall_us", us_of(m, r.stall_ticks)},
              {"max_wait_us", us_of(m, r.max_wait_ticks)},
              {"waiting_at_end", r.waiting_at_end},
              {"mean_in_flight", r.mean_in_flight},
              {"peak_in_flight", r.peak_in_flight},
              {"peak_connection_in_flight", r.peak_connection_in_flight},
              {"registered", r.registered},
              {"utilisation", r.registered ? r.mean_in_flight / r.registered : 0.0},
              {"budget_utilisation", r.mean_in_flight / m.budget},
              {"real_seconds", r.real_seconds}};
    if (r.stats) j["pool_stats"] = stats_json(*r.stats);
    if (r.first_stall_tick) {
        j["first_stall"] = {{"virtual_us", us_of(m, *r.first_stall_tick)}, {"in_flight", r.first_stall_in_flight}};
        if (const auto& s = r.first_stall_stats) {
            const auto parked = s->registered - std::min(s->registered, s->in_use + s->free_l2 + s->free_global);
            j["first_stall"]["pool"] = {{"in_use", s->in_use}, {"free_global", s->free_global},
                                        {"free_l2", s->free_l2}, {"free_l1", parked}};
        }
    }
    return j;
}

json search_json(const MrpModel& m, const MrpSearch& s) {
    json j = {{"scheme", s.scheme}, {"max_connections", s.max_connections}, {"probes", json::array()}};
    for (const auto& p : s.probes) j["probes"].push_back(run_json(m, p));
    j["at_max"] = s.at_max ? run_json(m, *s.at_max) : json(nullptr);
    j["beyond"] = s.beyond ? run_json(m, *s.beyond) : json(nullptr);
    if (!s.error.empty()) j["error"] = s.error;
    return j;
}

json settings_json(const MrpReport& r) {
    const auto& m = r.model;
    return {{"iops", r.iops},
            {"latency_us", r.latency_us},
            {"burst_factor", r.burst_factor},
            {"burst_fraction", r.burst_fraction},
            {"burst_ms", r.burst_ms},
            {"duration_s", r.duration},
            {"tick_us", m.tick_us},
            {"seed", m.seed},
            {"budget", m.budget},
            {"static_per_connection", m.per_connection},
            {"burst_iops", m.burst_iops},
            {"quiet_iops", m.quiet_iops},
            {"burst_in_flight", in_flight_at(m, m.burst_iops)},
            {"mean_in_flight", r.iops * r.latency_us / 1e6}};
}

json pool_json(const rpm::MrPoolOptions& p) {
    return {{"buffer_size", p.buffer_size},         {"budget", p.budget},
            {"initial", p.initial},                 {"floor", p.floor},
            {"low_water", p.low_water},             {"replenish_batch", p.replenish_batch},
            {"l1_entries", p.l1_entries},           {"l2_buckets", p.l2_buckets},
            {"l2_entries", p.l2_entries},           {"idle_time_ms", p.idle_time.count()},
            {"monitor_interval_us", p.monitor_interval.count()}};
}

json headline_json(const MrpReport& r) {
    const auto q = mrp_ratio(r);
    return {{"figure", "connections without a registration stall: pool / static (same budget, load and seed)"},
            {"static", r.static_search.max_connections},
            {"pool", r.pool_search.max_connections},
            {"ratio", q ? json(*q) : json(nullptr)},
            {"target", kMrpTarget},
            {"within_target", q ? json(*q >= kMrpTarget) : json(nullptr)},
            {"shared_bound", r.shared_search.max_connections},
            {"seed_claim", {{"static", 18}, {"pool", 54}}}};
}

} // namespace

std::optional<double> mrp_ratio(const MrpReport& r) {
    if (r.static_search.max_connections == 0 || r.base.interrupted) return std::nullopt;
    return static_cast<double>(r.pool_search.max_connections) / r.static_search.max_connections;
}

json to_json(const MrpReport& r) {
    const auto& b = r.base;
    json j;
    j["tool"] = "rpm-bench";
    j["benchmark"] = "mr_pool";
    j["command_line"] = b.command_line;
    j["units"] = {{"time", "virtual: ticks of tick_us microseconds; *_us are virtual microseconds"},
                  {"real_seconds", "wall-clock seconds the simulation took"},
                  {"utilisation", "mean MRs in flight / MRs registered"},
                  {"budget_utilisation", "mean MRs in flight / budget"}};
    j["machine"] = {{"nproc", b.nproc}, {"cpu_model", b.cpu_model}, {"kernel", b.kernel}, {"pinned_to_cpus", b.cpus}};
    j["mode"] = b.mode;
    j["settings"] = settings_json(r);
    j["pool_options"] = pool_json(r.pool);
    j["schemes"] = {search_json(r.model, r.static_search), search_json(r.model, r.pool_search),
                    search_json(r.model, r.shared_search)};
    j["headline"] = headline_json(r);
    j["real_seconds"] = r.real_seconds;
    j["notes"] = b.notes;
    j["interrupted"] = b.interrupted;
    return j;
}

} // namespace rpmbench
