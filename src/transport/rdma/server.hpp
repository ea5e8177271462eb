// The RDMA listener (listen_rdma) and its sessions.
//
// The server's steps (librpma's order, kept by the verbs layer): ep_listen ->
// ep_next_conn_req -> conn_req_recv -> conn_req_connect ->
// kConnEstablished. The listener's thread accepts; each session has an
// I/O thread that runs the handshake and the control requests against
// server::Service. Clients write and read the regions one-sided: the server
// CPU sees only Flush (send_flush) requests and application messages.
#pragma once

#include "core/inline_mutex.hpp"
#include "server/admission.hpp"
#include "server/service.hpp"
#include "server/listener.hpp"
#include "transport/rdma/api.hpp"
#include "transport/rdma/buffers.hpp"
#include "transport/rdma/handles.hpp"
#include "transport/rdma/limits.hpp"
#include "transport/rdma/loop.hpp"
#include "transport/rdma/message_buffer.hpp"

#include <rpm/mr_pool.hpp>
#include <rpm/platform.hpp>

#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

namespace rpm::rdma {

struct ServerLimits {
    std::uint32_t sq_depth = kSqDepth;
    std::uint32_t recv_slots = kRecvSlots;
    std::uint32_t send_slots = kSendSlots;
    std::size_t slot_size = kSlotSize;
    std::chrono::milliseconds establish_timeout{10000};
    /// The listener's pool of session message buffers (buffer_size is set
    /// from the slot layout).
    MrPoolOptions message_pool = message_pool_defaults(kServerMessagePoolBudget, kServerMessagePoolInitial);
};

/// listen_rdma through `api` (the verbs layer, or a test's fake).
Result<std::unique_ptr<server::Listener>> listen_rdma_with(const Api& api, server::Service& service,
                                                           const std::string& host, std::uint16_t port,
                                                           const ServerLimits& limits = {});

/// What a region's memory is registered for: RDMA writes and reads by the
/// client, and the flush types its memory can honour: visibility always
/// (read-after-write needs remote read access), persistence only
/// on PM-backed memory (a page-cache file or tmpfs has nothing a FLUSH could
/// make persistent). Where the RNIC and the build have native FLUSH, the
/// verbs layer adds IBV_ACCESS_FLUSH_PERSISTENT (and GLOBAL) for the
/// persistence usage, if the RNIC takes it for that memory
/// (mr_get_native_flush). Whether read-after-write may be used is the
/// peer cfg's business (peer_cfg_descriptor).
inline constexpr int kRegionUsage = kUsageReadSrc | kUsageWriteDst |
                                    kUsageFlushPersistent | kUsageFlushVisibility;
inline constexpr int kFileRegionUsage = kRegionUsage & ~kUsageFlushPersistent;
/// kRegionUsage for PM (any detected domain but not_pmem), else kFileRegionUsage.
int region_usage(const server::Region& r) noexcept;
inline constexpr std::uint64_t kServerRecvTag = std::uint64_t{1} << 63;
inline constexpr std::uint64_t kServerSendTag = std::uint64_t{1} << 62;

/// Each region's memory, registered once with the listener's peer, its
/// descriptor, and whether it admits a native persistent FLUSH.
class RegionRegistry final : public server::RdmaMemory {
public:
    /// `rnic_flush`: the listener's RNIC reports persistent FLUSH.
    RegionRegistry(const Api& api, Peer* peer, bool rnic_flush) noexcept
        : api_(api), peer_(peer), rnic_flush_(rnic_flush) {}
    /// ERRORS: errc::unsupported (no memory to register), errc::rdma_unavailable.
    Result<std::vector<std::uint8_t>> descriptor(server::Region& r);
    /// Registers `r` if it was not. RETURN VALUE: {true} when its
    /// registration admits a persistent FLUSH; else {false, why}: the
    /// build, the RNIC, memory that is not PM, the RNIC refusing the access
    /// for it, or the registration's own failure.
    flush::TransportAbility native_flush(server::Region& r) override;
    /// A newer primary term took `r` over: its memory is registered again
    /// (a new rkey, taken before the old one is given up so the two
    /// differ) and the old registration is gone when this returns, so a
    /// one-sided access with the old rkey fails, in flight or later.
    void revoke(server::Region& r);
    void clear();

private:
    struct Entry {
        MrHandle mr;
        std::vector<std::uint8_t> descriptor;
        flush::TransportAbility flush;  ///< whether the registration admits a persistent FLUSH
    };
    Result<Entry> register_region(server::Region& r);
    flush::TransportAbility flush_ability(const server::Region& r, const LocalMr* mr) const;
    const Api& api_;
    Peer* peer_;
    bool rnic_flush_;
    std::mutex mu_;
    std::map<const server::Region*, Entry> entries_;
};

/// The descriptor of a peer configuration whose direct_write_to_pmem is
/// true exactly when `m` is read_after_write.
Result<std::vector<std::uint8_t>> peer_cfg_descriptor(const Api& api, flush::Method m);

/// Add the RDMA descriptors to a grant Service made, or refuse it.
/// ERRORS: errc::unsupported for a native_flush grant the region's
/// registration does not admit (RegionRegistry::native_flush's reason: a
/// client's forced method, or an override, decided it), and those of
/// RegionRegistry::descriptor / peer_cfg_descriptor.
Result<void> complete_grant(const Api& api, RegionRegistry& regs, server::Region& r, proto::RegionGrant& g);

/// The detected RNIC the listener's address belongs to (nullopt: unknown).
std::optional<platform::RdmaDevice> find_device(const server::Service& service, const ibv_context* ctx);

/// What sessions share with their listener.
struct SessionEnv {
    const Api& api;
    server::Service& service;
    Peer* peer;
    MrPool* messages;  ///< the sessions' message buffers
    RegionRegistry& regions;
    const platform::RdmaDevice* device;
    ServerLimits limits;
    std::function<void()> on_exit;  ///< wakes the listener to reap the session
    server::Admission* admission;   ///< the listener's: logs a handshake timeout
};

/// One accepted connection.
class ServerSession {
public:
    ServerSession(SessionEnv& env, server::Session s);
    ~ServerSession();
    ServerSession(const ServerSession&) = delete;
    ServerSession& operator=(const ServerSession&) = delete;

    /// Message buffer (from the listener's pool), posted receives, accept.
    /// Consumes `req` whatever happens.
    Result<void> accept(ConnReqHandle req);
    /// Start the I/O thread (once the listener can find the session by id).
    void start();
    /// Queue an application message. ERRORS: errc::bad_size, errc::invalid_argument (closed).
    Result<void> send_message(std::span<const std::byte> payload);
    /// Any thread (the fence hook, before the region's rkey dies): if this
    /// session holds a grant of an older term on `r`, its goodbye with
    /// errc::fenced is posted now, ahead of anything the client can send
    /// with the dying rkey, and the session closes once it has left.
    void fence(const server::Region* r, std::uint64_t term);
    void stop() noexcept;
    void join() noexcept;
    [[nodiscard]] bool exited() const noexcept { return exited_; }
    [[nodiscard]] std::uint64_t id() const noexcept { return session_.id; }

private:
    void run();
    void on_event();
    void on_wc(const ibv_wc& wc);
    void on_recv(std::uint32_t slot, const ibv_wc& wc);
    void on_frame(const proto::Header& h, std::span<const std::byte> body);
    void on_auth(std::uint32_t rid, std::span<const std::byte> body);
    void on_open_region(std::uint32_t rid, std::span<const std::byte> body);
    void on_flush(std::uint32_t rid, std::span<const std::byte> body);
    void on_message(std::uint32_t rid, std::span<const std::byte> body);
    Result<proto::RegionGrant> grant(const proto::OpenRegion& req);
    void reply(std::uint32_t rid, std::vector<std::byte> frame);
    void refuse(std::uint32_t rid, const Error& e);
    void queue_frame(std::vector<std::byte> frame);
    /// A frame the session thread made (a reply): posted from `frame` at
    /// once when nothing is queued before it and a slot is free.
    void send_frame(std::span<const std::byte> frame);
    void reply_ok(std::uint32_t rid);
    void pump_locked();
    enum class Post { posted, no_slot, failed };
    Post post_locked(std::span<const std::byte> frame);
    void repost(std::uint32_t slot);
    void close_session(std::string why);
    void say_fenced(std::string why);
    void say_fenced_locked(std::string why);
    void teardown() noexcept;

    SessionEnv& env_;
    const Api& api_;
    server::Session session_;
    SlotLayout layout_;
    std::optional<MessageBuffer> msgs_;  // declared before conn_: given back after it is deleted
    ConnHandle conn_;
    Cq* cq_ = nullptr;
    int cq_fd_ = -1;
    int event_fd_ = -1;
    Wakeup wake_;
    InlineMutex mu_;  // the outbox and the send slots: Listener::send comes from other threads
    std::deque<std::vector<std::byte>> outbox_;
    /// Under mu_: each grant's region and term, for fence() on other threads
    /// (session_.grants is the session thread's).
    std::vector<std::pair<const server::Region*, std::uint64_t>> granted_;
    std::vector<std::byte> request_copy_;  // the frame being handled (on_recv), the session thread's
    std::vector<std::byte> reply_copy_;    // a success reply being made (reply_ok), the session thread's
    proto::Flush flush_;                   // the Flush being handled (on_flush), the session thread's
    SlotPool slots_;
    bool established_ = false;
    bool peer_closed_ = false;
    bool close_when_sent_ = false;
    bool closed_ = false;
    std::atomic<bool> stop_{false};
    std::atomic<bool> exited_{false};
    std::chrono::steady_clock::time_point accepted_at_;
    std::thread thread_;
};

class RdmaListener final : public server::Listener, private server::FenceHook {
public:
    RdmaListener(const Api& api, server::Service& service, ServerLimits limits);
    ~RdmaListener() override;
    Result<void> start(const std::string& host, std::uint16_t port);
    [[nodiscard]] std::uint16_t port() const noexcept override { return port_; }
    void stop() noexcept override;
    Result<void> send(std::uint64_t session, std::span<const std::byte> payload) override;

private:
    Result<void> open_device(const std::string& host);
    Result<void> make_message_pool(const ibv_context* ctx);
    Result<void> make_conn_cfg();
    Result<void> listen(const std::string& host, std::uint16_t port);
    Result<std::uint16_t> pick_free_port(const std::string& host);
    void accept_loop();
    void accept_one();
    void reap();
    void region_fenced(server::Region& r, std::uint64_t term) noexcept override;

    const Api& api_;
    server::Service& service_;
    ServerLimits limits_;
    std::string where_;
    std::uint16_t port_ = 0;
    std::optional<platform::RdmaDevice> device_;
    PeerHandle peer_;
    std::optional<MrPool> messages_;  // reset in stop(), before the peer
    std::unique_ptr<RegionRegistry> regions_;
    std::unique_ptr<SessionEnv> env_;
    ConnCfgHandle cfg_;
    EpHandle ep_;
    int ep_fd_ = -1;
    Wakeup wake_;
    server::Admission admission_;  ///< max_connections (the listener does not look at the peer's address); its log
    std::mutex mu_;
    std::map<std::uint64_t, std::unique_ptr<ServerSession>> sessions_;
    std::atomic<bool> stopping_{false};
    bool stopped_ = false;
    std::thread accept_thread_;
};

} // namespace rpm::rdma
