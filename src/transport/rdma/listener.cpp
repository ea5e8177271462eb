// RdmaListener: the listening endpoint, its accept thread, and the sessions.
#include "transport/rdma/server.hpp"

#include "transport/rdma/mr_registrar.hpp"

#include <arpa/inet.h>
#include <netdb.h>

namespace rpm::server {

Result<std::unique_ptr<Listener>> listen_rdma(Service& service, const std::string& host, std::uint16_t port) {
    return rdma::listen_rdma_with(rdma::real_api(), service, host, port);
}

} // namespace rpm::server

namespace rpm::rdma {
namespace {

// getaddrinfo's result, freed on scope exit.
struct AddrInfo {
    addrinfo* ai = nullptr;
    ~AddrInfo() {
        if (ai) ::freeaddrinfo(ai);
    }
};

} // namespace

Result<std::unique_ptr<server::Listener>> listen_rdma_with(const Api& api, server::Service& service,
                                                           const std::string& host, std::uint16_t port,
                                                           const ServerLimits& limits) {
    auto l = std::make_unique<RdmaListener>(api, service, limits);
    if (auto r = l->start(host, port); !r) return r.error();
    return std::unique_ptr<server::Listener>(std::move(l));
}

RdmaListener::RdmaListener(const Api& api, server::Service& service, ServerLimits limits)
    : api_(api), service_(service), limits_(limits), peer_(api), cfg_(api), ep_(api), admission_(service.options()) {}

RdmaListener::~RdmaListener() { stop(); }

Result<void> RdmaListener::start(const std::string& host, std::uint16_t port) {
    where_ = "rdma://" + host + ":" + std::to_string(port);
    if (!wake_.ok()) return Error(errc::io_error, where_ + ": eventfd failed");
    if (auto r = open_device(host); !r) return r;
    regions_ = std::make_unique<RegionRegistry>(api_, peer_.get(),
                                                device_ && device_->native_flush == platform::Tri::yes);
    service_.add_fence_hook(this);
    env_ = std::make_unique<SessionEnv>(SessionEnv{api_, service_, peer_.get(), &*messages_, *regions_,
                                                   device_ ? &*device_ : nullptr, limits_, [this] { wake_.notify(); },
                                                   &admission_});
    if (auto r = make_conn_cfg(); !r) return r;
    if (auto r = listen(host, port); !r) return r;
    if (int ret = api_.ep_get_fd(ep_.get(), &ep_fd_); ret != 0)
        return call_failure(errc::rdma_unavailable, where_, "ep_get_fd", ret);
    accept_thread_ = std::thread([this] { accept_loop(); });
    return {};
}

Result<void> RdmaListener::open_device(const std::string& host) {
    ibv_context* ctx = nullptr;
    const int ret = api_.utils_get_ibv_context(host.c_str(), kContextLocal, &ctx);
    // A wildcard address binds no device: the lookup then succeeds with no context.
    if (ret != 0 || ctx == nullptr)
        return Error(errc::rdma_unavailable,
                     where_ + ": no RDMA device has the address " + host + " (utils_get_ibv_context: " +
                         (ret != 0 ? error_name(ret) : std::string("no device behind that address")) +
                         "); listen on the IP address of an RNIC or of a Soft-RoCE link "
                         "(rdma link add rxe0 type rxe netdev IFACE), not on a wildcard address");
    if (int r = api_.peer_new(ctx, peer_.out()); r != 0)
        return call_failure(errc::rdma_unavailable, where_, "peer_new", r);
    // The decision for a grant uses the DDIO of the RNIC that owns this
    // address; every session of this listener arrives on it.
    device_ = find_device(service_, ctx);
    return make_message_pool(ctx);
}

Result<void> RdmaListener::make_message_pool(const ibv_context* ctx) {
    // Sessions take their receive and send slots from here, so accepting a
    // connection registers nothing while the pool has entries.
    MrPoolOptions o = limits_.message_pool;
    o.buffer_size = SlotLayout(limits_.recv_slots, limits_.send_slots, limits_.slot_size).total_bytes();
    auto pool = MrPool::create(std::make_unique<RpmaRegistrar>(api_, peer_.get(), kMessageUsage, device_name(ctx)), o);
    if (!pool) return Error(pool.error().code(), where_ + ": session message pool: " + pool.error().detail());
    messages_.emplace(std::move(*pool));
    return {};
}

Result<void> RdmaListener::make_conn_cfg() {
    if (int ret = api_.conn_cfg_new(cfg_.out()); ret != 0)
        return call_failure(errc::rdma_unavailable, where_, "conn_cfg_new", ret);
    int ret = api_.conn_cfg_set_sq_size(cfg_.get(), limits_.sq_depth);
    if (ret == 0) ret = api_.conn_cfg_set_rq_size(cfg_.get(), limits_.recv_slots);
    if (ret == 0) ret = api_.conn_cfg_set_cq_size(cfg_.get(), limits_.sq_depth + limits_.recv_slots);
    if (ret != 0) return call_failure(errc::rdma_unavailable, where_, "conn_cfg_set_*", ret);
    return {};
}

Result<void> RdmaListener::listen(const std::string& host, std::uint16_t port) {
    // Port 0: the endpoint does not report the port it bound, so pick a
    // free one with rdma_cm first; another process may take it in between,
    // hence the retries.
    const int attempts = port == 0 ? 3 : 1;
    int ret = 0;
    for (int i = 0; i < attempts; ++i) {
        std::uint16_t p = port;
        if (port == 0) {
            auto free_port = pick_free_port(host);
            if (!free_port) return free_port.error();
            p = *free_port;
        }
        const std::string service = std::to_string(p);
        ret = api_.ep_listen(peer_.get(), host.c_str(), service.c_str(), ep_.out());
        if (ret == 0) {
            port_ = p;
            return {};
        }
    }
    return call_failure(errc::rdma_unavailable, where_ + ": rdma_cm cannot listen there", "ep_listen", ret);
}

Result<std::uint16_t> RdmaListener::pick_free_port(const std::string& host) {
    AddrInfo res;
    addrinfo hints{};
    hints.ai_flags = AI_PASSIVE;
    hints.ai_socktype = SOCK_STREAM;
    if (int rc = ::getaddrinfo(host.c_str(), "0", &hints, &res.ai); rc != 0 || res.ai == nullptr)
        return Error(errc::rdma_unavailable, where_ + ": cannot resolve " + host + ": " + ::gai_strerror(rc));
    rdma_cm_id* id = nullptr;
    if (api_.cm_create_id(nullptr, &id, nullptr, RDMA_PS_TCP) != 0)
        return Error(errc::rdma_unavailable, where_ + ": rdma_create_id failed (no rdma_cm: is rdma_ucm loaded?)");
    std::uint16_t port = 0;
    if (api_.cm_bind_addr(id, res.ai->ai_addr) == 0) port = ntohs(api_.cm_get_src_port(id));
    (void)api_.cm_destroy_id(id);
    if (port == 0) return Error(errc::rdma_unavailable, where_ + ": rdma_cm cannot bind " + host);
    return port;
}

void RdmaListener::accept_loop() {
    while (!stopping_) {
        const Ready r = wait_ready(-1, ep_fd_, wake_.fd(), -1);
        if (r.wake) {
            wake_.drain();
            reap();
        }
        if (r.event && !stopping_) accept_one();
    }
}

void RdmaListener::accept_one() {
    ConnReqHandle req(api_);
    // Fails for events that are not connection requests (consumed).
    if (api_.ep_next_conn_req(ep_.get(), cfg_.get(), req.out()) != 0) return;
    // Past max_connections the request is rejected (ConnReqHandle deletes
    // it: conn_req_delete), before a queue pair or buffer is spent on
    // it. Sessions that ended are reaped first, so they do not count.
    reap();
    {
        std::lock_guard lock(mu_);
        if (auto refused = admission_.admit("", sessions_.size())) {
            admission_.log(refused->first, refused->second + " (" + where_ + ")");
            return;
        }
    }
    auto s = std::make_unique<ServerSession>(*env_, service_.new_session());
    // A session that cannot start rejects the request (conn_req_delete).
    if (!s->accept(std::move(req))) return;
    std::lock_guard lock(mu_);
    auto& started = *sessions_.emplace(s->id(), std::move(s)).first->second;
    started.start();
}

void RdmaListener::reap() {
    std::vector<std::unique_ptr<ServerSession>> done;
    {
        std::lock_guard lock(mu_);
        for (auto it = sessions_.begin(); it != sessions_.end();) {
            if (!it->second->exited()) {
                ++it;
                continue;
            }
            done.push_back(std::move(it->second));
            it = sessions_.erase(it);
        }
    }
    done.clear();  // joins their threads, outside the lock
}

// Under the region's exclusive fence lock (Service::admit_term). First the
// older sessions' goodbyes are posted, so a stale client finds fenced in
// its completion queue ahead of the failure of any write it sends later;
// then the old rkey dies, before the newer term's open is granted.
void RdmaListener::region_fenced(server::Region& r, std::uint64_t term) noexcept {
    {
        std::lock_guard lock(mu_);
        for (auto& [id, s] : sessions_) s->fence(&r, term);
    }
    if (regions_) regions_->revoke(r);
}

void RdmaListener::stop() noexcept {
    service_.remove_fence_hook(this);
    if (stopped_) return;
    stopped_ = true;
    stopping_ = true;
    wake_.notify();
    if (accept_thread_.joinable()) accept_thread_.join();
    ep_.reset();  // ep_shutdown: no new connections
    std::map<std::uint64_t, std::unique_ptr<ServerSession>> sessions;
    {
        std::lock_guard lock(mu_);
        sessions.swap(sessions_);
    }
    for (auto& [id, s] : sessions) s->stop();
    sessions.clear();  // joins: no handler runs after this
    messages_.reset();  // every session gave its buffer back: deregisters them all
    if (regions_) regions_->clear();
    peer_.reset();
}

Result<void> RdmaListener::send(std::uint64_t session, std::span<const std::byte> payload) {
    std::lock_guard lock(mu_);
    auto it = sessions_.find(session);
    if (it == sessions_.end() || it->second->exited())
        return Error(errc::invalid_argument, "no session " + std::to_string(session) + " on " + where_);
    return it->second->send_message(payload);
}

} // namespace rpm::rdma
