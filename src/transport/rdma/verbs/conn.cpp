// An established connection: its connection events (rdma_cm, on the
// connection's own non-blocking channel), its completion queue, and its
// end. librpma's order is kept: disconnect, wait for kConnClosed, delete.
#include "transport/rdma/verbs/objects.hpp"

#include <cerrno>

namespace rpm::rdma::verbs {
namespace {

ConnEvent event_of(rdma_cm_event_type t) noexcept {
    switch (t) {
    case RDMA_CM_EVENT_ESTABLISHED: return kConnEstablished;
    case RDMA_CM_EVENT_DISCONNECTED:
    case RDMA_CM_EVENT_TIMEWAIT_EXIT: return kConnClosed;
    case RDMA_CM_EVENT_REJECTED: return kConnRejected;
    case RDMA_CM_EVENT_UNREACHABLE:
    case RDMA_CM_EVENT_CONNECT_ERROR:
    case RDMA_CM_EVENT_ADDR_ERROR:
    case RDMA_CM_EVENT_ROUTE_ERROR: return kConnUnreachable;
    default: return kConnLost;  // device removal, address change, anything unexpected
    }
}

bool would_block() noexcept { return errno == EAGAIN || errno == EWOULDBLOCK; }

// A responder executes a FLUSH only where its queue pair's access flags
// admit that placement type (rxe: IB_ACCESS_FLUSH_* in qp_access_flags,
// else it answers with an invalid-request NAK and the connection dies).
// rdma_cm sets those flags itself, without FLUSH, on every transition up
// to RTS (rdma_accept redoes INIT), so they are added once established
// (RTS to RTS). Should the device refuse, the connection stays up without
// native FLUSH (conn_native_flush false), as on a device without it.
void admit_flush(ConnObj& c) {
    ibv_qp_attr attr{};
    ibv_qp_init_attr init{};
    int err = c.v->query_qp(c.id->qp, &attr, IBV_QP_ACCESS_FLAGS, &init);
    if (err == 0) {
        attr.qp_access_flags |= static_cast<unsigned>(kAccessFlushGlobal | kAccessFlushPersistent);
        err = c.v->modify_qp(c.id->qp, &attr, IBV_QP_ACCESS_FLAGS);
    }
    if (err != 0) {
        (void)fail("ibv_modify_qp (FLUSH access)", err);
        c.native_flush = false;
    }
}

} // namespace

int conn_get_event_fd(const Conn* conn, int* fd) {
    if (conn == nullptr || fd == nullptr) return kErrInval;
    *fd = obj<ConnObj>(conn)->ch->fd;
    return 0;
}

int conn_next_event(Conn* conn, ConnEvent* ev) {
    auto* c = obj<ConnObj>(conn);
    if (c == nullptr || ev == nullptr) return kErrInval;
    rdma_cm_event* e = nullptr;
    if (c->v->get_cm_event(c->ch, &e) != 0) return would_block() ? kErrNoEvent : fail("rdma_get_cm_event", errno);
    *ev = event_of(e->event);
    (void)c->v->ack_cm_event(e);
    if (*ev == kConnEstablished && c->native_flush && !c->flush_admitted) {
        c->flush_admitted = true;
        admit_flush(*c);
    }
    return 0;
}

int conn_apply_remote_peer_cfg(Conn* conn, const PeerCfg* cfg) {
    if (conn == nullptr || cfg == nullptr) return kErrInval;
    obj<ConnObj>(conn)->direct_write = obj<PeerCfgObj>(cfg)->direct;
    return 0;
}

int conn_get_cq(const Conn* conn, Cq** cq) {
    if (conn == nullptr || cq == nullptr) return kErrInval;
    *cq = handle<Cq>(const_cast<CqObj*>(&obj<ConnObj>(conn)->cq));
    return 0;
}

int conn_atomic_write_kind(const Conn* conn, AtomicWriteKind* kind) {
    if (conn == nullptr || kind == nullptr) return kErrInval;
    *kind = obj<ConnObj>(conn)->native_atomic ? AtomicWriteKind::native : AtomicWriteKind::fenced_write;
    return 0;
}

int conn_native_flush(const Conn* conn, bool* native) {
    if (conn == nullptr || native == nullptr) return kErrInval;
    *native = obj<ConnObj>(conn)->native_flush;
    return 0;
}

int conn_disconnect(Conn* conn) {
    auto* c = obj<ConnObj>(conn);
    if (c == nullptr) return kErrInval;
    return c->v->disconnect(c->id) == 0 ? 0 : fail("rdma_disconnect", errno);
}

int conn_delete(Conn** conn) {
    if (conn == nullptr) return kErrInval;
    destroy_conn(obj<ConnObj>(*conn));
    *conn = nullptr;
    return 0;
}

int cq_get_fd(const Cq* cq, int* fd) {
    if (cq == nullptr || fd == nullptr) return kErrInval;
    *fd = obj<CqObj>(cq)->ch->fd;
    return 0;
}

int cq_wait(Cq* cq) {
    auto* q = obj<CqObj>(cq);
    if (q == nullptr) return kErrInval;
    ibv_cq* got = nullptr;
    void* ctx = nullptr;
    if (q->v->get_cq_event(q->ch, &got, &ctx) != 0)
        return would_block() ? kErrNoCompletion : fail("ibv_get_cq_event", errno);
    q->v->ack_cq_events(got, 1);
    // Re-armed before the caller drains: a completion arriving meanwhile
    // raises a new event rather than being missed.
    if (int err = q->v->req_notify_cq(q->cq, 0); err != 0) return fail("ibv_req_notify_cq", err);
    return 0;
}

int cq_get_wc(Cq* cq, int num_entries, ibv_wc* wc, int* num_entries_got) {
    auto* q = obj<CqObj>(cq);
    if (q == nullptr || wc == nullptr || num_entries < 1) return kErrInval;
    const int n = q->v->poll_cq(q->cq, num_entries, wc);
    if (n < 0) return fail("ibv_poll_cq", -n);
    if (n == 0) return kErrNoCompletion;
    if (num_entries_got != nullptr) *num_entries_got = n;
    return 0;
}

} // namespace rpm::rdma::verbs
