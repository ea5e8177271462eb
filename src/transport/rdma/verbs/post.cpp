// The data path: each call builds one work request. With kDeferDoorbell it
// joins the connection's pending chain; otherwise it is posted at once,
// behind any pending ones, in a single ibv_post_send (one doorbell: on
// Soft-RoCE one system call), or, for a chain holding a native FLUSH, one
// ibv_wr_start ... ibv_wr_complete (post_chain_ex). Small sends and writes
// go inline, so the device copies them at posting rather than reading them
// by DMA.
#include "transport/rdma/verbs/objects.hpp"

#include <cerrno>

namespace rpm::rdma::verbs {
namespace {

unsigned signal_flags(int flags) noexcept {
    // kCompletionOnError: unsignaled; RC still reports a failure.
    return (flags & kCompletionAlways) == kCompletionAlways ? unsigned{IBV_SEND_SIGNALED} : 0U;
}

bool valid_flags(int flags) noexcept {
    return (flags & ~(kCompletionAlways | kDeferDoorbell)) == 0 && (flags & kCompletionOnError) != 0;
}

bool inside(std::uint64_t off, std::uint64_t len, std::uint64_t size) noexcept {
    return off <= size && len <= size - off;
}

std::uint64_t local_addr(const LocalMrObj& m, std::size_t off) noexcept {
    return reinterpret_cast<std::uintptr_t>(m.mr->addr) + off;
}

int post_chain(ConnObj& c) {
    if (c.pending.empty()) return 0;
    int err = 0;
    const char* call = "ibv_post_send";
    if (c.pending_flush) {
        // rdma-core has no ibv_send_wr form of FLUSH: the whole chain goes
        // through the extended post API, still one doorbell.
        err = c.v->post_chain_ex(c.id->qp, c.pending.data(), c.pending.size());
        call = "ibv_wr_complete (a chain with FLUSH)";
    } else {
        for (std::size_t i = 0; i < c.pending.size(); ++i) {
            auto& p = c.pending[i];
            p.wr.sg_list = p.wr.num_sge > 0 ? &p.sge : nullptr;
            p.wr.next = i + 1 < c.pending.size() ? &c.pending[i + 1].wr : nullptr;
        }
        ibv_send_wr* bad = nullptr;
        err = c.v->post_send(c.id->qp, &c.pending.front().wr, &bad);
    }
    c.pending.clear();
    c.pending_flush = false;
    // Part of the chain may be on the queue: the connection is no longer
    // in a known state, and the caller fails it.
    return err == 0 ? 0 : fail(call, err, err == ENOMEM ? kErrNoMem : kErrProvider);
}

int queue(ConnObj& c, const Pending& p, int flags) {
    c.pending.push_back(p);
    if (p.wr.opcode == kWrFlush) c.pending_flush = true;
    return (flags & kDeferDoorbell) != 0 ? 0 : post_chain(c);
}

Pending rdma_op(ibv_wr_opcode op, const RemoteMrObj& r, std::size_t r_off, std::uint64_t l_addr, std::size_t len,
                std::uint32_t lkey, int flags, const void* ctx) {
    Pending p;
    p.wr.wr_id = reinterpret_cast<std::uintptr_t>(ctx);
    p.wr.opcode = op;
    p.wr.send_flags = signal_flags(flags);
    p.wr.wr.rdma.remote_addr = r.addr + r_off;
    p.wr.wr.rdma.rkey = r.rkey;
    p.sge = {l_addr, static_cast<std::uint32_t>(len), lkey};
    p.wr.num_sge = len > 0 ? 1 : 0;
    return p;
}

} // namespace

int write(Conn* conn, const RemoteMr* dst, std::size_t dst_off, const LocalMr* src, std::size_t src_off,
          std::size_t len, int flags, const void* ctx) {
    auto* c = obj<ConnObj>(conn);
    const auto* r = obj<RemoteMrObj>(dst);
    const auto* m = obj<LocalMrObj>(src);
    if (c == nullptr || r == nullptr || m == nullptr || !valid_flags(flags) || !inside(dst_off, len, r->size) ||
        !inside(src_off, len, m->mr->length) || len > UINT32_MAX)
        return kErrInval;
    Pending p = rdma_op(IBV_WR_RDMA_WRITE, *r, dst_off, local_addr(*m, src_off), len, m->mr->lkey, flags, ctx);
    if (len > 0 && len <= c->max_inline) p.wr.send_flags |= IBV_SEND_INLINE;
    return queue(*c, p, flags);
}

int read(Conn* conn, LocalMr* dst, std::size_t dst_off, const RemoteMr* src, std::size_t src_off,
         std::size_t len, int flags, const void* ctx) {
    auto* c = obj<ConnObj>(conn);
    const auto* m = obj<LocalMrObj>(dst);
    const auto* r = obj<RemoteMrObj>(src);
    if (c == nullptr || r == nullptr || m == nullptr || !valid_flags(flags) || !inside(src_off, len, r->size) ||
        !inside(dst_off, len, m->mr->length) || len > UINT32_MAX)
        return kErrInval;
    return queue(*c, rdma_op(IBV_WR_RDMA_READ, *r, src_off, local_addr(*m, dst_off), len, m->mr->lkey, flags, ctx),
                 flags);
}

int atomic_write(Conn* conn, const RemoteMr* dst, std::size_t dst_off, const char src[8], int flags,
                 const void* ctx) {
    auto* c = obj<ConnObj>(conn);
    const auto* r = obj<RemoteMrObj>(dst);
    if (c == nullptr || r == nullptr || src == nullptr || !valid_flags(flags) || !inside(dst_off, 8, r->size) ||
        (r->addr + dst_off) % kAtomicWriteAlignment != 0)
        return kErrInval;
    if (c->native_atomic) {
        // The extended post API is a chain of its own: ring what is pending first.
        if (int ret = post_chain(*c); ret != 0) return ret;
        const int err = c->v->post_atomic_write(c->id->qp, reinterpret_cast<std::uintptr_t>(ctx),
                                                signal_flags(flags), r->rkey, r->addr + dst_off, src);
        return err == 0 ? 0 : fail("ibv_wr_complete (atomic write)", err);
    }
    // Without the device's atomic write: an 8-byte write, inline (the value
    // is copied when posted) and fenced behind every earlier read, as
    // librpma does; one RDMA write of 8 aligned bytes is placed whole.
    if (c->max_inline < 8) return kErrNoSupp;
    Pending p = rdma_op(IBV_WR_RDMA_WRITE, *r, dst_off, reinterpret_cast<std::uintptr_t>(src), 8, 0, flags, ctx);
    p.wr.send_flags |= IBV_SEND_INLINE | IBV_SEND_FENCE;
    c->pending.push_back(p);
    return post_chain(*c);
}

int flush(Conn* conn, const RemoteMr* dst, std::size_t dst_off, std::size_t len, FlushType type, int flags,
          const void* ctx) {
    auto* c = obj<ConnObj>(conn);
    const auto* r = obj<RemoteMrObj>(dst);
    (void)len;  // a read covers every earlier write on the connection, whatever the range
    if (c == nullptr || r == nullptr || !valid_flags(flags) || !inside(dst_off, 8, r->size)) return kErrInval;
    const int needed = type == kFlushPersistent ? kUsageFlushPersistent : kUsageFlushVisibility;
    // Persistence by a read needs the remote writes to go straight to PMem
    // (the peer's configuration) and memory registered for it.
    if ((r->usage & needed) == 0 || (type == kFlushPersistent && !c->direct_write)) return kErrNoSupp;
    return queue(*c, rdma_op(IBV_WR_RDMA_READ, *r, dst_off, reinterpret_cast<std::uintptr_t>(&c->raw), 8,
                             c->raw_mr->lkey, flags, ctx),
                 flags);
}

int flush_native(Conn* conn, const RemoteMr* dst, std::size_t dst_off, std::size_t len, FlushType type, int flags,
                 const void* ctx) {
    auto* c = obj<ConnObj>(conn);
    const auto* r = obj<RemoteMrObj>(dst);
    // IBTA's FLUSH names its range with a 32-bit length, and an empty one
    // makes nothing durable.
    if (c == nullptr || r == nullptr || !valid_flags(flags) || len == 0 || len > UINT32_MAX ||
        !inside(dst_off, len, r->size))
        return kErrInval;
    // The queue pair must have been made for it (the device's FLUSH, this
    // build's rdma-core), and the region registered for that type.
    const int needed = type == kFlushPersistent ? kUsageFlushPersistent : kUsageFlushVisibility;
    if (!c->native_flush || (r->usage & needed) == 0) return kErrNoSupp;
    Pending p = rdma_op(kWrFlush, *r, dst_off, 0, 0, 0, flags, ctx);
    p.flush_len = len;
    p.flush_type = type == kFlushPersistent ? kFlushPersistentType : kFlushGlobal;
    p.flush_level = kFlushRange;  // the range written, not the whole registration
    return queue(*c, p, flags);
}

int send(Conn* conn, const LocalMr* src, std::size_t offset, std::size_t len, int flags, const void* ctx) {
    auto* c = obj<ConnObj>(conn);
    const auto* m = obj<LocalMrObj>(src);
    if (c == nullptr || m == nullptr || !valid_flags(flags) || !inside(offset, len, m->mr->length) ||
        len > UINT32_MAX)
        return kErrInval;
    Pending p;
    p.wr.wr_id = reinterpret_cast<std::uintptr_t>(ctx);
    p.wr.opcode = IBV_WR_SEND;
    p.wr.send_flags = signal_flags(flags);
    if (len > 0 && len <= c->max_inline) p.wr.send_flags |= IBV_SEND_INLINE;
    p.sge = {local_addr(*m, offset), static_cast<std::uint32_t>(len), m->mr->lkey};
    p.wr.num_sge = len > 0 ? 1 : 0;
    return queue(*c, p, flags);
}

int post_recv(ConnObj& c, const LocalMrObj& m, std::size_t offset, std::size_t len, const void* ctx) {
    if (!inside(offset, len, m.mr->length) || len > UINT32_MAX) return kErrInval;
    ibv_sge sge{local_addr(m, offset), static_cast<std::uint32_t>(len), m.mr->lkey};
    ibv_recv_wr wr{};
    wr.wr_id = reinterpret_cast<std::uintptr_t>(ctx);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    const int err = c.v->post_recv(c.id->qp, &wr, &bad);
    return err == 0 ? 0 : fail("ibv_post_recv", err);
}

int recv(Conn* conn, LocalMr* dst, std::size_t offset, std::size_t len, const void* ctx) {
    auto* c = obj<ConnObj>(conn);
    const auto* m = obj<LocalMrObj>(dst);
    if (c == nullptr || m == nullptr) return kErrInval;
    return post_recv(*c, *m, offset, len, ctx);
}

int ring(Conn* conn) {
    auto* c = obj<ConnObj>(conn);
    if (c == nullptr) return kErrInval;
    return post_chain(*c);
}

} // namespace rpm::rdma::verbs
