// rpm-floor: what the fabric costs with nothing of rpm above the verbs layer.
//
// issue 17 compares rpm's operations with perftest (ib_read_lat,
// ib_write_lat), but perftest has no pattern for two of them: a write
// followed by an 8-byte read under one doorbell (read_after_write) and a
// write plus a send answered by the server after it persisted the range
// (send_flush), and none for IBTA 1.5's FLUSH behind a write
// (native_flush). rpm-floor posts exactly the work requests rpm's persist
// posts, through the same verbs layer (src/transport/rdma/verbs/), with
// nothing else around them: no protocol, no I/O thread, no bounce copy, no
// completion-mode logic: one thread that busy-polls its completion queue
// (the server likewise). What is left between rpm-bench's figure and
// rpm-floor's for the same pattern in the same VM run is rpm's own cost;
// what is between rpm-floor's and perftest's is the pattern's.
//
// One server serves one client and ends when it disconnects (or at its
// --timeout); the client measures the patterns in rounds and ends. With
// several servers (--connect A,B,C --quorum K) the client posts each
// operation to all of them and the operation is done when K have completed
// it: the floor under rpm's replication (a Replicator's commit to a
// majority), on the same machine the replicas share.
#pragma once

#include "transport/rdma/api.hpp"

#include <rpm/result.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace rpm::floor {

/// The patterns, each one operation of rpm's with its work requests.
enum class Pattern {
    write,             ///< an 8-byte-or-more write, signaled (rpm's write)
    read,              ///< a read, signaled (rpm's read)
    read_after_write,  ///< write unsignaled + 8-byte read signaled, one doorbell
    send_flush,        ///< write unsignaled + send; the server persists and answers
    /// write unsignaled + IBTA FLUSH (persistent, the range) signaled, one
    /// doorbell: rpm's native_flush persist. Needs a device with FLUSH and
    /// a build whose rdma-core has ibv_wr_flush (the trixie lab).
    native_flush,
};
const char* name(Pattern p) noexcept;
Result<Pattern> pattern_from(const std::string& s);

struct ServerOptions {
    std::string addr;             ///< the local RDMA address to listen on
    std::uint16_t port = 7790;
    std::string region;           ///< a PM path (devdax, file); empty: anonymous memory
    std::size_t size = 1 << 20;   ///< bytes of anonymous memory (or of a created file)
    std::chrono::seconds timeout{300};
    /// Sleep on the completion channel when the queue is empty instead of
    /// spinning: the floor of a replica that does not own a CPU (several
    /// servers and the client on the lab VM's two vCPUs, where spinning
    /// servers take the CPUs the others need).
    bool sleep = false;
};

struct Endpoint {
    std::string addr;
    std::uint16_t port = 7790;
};

struct ClientOptions {
    std::vector<Endpoint> servers;  ///< one connection each; at least one
    unsigned quorum = 0;            ///< completions that finish an operation; 0: all servers
    std::vector<Pattern> patterns;
    std::size_t size = 8;
    unsigned ops = 2000;          ///< measured operations per pattern and round
    unsigned warmup = 200;
    unsigned rounds = 3;
    std::chrono::seconds timeout{300};
    /// Calls of distinct small functions per operation, before its post
    /// (calls.hpp): a library's own code, to scale its cost. 0: none.
    unsigned calls = 0;
};

/// One pattern's figures in one round.
struct Figures {
    Pattern pattern{};
    unsigned round = 0;
    std::size_t size = 0;
    unsigned ops = 0;
    unsigned servers = 1, quorum = 1;
    double p50_us = 0, p90_us = 0, p99_us = 0, mean_us = 0;
    double cpu_us_per_op = 0;     ///< the client process's CPU time per operation
    unsigned calls = 0;           ///< ClientOptions::calls
    double calls_alone_us = 0;    ///< those calls' own time, run alone (calls_alone_ns)
};

/// The wire: the server's first message, and a send_flush request/answer.
inline constexpr std::size_t kMsgSize = 64;
inline constexpr std::size_t kMaxSize = 1 << 20;  ///< the largest --size
inline constexpr std::size_t kMaxServers = 16;     ///< the most servers --connect names
inline constexpr std::uint32_t kHelloMagic = 0x72666c72;  // "rflr"
struct FlushRequest {
    std::uint64_t offset;
    std::uint64_t length;
};

/// Serve one client: exits 0 when it disconnected cleanly.
/// ERRORS: errc::rdma_unavailable (no device), errc::io_error (set-up,
/// a failed completion, the timeout), the region's open errors.
Result<void> serve(const ServerOptions& opts);

/// Connect and measure every pattern opts.rounds times, alternating.
Result<std::vector<Figures>> measure(const ClientOptions& opts);

/// Both sides' queues: receives posted (a request or answer in flight at a
/// time, and the hello), send-queue depth, and how often an otherwise
/// unsignaled send is signaled so that its slots are retired.
inline constexpr std::uint32_t kRecvs = 8;
inline constexpr std::uint32_t kSq = 64;
inline constexpr unsigned kSignalEvery = 16;
/// Where the send slot starts in the message buffer: after the receives'.
inline constexpr std::size_t kSendOffset = kRecvs * kMsgSize;

/// The device that has (kContextLocal) or reaches (kContextRemote) `addr`,
/// and a protection domain on it. ERRORS: errc::rdma_unavailable, io_error.
Result<void> open_peer(const rdma::Api& api, const std::string& addr, rdma::ContextType type, rdma::Peer** peer);

/// A connection configuration with kSq, kRecvs and a CQ for both.
Result<void> make_conn_cfg(const rdma::Api& api, rdma::ConnCfg** cfg);

/// Wait (10 s at most) for `conn` to be established. ERRORS: errc::io_error
/// naming the event that came instead.
Result<void> await_established(const rdma::Api& api, rdma::Conn* conn);

/// `slot` as a work request's context (receives carry their slot index).
inline const void* slot_tag(std::uint32_t slot) {
    return reinterpret_cast<const void*>(static_cast<std::uintptr_t>(slot));
}

/// Poll `cq` once for up to n completions into wc, without waiting.
/// RETURN VALUE: how many arrived (0: none), or an error for a failed work
/// completion (its status named) or a failed poll.
Result<int> poll_once(const rdma::Api& api, rdma::Cq* cq, ibv_wc* wc, int n);

/// Busy-poll `cq` for up to n completions into wc, until `deadline`.
/// RETURN VALUE: how many arrived (at least 1), or an error for a failed
/// work completion (its status named) or the deadline.
Result<int> poll_some(const rdma::Api& api, rdma::Cq* cq, ibv_wc* wc, int n,
                      std::chrono::steady_clock::time_point deadline);

} // namespace rpm::floor
