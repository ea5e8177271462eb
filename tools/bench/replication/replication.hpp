// rpm-bench --replication: rpm::Replicator commits against 1..N replicas
// under each durability policy, quoted as ratios to a single-replica
// RemoteRegion::persist of the same size on one of the same servers,
// measured in the same run in slices that alternate with the replicated
// ones (docs/benchmarks-history.md, "Replication").
//
// Two tests per configuration and size, both through the synchronous API
// (qd 1, one thread: Replicator has no other):
// - persist: write + commit of one payload; latency per commit.
// - batch:   W writes + one commit (--batch W); commits/s and MB/s.
// Their baselines: single_persist (RemoteRegion::persist, sync) and
// single_batch (W async writes + one synchronous flush), both on replica 0's
// server over a connection of their own, and the plain TCP round trip of
// the same size when the transport is tcp://, and the plain TCP fan-out
// (the request on as many connections as there are replicas, done when as
// many answered as the policy needs from them): what the same fan-out costs
// over the cheapest sockets, so commit / single-replica can be read against
// fan-out / round trip, the floor of the machine and set-up.
#pragma once

#include "../measure.hpp"
#include "../progress.hpp"
#include "../report.hpp"

#include <rpm/client.hpp>
#include <rpm/replication.hpp>

#include <nlohmann/json.hpp>

#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace rpmbench {

/// persist: Replicator::persist; log: ReplicatedLog::append_durable (--log,
/// in its place); batch: W writes + commit.
enum class RepTest { persist, log, batch };
std::string_view to_string(RepTest t) noexcept;

/// One replicated configuration: the first `replicas` servers, a policy.
struct RepConfig {
    unsigned replicas = 1;
    std::string name;  ///< as given on the command line, e.g. "majority-local"
    rpm::Durability durability;
    unsigned members = 0, needed = 0;  ///< as the policy counts them
};

/// Where a test's bytes go: `slots` payloads of `size` bytes, `stride`
/// apart from `base` (the persist test cycles through them, a batch writes
/// them all).
struct SliceSpec {
    std::size_t size = 64;
    unsigned writes = 1;  ///< per commit (1 = persist)
    std::uint64_t base = 0, stride = 64;
    unsigned slots = 1;
    bool log = false;  ///< append_durable records of `size` bytes (the data area is the log)
};

struct RepResult {
    RepTest test = RepTest::persist;
    RepConfig config;
    std::size_t size = 0;
    unsigned writes_per_commit = 1;
    Measurement m;                  ///< ops = commits, bytes = payload bytes committed
    std::string single_baseline;    ///< Baseline::id of single_persist / single_batch
    std::string round_trip_baseline;  ///< Baseline::id of tcp_round_trip (persist, tcp:// only) or empty
    /// Baseline::id of tcp_fanout_round_trip to this many replicas awaiting
    /// as many answers as the policy needs from them (persist, tcp://, 2+
    /// replicas) or empty: the same fan-out over the cheapest sockets.
    std::string fanout_baseline;
    std::string methods;            ///< the replicas' flush methods, e.g. "send_flush,send_flush"
    std::uint64_t replica_failures = 0;  ///< members that left during this test's slices
};

struct RepServer {
    std::string uri;
    RegionInfo region;
};

struct ReplicationReport {
    Report base;  ///< machine, settings, baselines[], skipped, notes, interrupted (results unused)
    std::vector<RepServer> servers;
    std::string local_path, local_kind;
    std::uint64_t local_size = 0;   ///< the primary's region, header included
    std::uint64_t single_offset = 0;  ///< where the single-replica baselines write in replica 0's region
    unsigned batch = 0;
    std::vector<RepResult> results;
};

/// The figure issue 5 targets: majority-of-3 commit p50 over single-replica
/// persist p50, per size (nullopt ratio when either side is missing).
struct Headline {
    std::size_t size = 0;
    std::string durability;
    std::uint64_t commit_p50_ns = 0, single_p50_ns = 0;
    std::optional<double> ratio;
    /// The same fan-out over plain sockets / the plain round trip (tcp://):
    /// what this machine and set-up charge for fanning out at all.
    std::optional<double> plain_ratio;
};
inline constexpr double kHeadlineTarget = 1.3;
std::vector<Headline> headlines(const ReplicationReport& r);

/// Replicated / single ratios of one result.
struct RepRatios {
    std::optional<double> mean, p50, p99, p999, throughput;  ///< to the single-replica baseline
    std::optional<double> rt_p50;                            ///< p50 to the TCP round trip
    std::optional<double> fanout_p50;                        ///< p50 to the TCP fan-out round trip
};
RepRatios rep_ratios(const ReplicationReport& r, const RepResult& res);

// drive.cpp: one measured slice each.
Measurement replicated_slice(rpm::Replicator& rep, const SliceSpec& spec, const StopRule& stop, Progress& progress,
                             const std::string& label);
Measurement single_slice(rpm::RemoteRegion& region, const SliceSpec& spec, const StopRule& stop, Progress& progress,
                         const std::string& label);

// report.cpp
nlohmann::json to_json(const ReplicationReport& r);
void print_text(const ReplicationReport& r, std::ostream& out);

/// self_check.cpp: the checks of a --replication report (top level known
/// to be an object from rpm-bench).
void check_replication_report(const nlohmann::json& j, std::vector<std::string>& problems);

} // namespace rpmbench
