// A listening endpoint: a cm id bound and listening on a channel of its
// own (non-blocking, so a spurious wake-up cannot block the accept loop).
// Each CONNECT_REQUEST becomes a request with its queues already built.
#include "transport/rdma/verbs/objects.hpp"

#include <cerrno>
#include <memory>

namespace rpm::rdma::verbs {
namespace {

// The kernel's queue of connection requests not yet taken; the listener's
// admission bounds the sessions.
constexpr int kBacklog = 16;

} // namespace

int ep_shutdown(Ep** ep) {
    if (ep == nullptr) return kErrInval;
    auto* e = obj<EpObj>(*ep);
    *ep = nullptr;
    if (e == nullptr) return 0;
    if (e->id) (void)e->peer->v->destroy_id(e->id);
    if (e->ch) e->peer->v->destroy_event_channel(e->ch);
    delete e;
    return 0;
}

int ep_listen(Peer* peer, const char* addr, const char* port, Ep** ep) {
    auto* p = obj<PeerObj>(peer);
    if (p == nullptr || addr == nullptr || port == nullptr || ep == nullptr) return kErrInval;
    AddrInfo res;
    if (int r = lookup(addr, port, true, res); r != 0) return r;
    auto* e = new EpObj{p, nullptr, nullptr};
    Ep* h = handle<Ep>(e);
    const Verbs& v = *p->v;
    int ret = 0;
    if ((e->ch = v.create_event_channel()) == nullptr) ret = fail("rdma_create_event_channel", errno);
    if (ret == 0) ret = nonblocking(e->ch->fd);
    if (ret == 0 && v.create_id(e->ch, &e->id, nullptr, RDMA_PS_TCP) != 0) ret = fail("rdma_create_id", errno);
    if (ret == 0 && v.bind_addr(e->id, res.ai->ai_addr) != 0) ret = fail("rdma_bind_addr", errno);
    if (ret == 0 && v.listen(e->id, kBacklog) != 0) ret = fail("rdma_listen", errno);
    if (ret != 0) {
        (void)ep_shutdown(&h);
        return ret;
    }
    *ep = h;
    return 0;
}

int ep_get_fd(const Ep* ep, int* fd) {
    if (ep == nullptr || fd == nullptr) return kErrInval;
    *fd = obj<EpObj>(ep)->ch->fd;
    return 0;
}

int ep_next_conn_req(Ep* ep, const ConnCfg* cfg, ConnReq** req) {
    auto* e = obj<EpObj>(ep);
    const auto* cf = obj<ConnCfgObj>(cfg);
    if (e == nullptr || cf == nullptr || req == nullptr) return kErrInval;
    const Verbs& v = *e->peer->v;
    rdma_cm_event* ev = nullptr;
    if (v.get_cm_event(e->ch, &ev) != 0)
        return errno == EAGAIN || errno == EWOULDBLOCK ? kErrNoEvent : fail("rdma_get_cm_event", errno);
    const bool request = ev->event == RDMA_CM_EVENT_CONNECT_REQUEST;
    rdma_cm_id* id = ev->id;
    (void)v.ack_cm_event(ev);
    if (!request) return kErrInval;
    auto* c = new ConnObj;
    c->v = &v;
    c->peer = e->peer;
    c->id = id;
    c->passive = true;
    if (int r = build_conn(*c, *cf); r != 0) {
        (void)v.reject(id, nullptr, 0);
        destroy_conn(c);
        return r;
    }
    *req = handle<ConnReq>(new ConnReqObj{c});
    return 0;
}

} // namespace rpm::rdma::verbs
