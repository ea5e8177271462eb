// rpm-bench --mr-pool: how many connections a device's MR budget carries
// without a registration stall, statically (a fixed share per connection)
// and through rpm::MrPool, both driven by the same seeded bursty load in
// virtual time (sim.hpp). The figure is the ratio of the two
// counts, found in the same run (docs/benchmarks.md, "MR pool").
#pragma once

#include "sim.hpp"
#include "../report.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace rpmbench {

/// One scheme's search for the largest N that runs without a stall.
struct MrpSearch {
    std::string scheme;
    std::vector<MrpRun> probes;   ///< in the order run; stalled probes stop at their first stall
    std::uint32_t max_connections = 0;
    std::optional<MrpRun> at_max;  ///< the full run at max_connections (zero stalls)
    std::optional<MrpRun> beyond;  ///< the full run at max_connections + 1
    std::string error;             ///< a run could not start (e.g. MrPool::create failed)
};

struct MrpReport {
    Report base;  ///< command line, machine, notes, interrupted
    MrpModel model;
    double iops = 0, latency_us = 0, burst_factor = 0, burst_fraction = 0, burst_ms = 0, duration = 0;
    rpm::MrPoolOptions pool;
    MrpSearch static_search, pool_search, shared_search;
    double real_seconds = 0;
};

/// The headline: pool / static connection counts, target >= 3 (the seed's 54 / 18).
inline constexpr double kMrpTarget = 3.0;
std::optional<double> mrp_ratio(const MrpReport& r);

/// Find the largest N for `scheme_name` ("static", "pool" or "shared"): probes at
/// 1, 2, 4, ... until one stalls or is refused, then bisects (connection
/// i's load does not depend on N, so more connections only add load).
MrpSearch search_connections(const std::string& scheme_name, const MrpModel& m, bool quiet);

// report.cpp, text.cpp
nlohmann::json to_json(const MrpReport& r);
void print_text(const MrpReport& r, std::ostream& out);

/// self_check.cpp hands a "benchmark": "mr_pool" report here.
void check_mr_pool_report(const nlohmann::json& j, std::vector<std::string>& problems);

} // namespace rpmbench
