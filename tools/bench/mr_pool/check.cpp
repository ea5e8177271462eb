// --self-check of a --mr-pool report: every field present, the counts of
// each run consistent with each other and with the pool's counters. Never
// a performance figure.
#include "bench.hpp"

namespace rpmbench {
namespace {

using nlohmann::json;
using Problems = std::vector<std::string>;

bool is_count(const json& j, const char* k) { return j.contains(k) && j.at(k).is_number_unsigned(); }

void need_keys(Problems& p, const json& j, const std::string& where, std::initializer_list<const char*> counts,
               std::initializer_list<const char*> numbers) {
    for (const char* k : counts)
        if (!is_count(j, k)) p.push_back(where + ": '" + k + "' missing or not a count");
    for (const char* k : numbers)
        if (!j.contains(k) || !j.at(k).is_number()) p.push_back(where + ": '" + k + "' missing or not a number");
}

// Every successful get is one hit at exactly one level, and a run ends
// with every MR put back.
void check_pool_stats(Problems& p, const json& s, std::uint64_t ios, const std::string& where) {
    need_keys(p, s, where, {"l1_hits", "l2_hits", "global_hits", "none_now", "registered", "in_use"}, {});
    if (!p.empty()) return;
    const auto u = [&](const char* k) { return s.at(k).get<std::uint64_t>(); };
    if (u("l1_hits") + u("l2_hits") + u("global_hits") != ios) p.push_back(where + ": hits do not add up to the I/Os");
    if (u("in_use") != 0) p.push_back(where + ": MRs still in use after the run");
}

void check_run(Problems& p, const json& r, std::uint64_t budget, const std::string& where) {
    need_keys(p, r, where,
              {"connections", "ticks", "arrivals", "ios", "stalled_ios", "waiting_at_end", "peak_in_flight",
               "peak_connection_in_flight", "registered"},
              {"mean_in_flight", "utilisation", "real_seconds", "stall_us", "max_wait_us"});
    for (const char* k : {"admitted", "complete"})
        if (!r.contains(k) || !r.at(k).is_boolean()) p.push_back(where + ": '" + k + "' missing or not a boolean");
    if (!p.empty()) return;
    const auto u = [&](const char* k) { return r.at(k).get<std::uint64_t>(); };
    if (u("registered") > budget) p.push_back(where + ": more MRs registered than the budget");
    if (!r.at("admitted").get<bool>()) return;
    if (u("ios") + u("waiting_at_end") != u("arrivals")) p.push_back(where + ": arrivals != issued + waiting");
    if (u("stalled_ios") > u("arrivals")) p.push_back(where + ": more stalls than arrivals");
    if (u("peak_in_flight") > u("registered")) p.push_back(where + ": more in flight than registered");
    if (r.at("mean_in_flight").get<double>() > static_cast<double>(u("peak_in_flight")) + 1e-9)
        p.push_back(where + ": mean in flight above the peak");
    if (r.contains("pool_stats")) check_pool_stats(p, r.at("pool_stats"), u("ios"), where + ".pool_stats");
}

void check_search(Problems& p, const json& s, std::uint64_t budget, const std::string& where) {
    need_keys(p, s, where, {"max_connections"}, {});
    if (!s.contains("scheme") || !s.at("scheme").is_string()) p.push_back(where + ": 'scheme' missing");
    if (!s.contains("probes") || !s.at("probes").is_array()) p.push_back(where + ": 'probes' missing");
    for (const char* k : {"at_max", "beyond"})
        if (!s.contains(k) || !(s.at(k).is_null() || s.at(k).is_object())) p.push_back(where + ": '" + k + "' missing");
    if (!p.empty()) return;
    for (std::size_t i = 0; i < s.at("probes").size(); ++i)
        check_run(p, s.at("probes")[i], budget, where + ".probes[" + std::to_string(i) + "]");
    const auto max = s.at("max_connections").get<std::uint64_t>();
    if (const auto& a = s.at("at_max"); a.is_object()) {
        check_run(p, a, budget, where + ".at_max");
        if (p.empty() && (a.at("connections") != max || a.at("stalled_ios") != 0 || !a.at("complete").get<bool>()))
            p.push_back(where + ".at_max: not a full stall-free run at max_connections");
    }
    if (const auto& b = s.at("beyond"); b.is_object()) {
        check_run(p, b, budget, where + ".beyond");
        if (p.empty() && b.at("connections") != max + 1) p.push_back(where + ".beyond: not max_connections + 1");
    }
}

void check_headline(Problems& p, const json& h) {
    need_keys(p, h, "headline", {"static", "pool"}, {"target"});
    if (!p.empty()) return;
    if (!h.contains("ratio") || !h.contains("within_target")) return p.push_back("headline: ratio missing");
    const auto& q = h.at("ratio");
    const auto& w = h.at("within_target");
    const bool ok = q.is_null() ? w.is_null()
                                : q.is_number() && w.is_boolean() && w.get<bool>() == (q.get<double>() >= h.at("target").get<double>());
    if (!ok) p.push_back("headline: within_target does not match ratio and target");
}

} // namespace

void check_mr_pool_report(const nlohmann::json& j, std::vector<std::string>& p) {
    for (const char* k : {"units", "machine", "settings", "pool_options", "headline"})
        if (!j.contains(k) || !j.at(k).is_object()) p.push_back(std::string("report: '") + k + "' missing");
    if (!j.contains("schemes") || !j.at("schemes").is_array() || j.at("schemes").size() != 3)
        p.push_back("report: 'schemes' must list static, pool and shared");
    if (!j.contains("command_line") || !j.at("command_line").is_string()) p.push_back("report: 'command_line' missing");
    if (!p.empty()) return;
    need_keys(p, j.at("settings"), "settings", {"budget", "static_per_connection", "tick_us"}, {"iops", "latency_us"});
    if (!p.empty()) return;
    const auto budget = j.at("settings").at("budget").get<std::uint64_t>();
    const char* names[] = {"static", "pool", "shared"};
    for (std::size_t i = 0; i < 3; ++i) {
        const auto& s = j.at("schemes")[i];
        const auto where = "schemes[" + std::to_string(i) + "]";
        check_search(p, s, budget, where);
        if (p.empty() && s.at("scheme") != names[i]) p.push_back(where + ": expected scheme " + names[i]);
    }
    check_headline(p, j.at("headline"));
}

} // namespace rpmbench
