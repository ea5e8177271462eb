// What every connection has, whichever side made it: a completion channel
// and one CQ for both queues, an RC queue pair (with atomic write and FLUSH
// enabled when the device has them, and room for inline data), and an
// 8-byte buffer that flush reads land in. Freed in the reverse order.
#include "transport/rdma/verbs/objects.hpp"

#include <cerrno>
#include <fcntl.h>

namespace rpm::rdma::verbs {
namespace {

// Inline data asked for: a control frame's header and a small write fit;
// the device may grant less (ConnObj::max_inline).
constexpr std::uint32_t kInlineWanted = 64;

int create_qp(ConnObj& c, const ConnCfgObj& cfg, std::uint32_t inline_bytes, bool flush) {
    ibv_qp_init_attr_ex a{};
    a.qp_type = IBV_QPT_RC;
    a.send_cq = c.cq.cq;
    a.recv_cq = c.cq.cq;
    a.cap.max_send_wr = cfg.sq;
    a.cap.max_recv_wr = cfg.rq;
    a.cap.max_send_sge = 1;
    a.cap.max_recv_sge = 1;
    a.cap.max_inline_data = inline_bytes;
    a.sq_sig_all = 0;
    a.pd = c.peer->pd;
    a.comp_mask = IBV_QP_INIT_ATTR_PD;
    // The extended post API (ibv_wr_atomic_write, ibv_wr_flush) needs its
    // opcodes named. A chain with a FLUSH goes through it whole
    // (post_chain_ex), so every opcode such a chain may hold is named too.
    std::uint64_t ops = 0;
    if (c.peer->atomic_write) ops |= IBV_QP_EX_WITH_ATOMIC_WRITE;
    if (flush) ops |= kQpExWithFlush | IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_SEND;
    if (ops != 0) {
        a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
        a.send_ops_flags = ops;
    }
    if (c.v->create_qp_ex(c.id, &a) != 0) return errno != 0 ? errno : EINVAL;
    c.qp = true;
    c.max_inline = a.cap.max_inline_data;
    c.native_atomic = c.peer->atomic_write;
    c.native_flush = flush;
    return 0;
}

} // namespace

int nonblocking(int fd) {
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) return fail("fcntl(O_NONBLOCK)", errno);
    return 0;
}

int build_conn(ConnObj& c, const ConnCfgObj& cfg) {
    ibv_context* ctx = c.peer->ctx;
    if (c.id->verbs != ctx) return kErrInval;  // the route leads to another device than the peer's
    c.cq.v = c.v;
    c.cq.ch = c.v->create_comp_channel(ctx);
    if (c.cq.ch == nullptr) return fail("ibv_create_comp_channel", errno);
    if (int r = nonblocking(c.cq.ch->fd); r != 0) return r;
    c.cq.cq = c.v->create_cq(ctx, static_cast<int>(cfg.cq), nullptr, c.cq.ch, 0);
    if (c.cq.cq == nullptr) return fail("ibv_create_cq", errno);
    if (int err = c.v->req_notify_cq(c.cq.cq, 0); err != 0) return fail("ibv_req_notify_cq", err);
    // A device without inline data gets a queue pair without: sends then
    // go from registered memory as they always can. One whose provider
    // will not take FLUSH in a queue pair gets one without: the connection
    // then has no native FLUSH (conn_native_flush), as on a device without.
    int err = 0;
    for (const bool flush : {c.peer->native_flush, false}) {
        err = create_qp(c, cfg, kInlineWanted, flush);
        if (err != 0) err = create_qp(c, cfg, 0, flush);
        if (err == 0 || !flush) break;
    }
    if (err != 0) return fail("rdma_create_qp_ex", err);
    c.raw_mr = c.v->reg_mr(c.peer->pd, &c.raw, sizeof c.raw, IBV_ACCESS_LOCAL_WRITE);
    if (c.raw_mr == nullptr) return fail("ibv_reg_mr (flush buffer)", errno);
    c.pending.reserve(cfg.sq);
    return 0;
}

void destroy_conn(ConnObj* c) noexcept {
    if (c == nullptr) return;
    const Verbs& v = *c->v;
    // The queue pair first: after it nothing can land in the flush buffer.
    if (c->qp) v.destroy_qp(c->id);
    if (c->raw_mr) (void)v.dereg_mr(c->raw_mr);
    if (c->cq.cq) (void)v.destroy_cq(c->cq.cq);
    if (c->cq.ch) (void)v.destroy_comp_channel(c->cq.ch);
    if (c->id) (void)v.destroy_id(c->id);
    if (c->ch) v.destroy_event_channel(c->ch);
    delete c;
}

} // namespace rpm::rdma::verbs
