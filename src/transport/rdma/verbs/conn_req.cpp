// Connection requests. The client's: a cm id resolved synchronously to the
// server's address and route, with the connection's queues built on it.
// The server's come from its endpoint (ep.cpp). Either is consumed by
// connect, which moves the id onto a channel of its own (so each connection
// has its own event fd) and sends the CM request or the answer.
#include "transport/rdma/verbs/objects.hpp"

#include <cerrno>
#include <memory>
#include <utility>

namespace rpm::rdma::verbs {
namespace {

struct ConnOwner {
    ConnObj* c = nullptr;
    ~ConnOwner() { destroy_conn(c); }
    ConnObj* release() noexcept { return std::exchange(c, nullptr); }
};

rdma_conn_param conn_param() noexcept {
    rdma_conn_param p{};
    // rdma_cm reduces these to what both devices support.
    p.responder_resources = RDMA_MAX_RESP_RES;
    p.initiator_depth = RDMA_MAX_INIT_DEPTH;
    p.flow_control = 1;
    p.retry_count = 7;
    // Receives are posted ahead of the peer's sends; RNR retries stay a safety net.
    p.rnr_retry_count = 7;
    return p;
}

} // namespace

int conn_req_new(Peer* peer, const char* addr, const char* port, const ConnCfg* cfg, ConnReq** req) {
    auto* p = obj<PeerObj>(peer);
    const auto* cf = obj<ConnCfgObj>(cfg);
    if (p == nullptr || addr == nullptr || port == nullptr || cf == nullptr || req == nullptr) return kErrInval;
    AddrInfo res;
    if (int r = lookup(addr, port, false, res); r != 0) return r;
    ConnOwner o{new ConnObj};
    o.c->v = p->v;
    o.c->peer = p;
    if (p->v->create_id(nullptr, &o.c->id, nullptr, RDMA_PS_TCP) != 0) return fail("rdma_create_id", errno);
    if (p->v->resolve_addr(o.c->id, nullptr, res.ai->ai_addr, cf->timeout_ms) != 0)
        return fail("rdma_resolve_addr", errno);
    if (p->v->resolve_route(o.c->id, cf->timeout_ms) != 0) return fail("rdma_resolve_route", errno);
    if (int r = build_conn(*o.c, *cf); r != 0) return r;
    *req = handle<ConnReq>(new ConnReqObj{o.release()});
    return 0;
}

int conn_req_recv(ConnReq* req, LocalMr* dst, std::size_t offset, std::size_t len, const void* ctx) {
    auto* r = obj<ConnReqObj>(req);
    const auto* m = obj<LocalMrObj>(dst);
    if (r == nullptr || m == nullptr) return kErrInval;
    return post_recv(*r->conn, *m, offset, len, ctx);
}

int conn_req_delete(ConnReq** req) {
    if (req == nullptr) return kErrInval;
    auto* r = obj<ConnReqObj>(*req);
    *req = nullptr;
    if (r == nullptr) return 0;
    // A request the server does not take is refused, not left to time out.
    if (r->conn->passive) (void)r->conn->v->reject(r->conn->id, nullptr, 0);
    destroy_conn(r->conn);
    delete r;
    return 0;
}

int conn_req_connect(ConnReq** req, const void* pdata, Conn** conn) {
    if (req == nullptr || *req == nullptr || conn == nullptr) return kErrInval;
    auto* r = obj<ConnReqObj>(*req);
    *req = nullptr;
    ConnOwner o{r->conn};
    const bool passive = r->conn->passive;
    delete r;
    ConnObj& c = *o.c;
    const Verbs& v = *c.v;
    rdma_conn_param p = conn_param();
    (void)pdata;  // rpm's handshake travels in its first messages, not in CM private data
    c.ch = v.create_event_channel();
    if (c.ch == nullptr) return fail("rdma_create_event_channel", errno);
    if (int ret = nonblocking(c.ch->fd); ret != 0) return ret;
    if (v.migrate_id(c.id, c.ch) != 0) return fail("rdma_migrate_id", errno);
    if (passive) {
        if (v.accept(c.id, &p) != 0) return fail("rdma_accept", errno);
    } else if (v.connect(c.id, &p) != 0) {
        return fail("rdma_connect", errno);
    }
    *conn = handle<Conn>(o.release());
    return 0;
}

} // namespace rpm::rdma::verbs
