// The client-facing side of an rpm-kvstore node: RESP2 (resp.hpp) over TCP,
// on one thread, with group commit.
//
// Every command runs on the service's one I/O thread, so the store behind
// the Handler is never touched by two threads. Writes are not committed one
// by one: each connection's readable commands are executed (a put appends
// to the log without committing), and one commit after everything that was
// ready covers them all; only then are the replies of those connections
// sent, and those of connections that only read meanwhile (a read may have
// seen a write not yet committed). A put is acknowledged only after a commit that covers it succeeded,
// and a client that pipelines never sees a reply before the ones before it.
//
// Bounded per peer: at most max_connections at once (more are closed at
// accept), a connection's unparsed input at most one command (two bulk
// strings at the limit, and their headers), and its replies at most those
// of one read's commands (it is not read again until they are written).
#pragma once

#include "resp.hpp"

#include <rpm/result.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace kvnode {

class Handler {
public:
    virtual ~Handler() = default;
    /// Execute one command and append its reply to `out`. Return true when
    /// the reply holds only once a commit covers what the command wrote.
    virtual bool execute(const std::vector<std::string>& args, std::string& out) = 0;
    /// A hint, before execute: the service parses every whole command of a
    /// read first and offers each here, so their memory loads can start
    /// together (Store::prefetch). Must not change anything.
    virtual void prefetch(const std::vector<std::string>&) {}
    /// Make every write executed so far durable. On error, every reply that
    /// waited for it is replaced by this error (a RESP error line).
    virtual rpm::Result<void> commit() = 0;
    /// The error reply (without '-') for a failed commit.
    virtual std::string commit_error(const rpm::Error& e) = 0;
    /// Tests only (node --fault ack-before-commit): true sends the replies
    /// that wait for a commit before it runs, so they stay +OK whether or
    /// not it holds: the planted bug the failover test's control must catch.
    virtual bool replies_before_commit() { return false; }
};

struct ServiceLimits {
    unsigned max_connections = 128;
    /// MSET and MGET take many keys (redis-benchmark's MSET: 10 pairs);
    /// a command's bytes stay bounded by two bulk strings at the limit.
    resp::Limits resp{1024, 1u << 20, 64u << 10, 2};
};

/// What the service did since it started: how well group commit groups.
/// Read on the service's thread only (a command's execute, or run()).
struct ServiceStats {
    std::uint64_t reads = 0;          ///< passes over a connection's input
    std::uint64_t commands = 0;       ///< commands executed
    std::uint64_t commits = 0;        ///< Handler::commit calls
    std::uint64_t covered = 0;        ///< replies those commits covered
    std::uint64_t commit_conns = 0;   ///< connections those commits answered
    std::uint64_t commit_ns = 0;      ///< wall time inside Handler::commit
};

class Service {
public:
    /// Listen on HOST:PORT (port 0: any; port() tells) and serve on a new
    /// thread. ERRORS: errc::invalid_argument (not HOST:PORT);
    /// errc::io_error (cannot bind).
    static rpm::Result<std::unique_ptr<Service>> start(const std::string& addr, Handler& handler,
                                                       ServiceLimits limits = {});
    ~Service();  ///< closes every connection and joins the thread

    [[nodiscard]] std::uint16_t port() const noexcept;
    /// The counters so far; on the service's thread only (ServiceStats).
    [[nodiscard]] const ServiceStats& stats() const noexcept;
    /// Run `fn` on the service's thread and wait for it (role changes:
    /// nothing else touches the handler's store meanwhile).
    void run(const std::function<void()>& fn);

    struct Impl;

private:
    explicit Service(std::unique_ptr<Impl> impl) noexcept;
    std::unique_ptr<Impl> impl_;
};

/// "HOST:PORT" -> host and port; false on anything else.
bool split_host_port(const std::string& addr, std::string& host, std::uint16_t& port);

} // namespace kvnode
