// The fake's connection set-up: requests, endpoints, events, teardown.
#include "fake_rpma_fns.hpp"

#include <algorithm>
#include <sys/eventfd.h>
#include <unistd.h>

namespace rpm::rdma::fake::fn {
namespace {

Ep* find_ep(Fabric& f, const std::string& addr, const std::string& port) {
    auto it = std::find_if(f.eps_.begin(), f.eps_.end(),
                           [&](const Ep* e) { return e->addr == addr && e->port == port; });
    return it == f.eps_.end() ? nullptr : *it;
}

void free_conn(Fabric& f, Conn* c) {
    fn::unlink(c, kConnClosed);
    f.conns_.erase(std::remove(f.conns_.begin(), f.conns_.end(), c), f.conns_.end());
    for (auto* e : f.eps_) e->incoming.erase(std::remove(e->incoming.begin(), e->incoming.end(), c), e->incoming.end());
    ::close(c->cq.fd);
    ::close(c->event_fd);
    delete c;
    --f.live_;
}

} // namespace

int conn_req_new(Peer* peer, const char* addr, const char* port, const ConnCfg* cfg, ConnReq** req) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    f.conn_reqs_.push_back({addr ? addr : "", port ? port : "", cfg ? *cfg : ConnCfg{}});
    if (int e = take_failure(f, "rpma_conn_req_new")) return e;
    if (!peer || !addr || !port || !req) return kErrInval;
    *req = new ConnReq{new_conn(f, peer, false), nullptr, false, addr, port};
    ++f.live_;
    return 0;
}

int conn_req_delete(ConnReq** req) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    take_failure(f, "rpma_conn_req_delete");
    if (!req) return kErrInval;
    if (!*req) return 0;
    if ((*req)->passive && (*req)->client) fn::push_event((*req)->client, kConnRejected);
    free_conn(f, (*req)->conn);
    delete *req;
    *req = nullptr;
    --f.live_;
    return 0;
}

int conn_req_recv(ConnReq* req, LocalMr* dst, std::size_t off, std::size_t len, const void* ctx) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    f.recvs_.push_back({req ? req->conn : nullptr, dst, off, len, ctx, true});
    if (int e = take_failure(f, "rpma_conn_req_recv")) return e;
    if (!req || !dst || !ctx || off + len > dst->size) return kErrInval;
    req->conn->recvs.push_back({dst, off, len, ctx});
    return 0;
}

int conn_req_connect(ConnReq** req, const void*, Conn** conn) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    if (!req || !*req || !conn) return kErrInval;
    ConnReq* r = *req;
    *req = nullptr;  // consumed, whatever happens (as the Api says)
    --f.live_;
    Conn* c = r->conn;
    Conn* client = r->client;
    const bool passive = r->passive;
    const std::string addr = r->addr;
    const std::string port = r->port;
    delete r;
    if (int e = take_failure(f, "rpma_conn_req_connect")) {
        free_conn(f, c);
        return e;
    }
    *conn = c;
    if (passive) {
        c->remote = client;
        client->remote = c;
        fn::push_event(c, kConnEstablished);
        fn::push_event(client, kConnEstablished);
        return 0;
    }
    if (Ep* ep = find_ep(f, addr, port)) {
        ep->incoming.push_back(c);
        fn::bump(ep->fd);
    } else {
        fn::push_event(c, kConnRejected);
    }
    return 0;
}

int ep_listen(Peer* peer, const char* addr, const char* port, Ep** ep) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    if (int e = take_failure(f, "rpma_ep_listen")) return e;
    if (!peer || !addr || !port || !ep) return kErrInval;
    if (find_ep(f, addr, port)) return kErrProvider;  // address in use
    *ep = new Ep{addr, port, ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC | EFD_SEMAPHORE), peer, {}};
    f.eps_.push_back(*ep);
    ++f.live_;
    return 0;
}

int ep_get_fd(const Ep* ep, int* fd) {
    if (!ep || !fd) return kErrInval;
    *fd = ep->fd;
    return 0;
}

int ep_next_conn_req(Ep* ep, const ConnCfg*, ConnReq** req) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    if (int e = take_failure(f, "rpma_ep_next_conn_req")) return e;
    if (!ep || !req) return kErrInval;
    (void)fn::take(ep->fd);
    if (ep->incoming.empty()) return kErrNoEvent;
    Conn* client = ep->incoming.front();
    ep->incoming.pop_front();
    *req = new ConnReq{new_conn(f, ep->peer, true), client, true, {}, {}};
    ++f.live_;
    return 0;
}

int ep_shutdown(Ep** ep) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    take_failure(f, "rpma_ep_shutdown");
    if (!ep) return kErrInval;
    if (!*ep) return 0;
    for (auto* c : (*ep)->incoming) fn::push_event(c, kConnRejected);
    f.eps_.erase(std::remove(f.eps_.begin(), f.eps_.end(), *ep), f.eps_.end());
    ::close((*ep)->fd);
    delete *ep;
    *ep = nullptr;
    --f.live_;
    return 0;
}

int conn_get_event_fd(const Conn* c, int* fd) {
    if (!c || !fd) return kErrInval;
    *fd = c->event_fd;
    return 0;
}

int conn_next_event(Conn* c, ConnEvent* ev) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    if (int e = take_failure(f, "rpma_conn_next_event")) return e;
    if (!c || !ev) return kErrInval;
    (void)fn::take(c->event_fd);
    if (c->events.empty()) return kErrNoEvent;
    *ev = c->events.front();
    c->events.pop_front();
    return 0;
}

int conn_apply(Conn* c, const PeerCfg* cfg) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    f.applied_.emplace_back(c, cfg ? cfg->direct : false);
    if (int e = take_failure(f, "rpma_conn_apply_remote_peer_cfg")) return e;
    if (!c || !cfg) return kErrInval;
    c->direct_write = cfg->direct;
    return 0;
}

int conn_get_cq(const Conn* c, Cq** cq) {
    if (!c || !cq) return kErrInval;
    *cq = const_cast<Cq*>(&c->cq);
    return 0;
}

int conn_atomic_write_kind(const Conn* c, AtomicWriteKind* kind) {
    if (!c || !kind) return kErrInval;
    auto& f = F();
    std::lock_guard lock(f.mu_);
    *kind = f.native_atomic_write ? AtomicWriteKind::native : AtomicWriteKind::fenced_write;
    return 0;
}

int conn_native_flush(const Conn* c, bool* native) {
    if (!c || !native) return kErrInval;
    auto& f = F();
    std::lock_guard lock(f.mu_);
    *native = f.native_flush;
    return 0;
}

int conn_disconnect(Conn* c) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    take_failure(f, "rpma_conn_disconnect");
    if (!c) return kErrInval;
    if (c->disconnected) return 0;
    c->disconnected = true;
    // The queue pair goes to the error state: posted work requests are flushed.
    for (const auto& r : c->recvs) {
        ibv_wc wc{};
        wc.wr_id = reinterpret_cast<std::uint64_t>(r.ctx);
        wc.status = IBV_WC_WR_FLUSH_ERR;
        fn::push_wc(c, wc, false);
    }
    c->recvs.clear();
    for (auto& wc : c->held) wc.status = IBV_WC_WR_FLUSH_ERR;
    fn::push_event(c, kConnClosed);
    fn::unlink(c, kConnClosed);
    return 0;
}

int conn_delete(Conn** c) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    take_failure(f, "rpma_conn_delete");
    if (!c) return kErrInval;
    if (*c) free_conn(f, *c);
    *c = nullptr;
    return 0;
}

} // namespace rpm::rdma::fake::fn
