// The commands of rpm-kvstore (main.cpp parses the command line).
// Exit status of every command: 0 success; 1 nothing there ("not found",
// or verify found acknowledged puts lost); 2 bad input (flags, files, keys);
// 3 the store could not do it (open failed, quorum lost, log or index full).
#pragma once

#include "kv_store.hpp"

#include <rpm/server.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvcli {

inline constexpr const char* kRegionName = "kv";  // the region every replica serves

struct ReplicaArgs {
    std::string listen, region, size = "64M", client = "kvstore:kvstore", port_file, fence_dir;
};

struct PrimaryArgs {
    std::string local;
    std::string size = "64M";
    std::vector<std::string> replicas;
    std::string durability = "majority";
    std::string id = "kvstore", secret = "kvstore";
    int heartbeat_ms = 100, failure_timeout_ms = 1000, reconnect_ms = 500;
    int dial_timeout_ms = 0, degraded_ms = 0;  ///< 0: the replicator's defaults
    std::uint64_t fencing_term = 0;  ///< --fencing-term (0: none)
};

inline constexpr unsigned kMaxPipeline = 1024;

struct LoadArgs {
    std::uint64_t count = 0;
    std::string acked;
    std::uint64_t run = 1;
    std::string fault;  ///< "" or "ack-before-quorum"
    /// client load --pipeline: SETs written before their replies are read
    /// (1: one at a time); kMaxPipeline at most.
    unsigned pipeline = 1;
    /// primary load --timeline: a file appended "<steady-clock ns at the ack>
    /// <latency ns>" per acknowledged put ("" = none).
    std::string timeline;
};

/// Print "rpm-kvstore: MSG" on stderr and return `status`.
int fail(const std::string& msg, int status = 2);
/// "64M", "1G", "65536" -> bytes; nullopt on junk.
std::optional<std::uint64_t> parse_size(const std::string& s);

/// The server a replica (or a node that does not lead) runs: region "kv"
/// from --region, created with --size when missing.
/// ERRORS: errc::invalid_argument (--client, --size).
rpm::Result<rpm::ServerOptions> replica_server_options(const ReplicaArgs& a);
/// The replicator a primary opens (replica events printed on stderr).
/// ERRORS: errc::invalid_argument (--size, --durability).
rpm::Result<rpm::ReplicatorOptions> replicator_options(const PrimaryArgs& a);

/// Open (creating the local file if missing) and print what recovery did.
/// nullptr after printing why, with the exit status in `status`.
std::unique_ptr<kv::Store> open_primary(const PrimaryArgs& a, int& status);

/// Replica events printed so far (they arrive on the replicator's thread).
unsigned events_seen() noexcept;

/// The keys and values load puts: k<RUN>-<I>, 32..79 bytes that follow from the key.
std::string load_key(std::uint64_t run, std::uint64_t i);
std::string load_value(std::uint64_t run, std::uint64_t i);
/// The value load put under `key`; nullopt for a key load does not make.
std::optional<std::string> expected_value(std::string_view key);
/// One write(2) of "KEY\n" to an O_APPEND file: a killed process leaves whole lines.
bool log_acked(int fd, const std::string& key);
using Lookup = std::function<std::optional<std::string>(const std::string&)>;
/// Check every key of an acked file with `lookup`; 0 when none is lost.
int verify_with(const std::string& acked, const Lookup& lookup);

int put(kv::Store& s, const std::string& key, const std::string& value);
int get(const kv::Store& s, const std::string& key);
int remove(kv::Store& s, const std::string& key);
/// A replica's health for stats, status and load: "degraded, " when it
/// is, its round trips' p50/p90/max, its lag in LSNs and bytes, and how
/// often it was degraded.
std::string health(const rpm::ReplicaStatus& r);
int stats(const kv::Store& s);
int shell(kv::Store& s);
int dump(const kv::Store& s);
int load(kv::Store& s, const LoadArgs& a);
int verify(const kv::Store& s, const std::string& acked);
/// `offline --region PATH dump | verify --acked FILE`: no replicator, no network.
int offline(const std::string& region, const std::optional<std::string>& acked);

} // namespace kvcli
