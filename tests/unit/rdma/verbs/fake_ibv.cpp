// The fake ibverbs: protection domains, registrations with distinct keys,
// completion channels (eventfds), CQs that hold test-pushed completions
// and raise events only when armed, and the posting calls, which copy
// every work request and check it as a device would.
#include "fake_state.hpp"

#include <cerrno>
#include <cstring>
#include <unistd.h>

namespace rpm::rdma::verbs::fake::detail {
namespace {

/// The live registration an sge's lkey names, or nullptr.
ibv_mr* mr_of_lkey(std::uint32_t lkey) {
    for (auto& [mr, access] : st().mrs)
        if (mr->lkey == lkey) return mr;
    return nullptr;
}

/// An sge the device would DMA from or to: inside the registration its
/// lkey names, and writable when the device writes there.
void check_sge(const char* call, const ibv_sge& sge, bool device_writes) {
    ibv_mr* mr = mr_of_lkey(sge.lkey);
    if (mr == nullptr) return violation(std::string(call) + ": sge lkey names no live registration");
    const auto begin = reinterpret_cast<std::uintptr_t>(mr->addr);
    if (sge.addr < begin || sge.addr + sge.length > begin + mr->length)
        violation(std::string(call) + ": sge outside the registration its lkey names");
    if (device_writes && (st().mrs[mr] & IBV_ACCESS_LOCAL_WRITE) == 0)
        violation(std::string(call) + ": the device writes into a registration without IBV_ACCESS_LOCAL_WRITE");
}

const QpInfo* qp_info(ibv_qp* qp, const char* call) {
    const auto it = st().qps.find(qp);
    if (it != st().qps.end()) return &it->second;
    violation(std::string(call) + ": unknown queue pair");
    return nullptr;
}

SendWr copy_send_wr(const ibv_send_wr& wr, const QpInfo* qp) {
    SendWr w;
    w.wr_id = wr.wr_id;
    w.opcode = wr.opcode;
    w.send_flags = wr.send_flags;
    w.num_sge = wr.num_sge;
    w.remote_addr = wr.wr.rdma.remote_addr;
    w.rkey = wr.wr.rdma.rkey;
    if (wr.num_sge > 0 && wr.sg_list == nullptr) violation("post_send: num_sge > 0 and no sg_list");
    for (int i = 0; i < wr.num_sge && wr.sg_list != nullptr; ++i) w.sge.push_back(wr.sg_list[i]);
    const bool inl = (wr.send_flags & IBV_SEND_INLINE) != 0;
    std::size_t inline_bytes = 0;
    for (const auto& sge : w.sge) {
        if (inl) {  // copied now, as a device copies inline data at posting
            const auto* p = reinterpret_cast<const char*>(static_cast<std::uintptr_t>(sge.addr));
            w.inline_data.insert(w.inline_data.end(), p, p + sge.length);
            inline_bytes += sge.length;
        } else {
            check_sge("post_send", sge, wr.opcode == IBV_WR_RDMA_READ);
        }
    }
    if (inl && wr.opcode == IBV_WR_RDMA_READ) violation("post_send: IBV_SEND_INLINE on an RDMA read");
    if (inl && qp != nullptr && inline_bytes > qp->max_inline)
        violation("post_send: " + std::to_string(inline_bytes) + " inline bytes, the queue pair grants " +
                  std::to_string(qp->max_inline));
    return w;
}

} // namespace

int query_device_ex(ibv_context* ctx, ibv_device_attr_ex* attr) {
    (void)ctx;
    if (int e = enter("query_device_ex")) return e;
    *attr = ibv_device_attr_ex{};
    attr->device_cap_flags_ex = st().cfg.device_cap_flags_ex;
    return 0;
}

ibv_pd* alloc_pd(ibv_context* ctx) {
    if (int e = enter("alloc_pd")) {
        errno = e;
        return nullptr;
    }
    auto* pd = new ibv_pd{ctx, st().next++};
    st().pds.insert(pd);
    return pd;
}

int dealloc_pd(ibv_pd* pd) {
    if (int e = enter("dealloc_pd")) return e;
    auto& s = st();
    if (s.pds.count(pd) == 0) {
        violation("dealloc_pd: unknown protection domain");
        return EINVAL;
    }
    for (auto& [mr, access] : s.mrs)
        if (mr->pd == pd) {
            violation("dealloc_pd: a registration still uses it");
            return EBUSY;
        }
    for (auto& [qp, info] : s.qps)
        if (qp->pd == pd) {
            violation("dealloc_pd: a queue pair still uses it");
            return EBUSY;
        }
    s.pds.erase(pd);
    delete pd;
    return 0;
}

ibv_mr* reg_mr(ibv_pd* pd, void* addr, std::size_t len, int access) {
    if (int e = enter("reg_mr")) {
        errno = e;
        return nullptr;
    }
    auto& s = st();
    if (s.pds.count(pd) == 0) violation("reg_mr: unknown protection domain");
    if ((access & kAccessFlushPersistent) != 0 && s.cfg.refuse_flush_persistent) {
        errno = EINVAL;  // rxe: not every page of it is persistent memory
        return nullptr;
    }
    const std::uint32_t n = s.next++;
    // Distinct, recognisable keys: a test can tell an lkey from an rkey.
    auto* mr = new ibv_mr{pd != nullptr ? pd->context : nullptr, pd, addr, len, n, 0x1000 + n, 0x70000 + 3 * n};
    s.mrs[mr] = access;
    s.regs.push_back({mr, addr, len, access, mr->lkey, mr->rkey});
    return mr;
}

int dereg_mr(ibv_mr* mr) {
    if (int e = enter("dereg_mr")) return e;
    auto& s = st();
    const auto it = s.mrs.find(mr);
    if (it == s.mrs.end()) {
        violation("dereg_mr: unknown registration");
        return EINVAL;
    }
    s.deregs.push_back({mr, mr->addr, mr->length, it->second, mr->lkey, mr->rkey});
    s.mrs.erase(it);
    delete mr;
    return 0;
}

ibv_comp_channel* create_comp_channel(ibv_context* ctx) {
    if (int e = enter("create_comp_channel")) {
        errno = e;
        return nullptr;
    }
    auto* ch = new ibv_comp_channel{ctx, new_fd(), 0};
    st().comp_channels.insert(ch);
    return ch;
}

int destroy_comp_channel(ibv_comp_channel* ch) {
    if (int e = enter("destroy_comp_channel")) return e;
    auto& s = st();
    if (s.comp_channels.count(ch) == 0) {
        violation("destroy_comp_channel: unknown channel");
        return EINVAL;
    }
    for (auto& [cq, info] : s.cqs)
        if (cq->channel == ch) {
            violation("destroy_comp_channel: a CQ still uses it");
            return EBUSY;
        }
    s.cq_event_queue.erase(ch->fd);
    s.comp_channels.erase(ch);
    ::close(ch->fd);
    delete ch;
    return 0;
}

ibv_cq* create_cq(ibv_context* ctx, int cqe, void* cq_ctx, ibv_comp_channel* ch, int vector) {
    (void)vector;
    if (int e = enter("create_cq")) {
        errno = e;
        return nullptr;
    }
    auto& s = st();
    s.cm.cqe = cqe;
    if (cqe < 1) violation("create_cq: cqe < 1");
    if (ch != nullptr && s.comp_channels.count(ch) == 0) violation("create_cq: unknown completion channel");
    auto* cq = new ibv_cq{};
    cq->context = ctx;
    cq->channel = ch;
    cq->cq_context = cq_ctx;
    cq->handle = s.next++;
    cq->cqe = cqe;
    s.cqs[cq] = CqInfo{};
    return cq;
}

int destroy_cq(ibv_cq* cq) {
    if (int e = enter("destroy_cq")) return e;
    auto& s = st();
    const auto it = s.cqs.find(cq);
    if (it == s.cqs.end()) {
        violation("destroy_cq: unknown CQ");
        return EINVAL;
    }
    for (auto& [qp, info] : s.qps)
        if (qp->send_cq == cq || qp->recv_cq == cq) {
            violation("destroy_cq: a queue pair still uses it");
            return EBUSY;
        }
    if (it->second.acked != it->second.delivered)
        violation("destroy_cq: completion events not acknowledged (ibv_destroy_cq would hang)");
    s.cqs.erase(it);
    delete cq;
    return 0;
}

int req_notify_cq(ibv_cq* cq, int solicited_only) {
    (void)solicited_only;
    if (int e = enter("req_notify_cq")) return e;
    const auto it = st().cqs.find(cq);
    if (it == st().cqs.end()) {
        violation("req_notify_cq: unknown CQ");
        return EINVAL;
    }
    it->second.armed = true;
    return 0;
}

int get_cq_event(ibv_comp_channel* ch, ibv_cq** cq, void** cq_ctx) {
    if (int e = enter("get_cq_event")) return fail_errno(e);
    auto& s = st();
    if (s.comp_channels.count(ch) == 0) {
        violation("get_cq_event: unknown completion channel");
        return fail_errno(EINVAL);
    }
    int& pending = s.cq_event_queue[ch->fd];
    if (pending == 0) {
        if (blocking(ch->fd)) violation("get_cq_event: nothing pending on a blocking channel (would block for ever)");
        return fail_errno(EAGAIN);
    }
    --pending;
    for (auto& [q, info] : s.cqs)
        if (q->channel == ch) {
            ++info.delivered;
            *cq = q;
            *cq_ctx = q->cq_context;
            return 0;
        }
    violation("get_cq_event: no CQ on that channel");
    return fail_errno(EINVAL);
}

void ack_cq_events(ibv_cq* cq, unsigned n) {
    (void)enter("ack_cq_events");
    auto& s = st();
    const auto it = s.cqs.find(cq);
    if (it == s.cqs.end()) return violation("ack_cq_events: unknown CQ");
    it->second.acked += n;
    s.cq_acks += n;
    if (it->second.acked > it->second.delivered) violation("ack_cq_events: more events acknowledged than delivered");
}

int poll_cq(ibv_cq* cq, int n, ibv_wc* wc) {
    if (int e = enter("poll_cq")) return -e;
    const auto it = st().cqs.find(cq);
    if (it == st().cqs.end()) {
        violation("poll_cq: unknown CQ");
        return -EINVAL;
    }
    int got = 0;
    for (auto& q = it->second.wcs; got < n && !q.empty(); ++got) {
        wc[got] = q.front();
        q.pop_front();
    }
    return got;
}

int post_send(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad) {
    const int e = enter("post_send");
    const QpInfo* info = qp_info(qp, "post_send");
    PostSend p;
    p.qp = qp;
    for (const ibv_send_wr* w = wr; w != nullptr; w = w->next) p.chain.push_back(copy_send_wr(*w, info));
    if (info != nullptr && p.chain.size() > info->max_send_wr)
        violation("post_send: a chain longer than the send queue (" + std::to_string(info->max_send_wr) + ")");
    p.result = e;
    st().sends.push_back(std::move(p));
    if (e != 0 && bad != nullptr) *bad = wr;
    return e;
}

int post_recv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad) {
    const int e = enter("post_recv");
    (void)qp_info(qp, "post_recv");
    PostRecv p;
    p.qp = qp;
    for (const ibv_recv_wr* w = wr; w != nullptr; w = w->next) {
        RecvWr r{w->wr_id, w->num_sge, {}};
        for (int i = 0; i < w->num_sge; ++i) {
            r.sge.push_back(w->sg_list[i]);
            check_sge("post_recv", w->sg_list[i], true);
        }
        p.chain.push_back(std::move(r));
    }
    if (e == 0) st().recvs.push_back(std::move(p));
    if (e != 0 && bad != nullptr) *bad = wr;
    return e;
}

int post_atomic_write(ibv_qp* qp, std::uint64_t wr_id, unsigned wr_flags, std::uint32_t rkey,
                      std::uint64_t remote_addr, const void* value) {
    const int e = enter("post_atomic_write");
    const QpInfo* info = qp_info(qp, "post_atomic_write");
    if (info != nullptr && (info->send_ops_flags & IBV_QP_EX_WITH_ATOMIC_WRITE) == 0)
        violation("post_atomic_write: the queue pair was created without IBV_QP_EX_WITH_ATOMIC_WRITE");
    AtomicWrite a{qp, wr_id, wr_flags, rkey, remote_addr, {}, e};
    std::memcpy(a.value.data(), value, a.value.size());
    st().atomics.push_back(a);
    return e;
}

namespace {

// The opcode a chain through the extended post API holds needs its
// IBV_QP_EX_WITH_* named when the queue pair was made (rxe installs only
// those ibv_wr_* functions).
std::uint64_t ex_op_flag(ibv_wr_opcode op) {
    switch (op) {
    case IBV_WR_RDMA_WRITE: return IBV_QP_EX_WITH_RDMA_WRITE;
    case IBV_WR_RDMA_READ: return IBV_QP_EX_WITH_RDMA_READ;
    case IBV_WR_SEND: return IBV_QP_EX_WITH_SEND;
    default: return op == kWrFlush ? kQpExWithFlush : 0;
    }
}

SendWr copy_ex_wr(const WorkRequest& w, const QpInfo* qp) {
    if (w.wr.opcode != kWrFlush) {
        ibv_send_wr wr = w.wr;
        wr.sg_list = wr.num_sge > 0 ? const_cast<ibv_sge*>(&w.sge) : nullptr;
        wr.next = nullptr;
        return copy_send_wr(wr, qp);
    }
    SendWr f;
    f.wr_id = w.wr.wr_id;
    f.opcode = w.wr.opcode;
    f.send_flags = w.wr.send_flags;
    f.num_sge = w.wr.num_sge;
    f.remote_addr = w.wr.wr.rdma.remote_addr;
    f.rkey = w.wr.wr.rdma.rkey;
    f.flush_len = w.flush_len;
    f.flush_type = w.flush_type;
    f.flush_level = w.flush_level;
    if (w.wr.num_sge != 0) violation("post_chain_ex: a FLUSH carries no scatter entry");
    if ((w.wr.send_flags & IBV_SEND_INLINE) != 0) violation("post_chain_ex: IBV_SEND_INLINE on a FLUSH");
    return f;
}

} // namespace

int post_chain_ex(ibv_qp* qp, const WorkRequest* wrs, std::size_t n) {
    const int e = enter("post_chain_ex");
    const QpInfo* info = qp_info(qp, "post_chain_ex");
    PostSend p;
    p.qp = qp;
    p.extended = true;
    p.result = e;
    if (n == 0) violation("post_chain_ex: an empty chain");
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t need = ex_op_flag(wrs[i].wr.opcode);
        if (need == 0) violation("post_chain_ex: an opcode the extended post API is not given");
        else if (info != nullptr && (info->send_ops_flags & need) == 0)
            violation("post_chain_ex: opcode " + std::to_string(wrs[i].wr.opcode) +
                      " on a queue pair created without its IBV_QP_EX_WITH_* flag");
        p.chain.push_back(copy_ex_wr(wrs[i], info));
    }
    if (info != nullptr && p.chain.size() > info->max_send_wr)
        violation("post_chain_ex: a chain longer than the send queue (" + std::to_string(info->max_send_wr) + ")");
    st().sends.push_back(std::move(p));
    return e;
}

} // namespace rpm::rdma::verbs::fake::detail
