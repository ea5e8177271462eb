// rpm::Server: serves persistent-memory regions to authenticated clients
// over tcp:// and rdma://. Each region is granted only to the clients named
// for it; every write is bounds-checked against the granted region; a flush
// runs the persist step the region's platform needs (docs/flush-methods.md).
#pragma once

#include <rpm/export.hpp>
#include <rpm/completion.hpp>
#include <rpm/flush.hpp>
#include <rpm/persistence.hpp>
#include <rpm/pmem.hpp>
#include <rpm/result.hpp>
#include <rpm/transport.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

RPM_API_BEGIN

namespace rpm {

/// One region a server offers, as configured (ServerOptions::regions); what
/// the server then decided for it is its RegionReport. The client's side of
/// a replicated region is ReplicaSpec (include/rpm/replication.hpp).
struct RegionSpec {
    std::string name;                ///< what clients ask for (1..255 bytes)
    std::filesystem::path path;      ///< devdax device, DAX file, regular or tmpfs file
    std::size_t size = 0;            ///< with create: the size to create; else 0 = whole file
    bool create = false;
    std::set<std::string> clients;   ///< client ids allowed; empty = every authenticated client
};

struct TlsOptions {
    std::filesystem::path certificate;  ///< PEM certificate chain
    std::filesystem::path private_key;  ///< PEM key
};

struct ServerOptions {
    /// "tcp://127.0.0.1:7000", "rdma://192.168.1.5:7001"; port 0 picks a free one.
    std::vector<std::string> listen;
    /// client id -> shared secret. The secret never crosses the wire.
    std::map<std::string, std::string> secrets;
    std::vector<RegionSpec> regions;
    /// Where each region's fencing term is kept (docs/replication.md,
    /// "Fencing"): `<fence_dir>/<name>.fence`. Unset: `<path>.fence` beside
    /// a region that is a regular file; a device region (devdax) then
    /// cannot be fenced, and an open with a fencing term gets
    /// errc::unsupported.
    /// Must be an existing directory.
    std::optional<std::filesystem::path> fence_dir;
    /// Who may fence (docs/replication.md, "Fencing"): the client ids that
    /// may open a region with a nonzero fencing term
    /// (RegionOptions::fencing_term, ReplicatorOptions::fencing_term).
    /// Another client's open with one is refused with
    /// errc::permission_denied; an open with fencing term 0 is not
    /// affected (it is refused with errc::fenced on a region that has one,
    /// whoever asks). Unset (the default, as before this option): every
    /// client a region is granted to may fence it. That is safe together
    /// with max_fencing_term_step: a client granted a region can already
    /// overwrite all of its data, so a fencing term gives it no new power
    /// over the data, and as one cannot jump far ahead, a buggy client (a
    /// random number as its fencing term) cannot lock the region out for
    /// good. Set it
    /// where only the primaries (the coordinator's nodes) may revoke the
    /// other clients' sessions. An empty set: nobody may fence.
    /// Each id must be one of `secrets` (Server::start:
    /// errc::invalid_argument).
    std::optional<std::set<std::string>> fencers;
    /// How far above a region's current fencing term a new one may be: a
    /// larger jump is refused with errc::invalid_argument, nothing kept and
    /// no session revoked. Fencing terms are etcd revisions
    /// (rpm::Coordinator), which grow by one per write to etcd: 2^40
    /// between two elections of one group would take 35 years at 1000
    /// writes/s, while a random 64-bit number passes with probability
    /// 2^-24, and 2^64-1 never does from a small current one. Without the
    /// bound, such a fencing term would be kept and every later primary
    /// refused until the fence file is reset (`rpm-server reset-term`).
    /// Must be positive (Server::start: errc::invalid_argument).
    std::uint64_t max_fencing_term_step = std::uint64_t{1} << 40;
    std::filesystem::path sysfs_root = "/";
    std::optional<std::filesystem::path> config;  ///< overrides file (else $RPM_CONFIG)
    std::optional<TlsOptions> tls;                ///< TLS for tcp:// listeners
    std::uint32_t max_payload = (1u << 20) + 4096;
    /// I/O threads of each tcp:// listener; sessions are spread over them
    /// (each session stays on one, so its requests keep their order).
    /// 0 = one per CPU the process may run on.
    unsigned io_threads = 0;
    /// rdma://: how each session's thread waits for completions
    /// (include/rpm/completion.hpp; docs/rdma.md, "Completion modes").
    CompletionMode completion = CompletionMode::adaptive;
    /// Connection limits of each listener (docs/protocol.md, "Limits"), so
    /// that no peer can make the server hold connections without bound.
    /// A connection that has not authenticated within handshake_timeout is
    /// closed; authenticated ones may idle (that is the application's call)
    /// but count towards max_connections. Past max_connections, or past
    /// max_unauthenticated_per_address connections from one address still
    /// in their handshake, a new connection is closed as it is accepted
    /// (rdma://: its request rejected; the per-address bound is tcp://'s
    /// only: the rdma:// listener does not yet pass the address rdma_cm
    /// reports in the connection request to this check).
    /// Each must be positive (Server::start: errc::invalid_argument).
    std::chrono::milliseconds handshake_timeout{10000};
    std::size_t max_connections = 1024;
    std::size_t max_unauthenticated_per_address = 32;
    /// Answer bytes queued on one tcp:// connection and not yet taken by its
    /// client. Past it the server reads no more of that connection's
    /// requests until the client reads its answers (backpressure): a client
    /// that never reads holds at most this much (plus one frame) of the
    /// server's memory. Must be positive.
    std::size_t max_queued_answer_bytes = 4u << 20;
    /// Told why the server refused or closed a connection under the limits
    /// above (on a server thread; at most one line per second of each kind).
    /// Empty: the lines go to the library's log at warning level (include/rpm/log.hpp:
    /// stderr, prefixed "rpm server: ", unless the application set a handler).
    std::function<void(std::string_view line)> on_log;
    /// Called (on a server thread) for each message a client sends. With
    /// several I/O threads it may be called from several threads at once.
    std::function<void(std::uint64_t session, std::span<const std::byte> payload)> on_message;
};

/// What the server decided for one region.
struct RegionReport {
    std::string name;
    std::string path;
    std::uint64_t size = 0;
    PersistenceDomain domain = PersistenceDomain::unknown;
    flush::Decision rdma_decision;                 ///< for writes arriving by RDMA (no device: DDIO unknown)
    flush::ServerPersist tcp_persist{};            ///< for the server's own stores (TCP)
};

/// A running server. On a moved-from Server only port() (0), stop()
/// (nothing), assigning to it and destruction are valid; regions(),
/// profile_json() and send() must not be called on it.
class Server {
public:
    /// Open the regions, detect the platform, decide, and start listening.
    /// The steps run in this order, and the first error is returned: the
    /// options are checked, overrides loaded, the platform detected, every
    /// region opened, then each listen URI parsed and its listener started.
    /// RETURN VALUE: a running server, or an Error.
    /// ERRORS: errc::invalid_argument (no listen address, a bad URI, an
    /// empty or duplicate region name, no secrets); the errors of
    /// pmem::Region::open for a region; errc::io_error when a listener
    /// cannot bind (detail: the address); errc::rdma_unavailable for an
    /// rdma:// listener without a usable device; errc::bad_override /
    /// errc::bad_config for overrides.
    /// In more detail:
    /// - errc::invalid_argument: also no regions; a region name over 255
    ///   bytes; a client id that is empty or over 255 bytes, or an empty
    ///   secret; handshake_timeout, max_connections,
    ///   max_unauthenticated_per_address, max_queued_answer_bytes or
    ///   max_fencing_term_step not positive; fence_dir that is not a directory; an
    ///   id in fencers that is not in secrets; a tcp:// host that is
    ///   not an IPv4 or IPv6 literal (names are not resolved)
    /// - errc::path_not_found: sysfs_root is not a directory (or the errors
    ///   of pmem::Region::open; the detail names the region)
    /// - errc::bad_config: also a region's fence file that is malformed; the
    ///   tls certificate or private key cannot be loaded
    /// - errc::io_error: also a fence file that cannot be read; a region
    ///   file that cannot be locked (a Server holds a shared flock on
    ///   each region's file until it is destroyed, and `rpm-server
    ///   reset-term` (OfflineFence) an exclusive one: the detail says so);
    ///   tcp://: the socket, listen or event-loop set-up failed; rdma://:
    ///   its eventfd
    /// - errc::rdma_unavailable: rdma://: no RDMA device has the listen
    ///   address (a wildcard address never has one), or rdma_cm or a verbs
    ///   call failed while setting up (detail: the call), or the session
    ///   message pool could not register its buffers
    /// A region file created (RegionSpec::create) before a later step
    /// failed stays on disk.
    static Result<Server> start(ServerOptions opts);

    /// Take over `other`'s server; `other` is left moved-from.
    /// RETURN VALUE: none (a constructor). ERRORS: none.
    Server(Server&&) noexcept;
    /// Stop this object's server (as the destructor), then take over
    /// `other`'s. RETURN VALUE: *this. ERRORS: none.
    Server& operator=(Server&&) noexcept;
    /// Stops (as stop()) and unmaps the regions. RETURN VALUE: none.
    /// ERRORS: none.
    ~Server();  ///< stops

    /// The bound port of the listener for `scheme`; 0 if none.
    /// RETURN VALUE: that port (the port picked, for port 0); with several
    /// listeners of the scheme, the first one's; 0 when no listener has
    /// that scheme, or for a moved-from Server. ERRORS: none.
    [[nodiscard]] std::uint16_t port(Scheme scheme) const noexcept;
    /// RETURN VALUE: what the server decided for each region, in the order
    /// of ServerOptions::regions. ERRORS: none.
    [[nodiscard]] const std::vector<RegionReport>& regions() const noexcept;
    /// RETURN VALUE: the platform profile and every region's decision as
    /// JSON (what clients get in the handshake). ERRORS: none.
    [[nodiscard]] const std::string& profile_json() const noexcept;

    /// Send an application message to a session. ERRORS: errc::invalid_argument
    /// for an unknown (or closed) session.
    /// `session` is the id ServerOptions::on_message was given. The message
    /// waits at the client until Connection::recv takes it.
    /// RETURN VALUE: {} once the message is queued for the session; that is
    /// no proof of delivery: a session that closes before it is sent drops it.
    /// That errc::invalid_argument is also the answer after stop(), and to
    /// every failure on rdma://, e.g. a payload over 65520 bytes (the session
    /// refuses it with errc::bad_size, but that error is not passed on: the
    /// call tries the other listeners and ends with "no open session").
    /// tcp:// checks no size: a payload over 1 MiB + 4 KiB, more than the
    /// client accepts in one frame, fails that client's connection.
    Result<void> send(std::uint64_t session, std::span<const std::byte> payload);

    /// Stop listening, close every session, and persist nothing further.
    /// Returns once no request handler runs any more. Calling it again, or
    /// on a moved-from Server, does nothing.
    /// RETURN VALUE: none. ERRORS: none.
    void stop();

    struct RPM_INTERNAL Impl;

private:
    explicit Server(std::unique_ptr<Impl> impl) noexcept;
    std::unique_ptr<Impl> impl_;
};

/// One region's fencing term, reached while no server serves the region:
/// what `rpm-server reset-term` uses (docs/replication.md, "Fencing"). It
/// holds an exclusive lock (flock) on the region's file for as long as it
/// lives; a Server holds a shared one on it from Server::start until it is
/// destroyed, so an OfflineFence cannot be opened while a server serves the
/// region, and no server starts serving it until the OfflineFence is gone. The fence file is the one a
/// Server with the same name, path and fence_dir uses.
class OfflineFence {
public:
    /// Lock `region` (its name and path; size, create and clients are not
    /// used) against every server, and find its fence file.
    /// RETURN VALUE: the held fence, or an Error.
    /// ERRORS: errc::invalid_argument (a name that is empty or over 255
    /// bytes; fence_dir that is not a directory); errc::path_not_found
    /// (the region's path does not exist); errc::unsupported (a device
    /// region without fence_dir: it has no fence file); errc::io_error (a
    /// server is serving the region: "a server is serving NAME (PATH); stop
    /// it first"; or the path cannot be opened or locked).
    static Result<OfflineFence> open(const RegionSpec& region,
                                     const std::optional<std::filesystem::path>& fence_dir);

    /// RETURN VALUE: the fence file (it may not exist yet). ERRORS: none.
    [[nodiscard]] const std::filesystem::path& file() const noexcept;
    /// RETURN VALUE: the fencing term the fence file holds; 0 when there
    /// is none. ERRORS: errc::bad_config (a malformed file: the detail
    /// names it), errc::io_error (it cannot be read).
    [[nodiscard]] Result<std::uint64_t> fencing_term() const;
    /// Keep `fencing_term` in the fence file, whatever it held (a malformed
    /// file included), as a server keeps a newer one: written beside it,
    /// fsync'ed, renamed over it, the directory fsync'ed.
    /// RETURN VALUE: {} once it is durable.
    /// ERRORS: errc::io_error (detail: the file and the failing step).
    Result<void> set_fencing_term(std::uint64_t fencing_term);

    /// Take over `other`'s lock; `other` is left empty (only destruction
    /// and assigning to it are valid). ERRORS: none.
    OfflineFence(OfflineFence&&) noexcept;
    /// Release this one's lock, then take over `other`'s. ERRORS: none.
    OfflineFence& operator=(OfflineFence&&) noexcept;
    /// Releases the lock. ERRORS: none.
    ~OfflineFence();

    struct RPM_INTERNAL Impl;

private:
    explicit OfflineFence(std::unique_ptr<Impl> impl) noexcept;
    std::unique_ptr<Impl> impl_;
};

} // namespace rpm

RPM_API_END
