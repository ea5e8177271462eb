// The transport-independent half of the server: regions, secrets, grants,
// the handshake and the request handlers. Listeners (TCP, RDMA) own the
// sockets / queue pairs and call into Service; Service never does I/O itself.
#pragma once

#include <rpm/flush_plan.hpp>
#include <rpm/overrides.hpp>
#include <rpm/platform.hpp>
#include <rpm/server.hpp>

#include "server/fence.hpp"
#include "server/served_region.hpp"
#include "protocol/protocol.hpp"

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace rpm::server {

/// A served region: its memory as the handlers see it (served), its decisions and its fence.
struct Region {
    RegionReport report;
    std::optional<Granularity> granularity;  ///< from libpmem2, when mapped
    flush::Input<PersistenceDomain> domain_input;  ///< as detected, before overrides
    std::set<std::string> clients;
    std::unique_ptr<ServedRegion> served;
    Fence fence;
    UniqueFd serving;  ///< the region file's shared flock while served (lock_region_file)
};

/// What one client was granted on one connection.
struct Grant {
    std::uint32_t id = 0;
    Region* region = nullptr;
    flush::Method method = flush::Method::send_flush;
    flush::ServerPersist step = flush::ServerPersist::cache_flush_sfence_deep_flush;
    std::uint64_t term = 0;  ///< the opener's fencing term (OpenRegion::term)
};

/// Grants one connection may hold: a peer that opens regions again and
/// again cannot make the server hold memory without bound.
inline constexpr std::size_t kMaxGrantsPerSession = 1024;

/// One connection's server-side state.
struct Session {
    std::uint64_t id = 0;
    std::string client_id;  ///< empty until authenticated
    bool authenticated = false;
    proto::Hello hello;     ///< the challenge this session was sent
    std::vector<Grant> grants;
    [[nodiscard]] const Grant* grant(std::uint32_t grant_id) const noexcept;
};

enum class TransportKind { tcp, rdma };

/// What this build's transports can do, where it limits the decision.
struct TransportCaps {
    /// rdma:// can issue native persistent FLUSH: where rdma-core has
    /// ibv_wr_flush (flush::rdma_ability(), which Server::start passes).
    /// Debian 12's rdma-core 44 has none (docs/rdma.md), so there a server
    /// never grants it over RDMA, even on an RNIC that reports the
    /// capability; the persistence model sets it to exercise the method.
    bool rdma_native_flush = false;
};

/// What an RDMA listener can do with one region's memory, asked by
/// open_region before it decides: a native FLUSH needs the region's
/// registration to admit it (IBV_ACCESS_FLUSH_PERSISTENT), which the RNIC
/// may refuse (rxe does for memory that is not persistent memory).
class RdmaMemory {
public:
    virtual ~RdmaMemory() = default;
    /// Whether a native persistent FLUSH to `r` can work (registering its
    /// memory first, if it was not). RETURN VALUE: {true} or {false, why}.
    virtual flush::TransportAbility native_flush(Region& r) = 0;
};

class Service {
public:
    /// Regions must be opened already (Server::start does it).
    Service(ServerOptions opts, std::vector<std::unique_ptr<Region>> regions, std::string profile_json,
         rpm::Overrides overrides = {}, platform::Profile profile = {}, TransportCaps caps = {});

    /// A new session with a fresh challenge.
    Session new_session();
    proto::Hello hello_for(Session& s);
    /// ERRORS: errc::unsupported (version), errc::auth_failed (unknown
    /// client or wrong MAC; the same message for both).
    Result<proto::Welcome> authenticate(Session& s, const proto::Auth& auth) const;
    /// ERRORS: errc::permission_denied before authentication;
    /// errc::invalid_argument for an unknown or ungranted name (same text);
    /// errc::invalid_argument "unsafe" for a refused forced method;
    /// errc::unsupported for native_flush on TCP; errc::bad_size past
    /// kMaxGrantsPerSession opens on one connection; errc::fenced (a term
    /// older than the region's, or 0 on a region with a term),
    /// errc::permission_denied (a nonzero term from a client not in
    /// ServerOptions::fencers), errc::invalid_argument (a term more than
    /// ServerOptions::max_fencing_term_step above the region's), errc::unsupported
    /// (a term on a region with no fence file), errc::io_error (the new
    /// term could not be kept). A term refused keeps nothing, revokes nothing.
    /// A newer term is kept durably, then every FenceHook is told (the
    /// sessions of older terms lose the region) before the grant is made.
    /// For RDMA, `rdma_device` names the RNIC the session arrived on, so the
    /// decision uses that device's DDIO (empty: unknown), and `memory` (the
    /// listener's registrations; none: no such limit) says whether the
    /// region's memory admits the native FLUSH the device reports.
    Result<proto::RegionGrant> open_region(Session& s, const proto::OpenRegion& req, TransportKind kind,
                                           const platform::RdmaDevice* rdma_device, RdmaMemory* memory = nullptr);

    // Request handlers. Each validates the session, the grant and the range
    // first; on error the region is untouched.
    Result<void> handle_write(const Session& s, const proto::Write& w);
    Result<void> handle_read(const Session& s, const proto::Read& r, std::span<std::byte> out);
    /// A read without a copy: the region's own bytes, to send from where
    /// they lie (valid while the server runs; they change with later
    /// writes, so the sender must send them before it runs another request).
    /// ERRORS: those of handle_read; errc::unsupported when the region has
    /// no memory to view (only the crash model's, which tcp:// never serves).
    Result<std::span<const std::byte>> read_view(const Session& s, const proto::Read& r);
    Result<void> handle_atomic_write(const Session& s, const proto::AtomicWrite& a);
    Result<void> handle_flush(const Session& s, const proto::Flush& f);
    /// Every slice is checked before any is stored: a bad one leaves the
    /// region untouched. Then the stores, then the grant's persist step
    /// over all slices (what a write per slice and a flush would do).
    Result<void> handle_persist(const Session& s, const proto::Persist& p);

    /// Listeners register to be told of a newer term (and deregister
    /// before they go).
    void add_fence_hook(FenceHook* h);
    void remove_fence_hook(FenceHook* h);

    [[nodiscard]] const ServerOptions& options() const noexcept { return opts_; }
    /// The RDMA device `name` as detected at start-up (with the configured
    /// IIO root-port ids), or nullptr.
    [[nodiscard]] const platform::RdmaDevice* rdma_device(std::string_view name) const noexcept;
    [[nodiscard]] const std::string& profile_json() const noexcept { return profile_json_; }
    [[nodiscard]] std::vector<std::unique_ptr<Region>>& regions() noexcept { return regions_; }
    void deliver_message(std::uint64_t session, std::span<const std::byte> payload) const;

private:
    ServerOptions opts_;
    std::vector<std::unique_ptr<Region>> regions_;
    std::string profile_json_;
    rpm::Overrides overrides_;
    platform::Profile profile_;
    TransportCaps caps_;
    std::atomic<std::uint64_t> next_session_{1};
    std::mutex hooks_mu_;
    std::vector<FenceHook*> hooks_;

    Result<void> admit_term(Region& r, std::uint64_t term);
};

/// Fill r.domain_input, r.report.rdma_decision (no RNIC known: DDIO unknown)
/// and r.report.tcp_persist from r.report.domain / r.granularity. Per-session
/// RDMA decisions (Service::open_region) refine the former for the RNIC used.
void decide_region(Region& r, const rpm::Overrides& ov);

/// Check [offset, offset+length) against a region of `size` bytes without
/// overflow. ERRORS: errc::invalid_argument naming the range and the size.
Result<void> check_range(const Region& r, std::uint64_t offset, std::uint64_t length);

} // namespace rpm::server
