// The real rdma-core table. ibv_post_send, ibv_poll_cq and friends are
// inline in verbs.h (they jump through the provider's ops): wrapped here so
// the table can hold them.
#include "transport/rdma/verbs/verbs.hpp"

#include "transport/rdma/api.hpp"

#include <cerrno>

namespace rpm::rdma::verbs {
namespace {

int query_device_ex(ibv_context* ctx, ibv_device_attr_ex* attr) { return ::ibv_query_device_ex(ctx, nullptr, attr); }
int req_notify_cq(ibv_cq* cq, int solicited_only) { return ::ibv_req_notify_cq(cq, solicited_only); }
int poll_cq(ibv_cq* cq, int n, ibv_wc* wc) { return ::ibv_poll_cq(cq, n, wc); }
int post_send(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad) { return ::ibv_post_send(qp, wr, bad); }
int post_recv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad) { return ::ibv_post_recv(qp, wr, bad); }
std::uint16_t get_src_port(rdma_cm_id* id) { return ::rdma_get_src_port(id); }
int post_srq_recv(ibv_srq* srq, ibv_recv_wr* wr, ibv_recv_wr** bad) { return ::ibv_post_srq_recv(srq, wr, bad); }
ibv_mr* reg_mr(ibv_pd* pd, void* addr, std::size_t len, int access) { return ::ibv_reg_mr(pd, addr, len, access); }

int post_atomic_write(ibv_qp* qp, std::uint64_t wr_id, unsigned wr_flags, std::uint32_t rkey,
                      std::uint64_t remote_addr, const void* value) {
    ibv_qp_ex* qpx = ::ibv_qp_to_qp_ex(qp);
    if (qpx == nullptr) return EINVAL;
    ::ibv_wr_start(qpx);
    qpx->wr_id = wr_id;
    qpx->wr_flags = wr_flags;
    ::ibv_wr_atomic_write(qpx, rkey, remote_addr, value);
    return ::ibv_wr_complete(qpx);
}

#if RPM_HAVE_IBV_WR_FLUSH
// rpm's own names (verbs.hpp) are these, where the headers have them.
static_assert(kWrFlush == IBV_WR_FLUSH && kWcFlush == IBV_WC_FLUSH);
static_assert(kAccessFlushGlobal == IBV_ACCESS_FLUSH_GLOBAL && kAccessFlushPersistent == IBV_ACCESS_FLUSH_PERSISTENT);
static_assert(kQpExWithFlush == IBV_QP_EX_WITH_FLUSH);
static_assert(kFlushGlobal == IBV_FLUSH_GLOBAL && kFlushPersistentType == IBV_FLUSH_PERSISTENT);
static_assert(kFlushRange == IBV_FLUSH_RANGE && kFlushMr == IBV_FLUSH_MR);

// A write's or send's data: inline (the device copies it now) or its
// scatter entry.
void set_data(ibv_qp_ex* qpx, const WorkRequest& w) {
    if (w.wr.num_sge == 0) return ::ibv_wr_set_sge_list(qpx, 0, nullptr);
    if ((w.wr.send_flags & IBV_SEND_INLINE) != 0)
        return ::ibv_wr_set_inline_data(qpx, reinterpret_cast<void*>(static_cast<std::uintptr_t>(w.sge.addr)),
                                        w.sge.length);
    ::ibv_wr_set_sge(qpx, w.sge.lkey, w.sge.addr, w.sge.length);
}

int post_chain_ex(ibv_qp* qp, const WorkRequest* wrs, std::size_t n) {
    ibv_qp_ex* qpx = ::ibv_qp_to_qp_ex(qp);
    if (qpx == nullptr) return EINVAL;
    ::ibv_wr_start(qpx);
    for (std::size_t i = 0; i < n; ++i) {
        const WorkRequest& w = wrs[i];
        const auto& rdma = w.wr.wr.rdma;
        qpx->wr_id = w.wr.wr_id;
        // IBV_SEND_INLINE stays although the data goes by ibv_wr_set_inline_data:
        // rxe's kernel side takes the bytes from the work request's inline
        // area only when the flag says so (else it fails the packet).
        qpx->wr_flags = w.wr.send_flags;
        switch (w.wr.opcode) {
        case IBV_WR_RDMA_WRITE: ::ibv_wr_rdma_write(qpx, rdma.rkey, rdma.remote_addr); break;
        case IBV_WR_RDMA_READ: ::ibv_wr_rdma_read(qpx, rdma.rkey, rdma.remote_addr); break;
        case IBV_WR_SEND: ::ibv_wr_send(qpx); break;
        case IBV_WR_FLUSH:
            ::ibv_wr_flush(qpx, rdma.rkey, rdma.remote_addr, w.flush_len, w.flush_type, w.flush_level);
            continue;  // a FLUSH carries no data
        default: ::ibv_wr_abort(qpx); return EINVAL;
        }
        set_data(qpx, w);
    }
    return ::ibv_wr_complete(qpx);
}
#endif

} // namespace

const Verbs& real_verbs() noexcept {
    static const Verbs v{
        .create_event_channel = &::rdma_create_event_channel,
        .destroy_event_channel = &::rdma_destroy_event_channel,
        .create_id = &::rdma_create_id,
        .destroy_id = &::rdma_destroy_id,
        .bind_addr = &::rdma_bind_addr,
        .resolve_addr = &::rdma_resolve_addr,
        .resolve_route = &::rdma_resolve_route,
        .listen = &::rdma_listen,
        .get_cm_event = &::rdma_get_cm_event,
        .ack_cm_event = &::rdma_ack_cm_event,
        .migrate_id = &::rdma_migrate_id,
        .create_qp_ex = &::rdma_create_qp_ex,
        .query_qp = &::ibv_query_qp,
        .modify_qp = &::ibv_modify_qp,
        .destroy_qp = &::rdma_destroy_qp,
        .connect = &::rdma_connect,
        .accept = &::rdma_accept,
        .reject = &::rdma_reject,
        .disconnect = &::rdma_disconnect,
        .get_src_port = &get_src_port,
        .query_device_ex = &query_device_ex,
        .alloc_pd = &::ibv_alloc_pd,
        .dealloc_pd = &::ibv_dealloc_pd,
        .reg_mr = &reg_mr,
        .dereg_mr = &::ibv_dereg_mr,
        .create_comp_channel = &::ibv_create_comp_channel,
        .destroy_comp_channel = &::ibv_destroy_comp_channel,
        .create_cq = &::ibv_create_cq,
        .destroy_cq = &::ibv_destroy_cq,
        .req_notify_cq = &req_notify_cq,
        .get_cq_event = &::ibv_get_cq_event,
        .ack_cq_events = &::ibv_ack_cq_events,
        .poll_cq = &poll_cq,
        .post_send = &post_send,
        .post_recv = &post_recv,
        .post_atomic_write = &post_atomic_write,
#if RPM_HAVE_IBV_WR_FLUSH
        .post_chain_ex = &post_chain_ex,
#else
        .post_chain_ex = nullptr,  // rdma-core 44: no ibv_wr_flush, so no native FLUSH
#endif
        .create_srq = &::ibv_create_srq,
        .destroy_srq = &::ibv_destroy_srq,
        .post_srq_recv = &post_srq_recv,
    };
    return v;
}

} // namespace rpm::rdma::verbs
