// The fake's connection set-up: requests, endpoints, events, teardown.
#include "fake_rpma_fns.hpp"

#include <algorithm>
#include <sys/eventfd.h>
#include <unistd.h>

namespace rpm::rdma::fake::fn {
namespace {

Fabric& F() { return Fabric::current(); }

rpma_ep* find_ep(Fabric& f, const std::string& addr, const std::string& port) {
    auto it = std::find_if(f.eps_.begin(), f.eps_.end(),
                           [&](const rpma_ep* e) { return e->addr == addr && e->port == port; });
    return it == f.eps_.end() ? nullptr : *it;
}

void free_conn(Fabric& f, rpma_conn* c) {
    fn::unlink(c, RPMA_CONN_CLOSED);
    f.conns_.erase(std::remove(f.conns_.begin(), f.conns_.end(), c), f.conns_.end());
    for (auto* e : f.eps_) e->incoming.erase(std::remove(e->incoming.begin(), e->incoming.end(), c), e->incoming.end());
    ::close(c->cq.fd);
    ::close(c->event_fd);
    delete c;
    --f.live_;
}

} // namespace

int conn_req_new(rpma_peer* peer, const char* addr, const char* port, const rpma_conn_cfg* cfg, rpma_conn_req** req) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    f.conn_reqs_.push_back({addr ? addr : "", port ? port : "", cfg ? *cfg : rpma_conn_cfg{}});
    if (int e = take_failure(f, "rpma_conn_req_new")) return e;
    if (!peer || !addr || !port || !req) return RPMA_E_INVAL;
    *req = new rpma_conn_req{new_conn(f, peer, false), nullptr, false, addr, port};
    ++f.live_;
    return 0;
}

int conn_req_delete(rpma_conn_req** req) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    take_failure(f, "rpma_conn_req_delete");
    if (!req) return RPMA_E_INVAL;
    if (!*req) return 0;
    if ((*req)->passive && (*req)->client) fn::push_event((*req)->client, RPMA_CONN_REJECTED);
    free_conn(f, (*req)->conn);
    delete *req;
    *req = nullptr;
    --f.live_;
    return 0;
}

int conn_req_recv(rpma_conn_req* req, rpma_mr_local* dst, std::size_t off, std::size_t len, const void* ctx) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    f.recvs_.push_back({req ? req->conn : nullptr, dst, off, len, ctx, true});
    if (int e = take_failure(f, "rpma_conn_req_recv")) return e;
    if (!req || !dst || !ctx || off + len > dst->size) return RPMA_E_INVAL;
    req->conn->recvs.push_back({dst, off, len, ctx});
    return 0;
}

int conn_req_connect(rpma_conn_req** req, const rpma_conn_private_data*, rpma_conn** conn) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    if (!req || !*req || !conn) return RPMA_E_INVAL;
    rpma_conn_req* r = *req;
    *req = nullptr;  // consumed, whatever happens (as librpma)
    --f.live_;
    rpma_conn* c = r->conn;
    rpma_conn* client = r->client;
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
        fn::push_event(c, RPMA_CONN_ESTABLISHED);
        fn::push_event(client, RPMA_CONN_ESTABLISHED);
        return 0;
    }
    if (rpma_ep* ep = find_ep(f, addr, port)) {
        ep->incoming.push_back(c);
        fn::bump(ep->fd);
    } else {
        fn::push_event(c, RPMA_CONN_REJECTED);
    }
    return 0;
}

int ep_listen(rpma_peer* peer, const char* addr, const char* port, rpma_ep** ep) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    if (int e = take_failure(f, "rpma_ep_listen")) return e;
    if (!peer || !addr || !port || !ep) return RPMA_E_INVAL;
    if (find_ep(f, addr, port)) return RPMA_E_PROVIDER;  // address in use
    *ep = new rpma_ep{addr, port, ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC | EFD_SEMAPHORE), peer, {}};
    f.eps_.push_back(*ep);
    ++f.live_;
    return 0;
}

int ep_get_fd(const rpma_ep* ep, int* fd) {
    if (!ep || !fd) return RPMA_E_INVAL;
    *fd = ep->fd;
    return 0;
}

int ep_next_conn_req(rpma_ep* ep, const rpma_conn_cfg*, rpma_conn_req** req) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    if (int e = take_failure(f, "rpma_ep_next_conn_req")) return e;
    if (!ep || !req) return RPMA_E_INVAL;
    (void)fn::take(ep->fd);
    if (ep->incoming.empty()) return RPMA_E_NO_EVENT;
    rpma_conn* client = ep->incoming.front();
    ep->incoming.pop_front();
    *req = new rpma_conn_req{new_conn(f, ep->peer, true), client, true, {}, {}};
    ++f.live_;
    return 0;
}

int ep_shutdown(rpma_ep** ep) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    take_failure(f, "rpma_ep_shutdown");
    if (!ep) return RPMA_E_INVAL;
    if (!*ep) return 0;
    for (auto* c : (*ep)->incoming) fn::push_event(c, RPMA_CONN_REJECTED);
    f.eps_.erase(std::remove(f.eps_.begin(), f.eps_.end(), *ep), f.eps_.end());
    ::close((*ep)->fd);
    delete *ep;
    *ep = nullptr;
    --f.live_;
    return 0;
}

int conn_get_event_fd(const rpma_conn* c, int* fd) {
    if (!c || !fd) return RPMA_E_INVAL;
    *fd = c->event_fd;
    return 0;
}

int conn_next_event(rpma_conn* c, rpma_conn_event* ev) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    if (int e = take_failure(f, "rpma_conn_next_event")) return e;
    if (!c || !ev) return RPMA_E_INVAL;
    (void)fn::take(c->event_fd);
    if (c->events.empty()) return RPMA_E_NO_EVENT;
    *ev = c->events.front();
    c->events.pop_front();
    return 0;
}

int conn_apply(rpma_conn* c, const rpma_peer_cfg* cfg) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    f.applied_.emplace_back(c, cfg ? cfg->direct : false);
    if (int e = take_failure(f, "rpma_conn_apply_remote_peer_cfg")) return e;
    if (!c || !cfg) return RPMA_E_INVAL;
    c->direct_write = cfg->direct;
    return 0;
}

int conn_get_cq(const rpma_conn* c, rpma_cq** cq) {
    if (!c || !cq) return RPMA_E_INVAL;
    *cq = const_cast<rpma_cq*>(&c->cq);
    return 0;
}

int conn_disconnect(rpma_conn* c) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    take_failure(f, "rpma_conn_disconnect");
    if (!c) return RPMA_E_INVAL;
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
    fn::push_event(c, RPMA_CONN_CLOSED);
    fn::unlink(c, RPMA_CONN_CLOSED);
    return 0;
}

int conn_delete(rpma_conn** c) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    take_failure(f, "rpma_conn_delete");
    if (!c) return RPMA_E_INVAL;
    if (*c) free_conn(f, *c);
    *c = nullptr;
    return 0;
}

} // namespace rpm::rdma::fake::fn
