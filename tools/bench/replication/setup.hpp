// The fixed parts of a --replication run: the replica servers (in-process,
// each with its own /dev/shm pool, or --replica URIs), the primary's local
// pool, the baseline's own connection to replica 0, and the configurations.
//
// Layout of every replica region: the Replicator's 4 KiB header, then its
// data area of `area` bytes (the local region has exactly these), then
// `area` bytes that only the single-replica baselines write, so a baseline
// never touches bytes the Replicator owns.
#pragma once

#include "../local_server.hpp"
#include "../options.hpp"
#include "replication.hpp"

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace rpmbench {

/// What the Replicators of the run reported through on_event.
class EventLog {
public:
    void record(const rpm::ReplicaEvent& e);
    [[nodiscard]] std::uint64_t left() const;
    [[nodiscard]] std::vector<std::string> errors() const;

private:
    mutable std::mutex mu_;
    std::uint64_t left_ = 0;
    std::vector<std::string> lines_;
};

class RepSetup {
public:
    /// Pin, start or reach the servers, fill the report's set-up fields.
    static std::unique_ptr<RepSetup> create(const Options& o, ReplicationReport& report, std::string& error);
    ~RepSetup();
    RepSetup(const RepSetup&) = delete;
    RepSetup& operator=(const RepSetup&) = delete;

    /// A Replicator over the first cfg.replicas servers.
    rpm::Result<rpm::Replicator> open(const RepConfig& cfg);
    /// Close the baseline connection, stop the servers, remove the pools.
    void close();

    std::vector<std::string> uris;
    /// The single-replica baselines' region: replica 0, over a connection of its own.
    rpm::RemoteRegion& single() { return *single_; }
    std::shared_ptr<EventLog> events = std::make_shared<EventLog>();

private:
    RepSetup() = default;
    bool start_local(const Options& o, unsigned count, std::string& error);
    bool probe(ReplicationReport& report, std::string& error);

    std::vector<std::unique_ptr<LocalServer>> local_;
    std::string region_;
    rpm::ClientOptions client_;
    std::optional<rpm::Connection> conn_;
    std::optional<rpm::RemoteRegion> single_;
    std::filesystem::path local_path_;
    std::uint64_t area_ = 0;
};

std::uint64_t stride_of(std::size_t size);
/// Payload slots per test: the batch's writes (at least 1).
unsigned slots_of(const Options& o);
/// The data area the tests use, rounded up to whole MiB.
std::uint64_t area_of(const Options& o);

/// The configurations of --replicas x --durability that the servers at
/// hand can meet; the others go to `skipped`.
std::vector<RepConfig> make_configs(const Options& o, std::size_t servers, std::vector<Skipped>& skipped);
/// "replicas=3 majority-local (2 of 3 members)".
std::string describe(const RepConfig& c);
/// Empty when every replica is live, else which are not.
std::string not_live(const rpm::Replicator& rep);

} // namespace rpmbench
