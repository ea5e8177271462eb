// Everything one run measured, and its two renderings: a table for people
// and JSON for programs. Ratios are computed here, from the baselines of the
// same run, so both renderings quote the same figures.
#pragma once

#include "measure.hpp"
#include "rpm_driver.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace rpmbench {

struct Baseline {
    std::string id;    ///< "tcp_round_trip/req=64/rep=16/qd=1/t=1/test3", "tcp_stream/msg=1048576/opening", ...
    std::string kind;  ///< tcp_round_trip, tcp_stream, rdma_read_round_trip, rdma_write_stream
    std::size_t request_bytes = 0, reply_bytes = 0;
    unsigned qd = 1, threads = 1;
    unsigned fanout = 1, quorum = 1;  ///< tcp_fanout_round_trip: connections per operation, answers awaited
    std::string path;  ///< "loopback (in-process echo server)", or the external baseline server
    std::optional<Measurement> m;
    std::string unavailable;  ///< why m is empty
};

struct TestResult {
    OpSpec spec;
    unsigned threads = 1;
    std::string method;         ///< the region's flush method for this test
    std::string method_choice;  ///< decided, forced, forced_unsafe
    std::string server_persist;
    Measurement m;
    std::string latency_baseline;    ///< Baseline::id
    std::string bandwidth_baseline;  ///< Baseline::id
};

struct Skipped {
    std::string what;
    std::string reason;
};

struct RegionInfo {
    std::string name, method, server_persist, domain, reason;
    std::uint64_t size = 0;
};

struct Report {
    std::string command_line;
    std::string mode;  ///< in-process or external
    std::string uri, transport;
    RegionInfo region;
    std::string cpu_model, kernel;
    unsigned nproc = 0;
    std::string cpus = "all";  ///< the CPUs the run was pinned to
    double duration = 0, warmup = 0;
    std::uint64_t ops_limit = 0;
    unsigned rounds = 1;
    std::string completion = "adaptive";  ///< --completion (rdma://)
    std::vector<Baseline> baselines;
    std::vector<TestResult> results;
    std::vector<Skipped> skipped;
    std::vector<std::string> notes;
    bool interrupted = false;

    [[nodiscard]] const Baseline* baseline(const std::string& id) const;
};

/// Result / baseline ratios (nullopt when the baseline is unavailable).
struct Ratios {
    std::optional<double> mean, p50, p99, p999, bandwidth;
};
Ratios ratios(const Report& r, const TestResult& res);

nlohmann::json to_json(const Report& r);
/// The JSON of one measurement (streams: without latency) and of one
/// baseline, shared with the --replication report.
nlohmann::json measurement_json(const Measurement& m, bool with_latency = true);
nlohmann::json baseline_json(const Baseline& b);
void print_text(const Report& r, std::ostream& out);

/// Check that `text` is JSON rpm-bench would accept from itself: every
/// field present with the right type and sane values. Empty = fine.
std::vector<std::string> self_check(const std::string& text);

/// Print a report (JSON with --json, else the table), write --output, run
/// --self-check. RETURN VALUE: the exit status: 130 when interrupted, 1 when
/// any operation failed, the output could not be written or the check
/// failed, else 0.
struct Options;
int emit_report(const Options& o, const std::string& json_text, const std::function<void(std::ostream&)>& print,
                bool any_errors, bool interrupted);

} // namespace rpmbench
