// A fake rdma-core for the NVMe/RDMA target queue's tests (no device here),
// in the style of librpma's unit tests: a verbs::Verbs table whose
// functions make fake objects (PD, MRs, SRQ, a completion channel on a real
// eventfd, CQs, QPs), DEEP-COPY every work request they are handed (the
// queue posts from structs on its stack, and an inline SEND's bytes are
// the device's from posting time on), and let the test play the device:
// deliver a capsule into the SRQ's oldest posted buffer, finish or fail the
// sends it holds.
//
// Like a device it checks what it can and lists each misuse in
// violations(): an sge outside a live MR or with the wrong lkey, inline
// data beyond what the QP was granted, more send WRs in flight than
// max_send_wr, a buffer posted to the SRQ twice, a CQ destroyed with
// events not acknowledged, objects freed in an order rdma-core refuses.
//
// The table is plain function pointers, so one FakeVerbs is "current" at
// a time (the fixture's). Its state is behind a mutex: a test may close
// the queue from another thread while serve() polls.
#pragma once

#include "transport/rdma/verbs/verbs.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace rpm::nvmf::target::test {

/// One work request of a posted chain, copied field by field.
struct SendWr {
    std::uint64_t wr_id = 0;
    ibv_wr_opcode opcode{};
    unsigned send_flags = 0;
    int num_sge = 0;
    std::vector<ibv_sge> sge;
    std::uint64_t remote_addr = 0;      ///< wr.rdma.remote_addr
    std::uint32_t rkey = 0;             ///< wr.rdma.rkey
    std::uint32_t invalidate_rkey = 0;  ///< IBV_WR_SEND_WITH_INV only
    /// What a WRITE or SEND carries, read when posted (the device's copy).
    std::vector<std::uint8_t> bytes;
};
/// One ibv_post_send: the chain (`next` order) it carried.
struct PostSend {
    std::uint64_t seq = 0;  ///< order among all posts, send and SRQ
    ibv_qp* qp = nullptr;
    std::vector<SendWr> chain;
};
struct SrqRecv {
    std::uint64_t seq = 0;
    std::uint64_t wr_id = 0;
    int num_sge = 0;
    std::vector<ibv_sge> sge;
};

class FakeVerbs {
public:
    FakeVerbs() {
        current() = this;
        auto& t = table_;
        t.alloc_pd = [](ibv_context* ctx) { return me().alloc_pd(ctx); };
        t.dealloc_pd = [](ibv_pd* pd) { return me().dealloc_pd(pd); };
        t.reg_mr = [](ibv_pd* pd, void* a, std::size_t n, int acc) { return me().reg_mr(pd, a, n, acc); };
        t.dereg_mr = [](ibv_mr* mr) { return me().dereg_mr(mr); };
        t.create_srq = [](ibv_pd* pd, ibv_srq_init_attr* a) { return me().create_srq(pd, a); };
        t.destroy_srq = [](ibv_srq* s) { return me().destroy_srq(s); };
        t.post_srq_recv = [](ibv_srq* s, ibv_recv_wr* wr, ibv_recv_wr** bad) { return me().post_srq_recv(s, wr, bad); };
        t.create_comp_channel = [](ibv_context* ctx) { return me().create_comp_channel(ctx); };
        t.destroy_comp_channel = [](ibv_comp_channel* ch) { return me().destroy_comp_channel(ch); };
        t.create_cq = [](ibv_context* ctx, int n, void* c, ibv_comp_channel* ch, int) { return me().create_cq(ctx, n, c, ch); };
        t.destroy_cq = [](ibv_cq* cq) { return me().destroy_cq(cq); };
        t.req_notify_cq = [](ibv_cq* cq, int) { return me().req_notify_cq(cq); };
        t.get_cq_event = [](ibv_comp_channel* ch, ibv_cq** cq, void** c) { return me().get_cq_event(ch, cq, c); };
        t.ack_cq_events = [](ibv_cq* cq, unsigned n) { me().ack_cq_events(cq, n); };
        t.poll_cq = [](ibv_cq* cq, int n, ibv_wc* wc) { return me().poll_cq(cq, n, wc); };
        t.create_qp_ex = [](rdma_cm_id* id, ibv_qp_init_attr_ex* a) { return me().create_qp_ex(id, a); };
        t.destroy_qp = [](rdma_cm_id* id) { me().destroy_qp(id); };
        t.post_send = [](ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad) { return me().post_send(qp, wr, bad); };
        t.disconnect = [](rdma_cm_id* id) { return me().record_cm(me().disconnects_, id); };
        t.destroy_id = [](rdma_cm_id* id) { return me().record_cm(me().destroyed_ids_, id); };
        // Everything else stays null: a call the queue should not make crashes the test.
    }
    ~FakeVerbs() {
        for (auto* p : pds_) delete p;
        for (auto& [mr, _] : mrs_) delete mr;
        for (auto* s : srqs_) delete s;
        for (auto& [cq, _] : cqs_) delete cq;
        for (auto& [qp, _] : qps_) delete qp;
        for (auto* ch : channels_) {
            ::close(ch->fd);
            delete ch;
        }
        current() = nullptr;
    }
    FakeVerbs(const FakeVerbs&) = delete;
    FakeVerbs& operator=(const FakeVerbs&) = delete;

    const rdma::verbs::Verbs& table() const { return table_; }
    ibv_context* context() { return &ctx_; }

    // ---- the device, as the test plays it -----------------------------------------
    /// Called (outside the fake's lock) after each successful post_send:
    /// a test answers a READ from here, as the host's NIC would.
    std::function<void(const PostSend&)> on_send;
    /// The next post_send fails with this (0: none).
    int fail_post_send = 0;

    /// A capsule arrives: `bytes` land in the SRQ's oldest posted buffer and
    /// a receive completion names it. RETURN VALUE: the slot (wr_id) used.
    std::uint64_t deliver(const std::vector<std::uint8_t>& bytes, ibv_wc_status status = IBV_WC_SUCCESS) {
        std::lock_guard lock(mu_);
        if (posted_.empty()) {
            violations_.push_back("a capsule arrived with no buffer posted to the SRQ");
            return ~0ull;
        }
        const auto r = posted_.front();
        posted_.pop_front();
        if (bytes.size() > r.sge[0].length) violations_.push_back("capsule larger than its buffer");
        std::memcpy(reinterpret_cast<void*>(r.sge[0].addr), bytes.data(), std::min<std::size_t>(bytes.size(), r.sge[0].length));
        ibv_wc wc{};
        wc.wr_id = r.wr_id;
        wc.status = status;
        wc.opcode = IBV_WC_RECV;
        wc.byte_len = std::uint32_t(bytes.size());
        push_wc(wc);
        return r.wr_id;
    }

    /// The device finishes every send WR in flight: one completion per
    /// signaled WR (covering the unsignaled before it), as a QP with
    /// sq_sig_all = 0 reports them. RETURN VALUE: completions queued.
    int complete_sends() {
        std::lock_guard lock(mu_);
        int n = 0;
        for (auto& [qp, q] : qps_) {
            while (!q.inflight.empty()) {
                const auto it = std::find_if(q.inflight.begin(), q.inflight.end(), [](const Inflight& w) { return w.signaled; });
                if (it == q.inflight.end()) break;  // unsignaled WRs with no signaled one after: no completion yet
                ibv_wc wc{};
                wc.wr_id = it->wr_id;
                wc.status = IBV_WC_SUCCESS;
                wc.opcode = it->opcode == IBV_WR_RDMA_READ ? IBV_WC_RDMA_READ
                          : it->opcode == IBV_WR_RDMA_WRITE ? IBV_WC_RDMA_WRITE : IBV_WC_SEND;
                wc.qp_num = qp->qp_num;
                q.inflight.erase(q.inflight.begin(), it + 1);
                push_wc(wc);
                ++n;
            }
        }
        return n;
    }

    /// The oldest send WR in flight fails with `status` (an error completes
    /// even an unsignaled WR, with its own wr_id); the QP is then in error
    /// and flushes the rest, each with IBV_WC_WR_FLUSH_ERR.
    void fail_sends(ibv_wc_status status) {
        std::lock_guard lock(mu_);
        for (auto& [qp, q] : qps_) {
            bool first = true;
            for (const auto& w : q.inflight) {
                ibv_wc wc{};
                wc.wr_id = w.wr_id;
                wc.status = first ? status : IBV_WC_WR_FLUSH_ERR;
                wc.opcode = IBV_WC_SEND;  // undefined on error: the queue must not read it
                wc.qp_num = qp->qp_num;
                push_wc(wc);
                first = false;
            }
            q.inflight.clear();
        }
    }

    // ---- what the queue did ----------------------------------------------------------
    std::vector<PostSend> sends() const { return locked(sends_); }
    std::vector<SrqRecv> srq_posts() const { return locked(srq_posts_); }
    std::vector<ibv_qp_init_attr_ex> qp_attrs() const { return locked(qp_attrs_); }
    std::vector<rdma_cm_id*> disconnects() const { return locked(disconnects_); }
    std::vector<rdma_cm_id*> destroyed_ids() const { return locked(destroyed_ids_); }
    std::vector<std::string> violations() const { return locked(violations_); }
    /// SRQ posts of buffer `slot`, and of any, at or after post number `from_seq`.
    std::size_t srq_posts_of(std::uint64_t slot, std::uint64_t from_seq = 0) const {
        std::lock_guard lock(mu_);
        return std::size_t(std::count_if(srq_posts_.begin(), srq_posts_.end(),
                                         [&](const SrqRecv& r) { return r.wr_id == slot && r.seq >= from_seq; }));
    }
    std::uint64_t next_seq() const {
        std::lock_guard lock(mu_);
        return seq_;
    }
    /// Buffers posted to the SRQ and not yet taken by a capsule.
    std::size_t srq_posted() const {
        std::lock_guard lock(mu_);
        return posted_.size();
    }
    /// The live MR whose lkey is `lkey`, or nullptr.
    const ibv_mr* mr_of(std::uint32_t lkey) const {
        std::lock_guard lock(mu_);
        for (const auto& [mr, _] : mrs_)
            if (mr->lkey == lkey) return mr;
        return nullptr;
    }
    /// Objects made and not yet destroyed.
    std::size_t live() const {
        std::lock_guard lock(mu_);
        return pds_.size() + mrs_.size() + srqs_.size() + channels_.size() + cqs_.size() + qps_.size();
    }

private:
    struct Inflight {
        std::uint64_t wr_id;
        ibv_wr_opcode opcode;
        bool signaled;
    };
    struct Qp {
        std::uint32_t max_send_wr = 0, max_inline = 0;
        std::deque<Inflight> inflight;
    };
    struct Cq {
        std::deque<ibv_wc> wcs;
        bool armed = false;
        unsigned delivered = 0, acked = 0;
    };

    static FakeVerbs*& current() {
        static FakeVerbs* p = nullptr;
        return p;
    }
    static FakeVerbs& me() { return *current(); }
    template <class T>
    T locked(const T& v) const {
        std::lock_guard lock(mu_);
        return v;
    }
    int record_cm(std::vector<rdma_cm_id*>& to, rdma_cm_id* id) {
        std::lock_guard lock(mu_);
        to.push_back(id);
        return 0;
    }
    /// Whether [addr, addr + len) lies in a live MR with this lkey (caller holds mu_).
    bool covered(const ibv_sge& s) const {
        for (const auto& [mr, pd] : mrs_) {
            const auto base = reinterpret_cast<std::uintptr_t>(mr->addr);
            if (mr->lkey == s.lkey && s.addr >= base && s.addr + s.length <= base + mr->length) return true;
        }
        return false;
    }
    /// Queue a completion on the (one) CQ; an armed CQ raises its event (caller holds mu_).
    void push_wc(const ibv_wc& wc) {
        if (cqs_.empty()) {
            violations_.push_back("a completion with no CQ");
            return;
        }
        auto& [cq, c] = *cqs_.begin();
        c.wcs.push_back(wc);
        if (c.armed) {
            c.armed = false;
            const std::uint64_t one = 1;
            [[maybe_unused]] auto r = ::write(cq->channel->fd, &one, sizeof one);
        }
    }

    ibv_pd* alloc_pd(ibv_context* ctx) {
        std::lock_guard lock(mu_);
        auto* pd = new ibv_pd{};
        pd->context = ctx;
        pds_.insert(pd);
        return pd;
    }
    int dealloc_pd(ibv_pd* pd) {
        std::lock_guard lock(mu_);
        for (const auto& [mr, owner] : mrs_)
            if (owner == pd) violations_.push_back("dealloc_pd with an MR still registered");
        if (!srqs_.empty()) violations_.push_back("dealloc_pd with an SRQ alive");
        if (!pds_.erase(pd)) violations_.push_back("dealloc_pd of an unknown PD");
        delete pd;
        return 0;
    }
    ibv_mr* reg_mr(ibv_pd* pd, void* addr, std::size_t len, int) {
        std::lock_guard lock(mu_);
        if (!pds_.count(pd)) violations_.push_back("reg_mr on an unknown PD");
        auto* mr = new ibv_mr{};
        mr->context = pd ? pd->context : nullptr;
        mr->pd = pd;
        mr->addr = addr;
        mr->length = len;
        mr->lkey = 0x1000 + next_key_;
        mr->rkey = 0x9000 + next_key_++;
        mrs_[mr] = pd;
        return mr;
    }
    int dereg_mr(ibv_mr* mr) {
        std::lock_guard lock(mu_);
        if (!mrs_.erase(mr)) violations_.push_back("dereg_mr of an unknown MR");
        delete mr;
        return 0;
    }
    ibv_srq* create_srq(ibv_pd* pd, ibv_srq_init_attr* a) {
        std::lock_guard lock(mu_);
        auto* s = new ibv_srq{};
        s->context = pd->context;
        s->pd = pd;
        srq_max_wr_ = a->attr.max_wr;
        srqs_.insert(s);
        return s;
    }
    int destroy_srq(ibv_srq* s) {
        std::lock_guard lock(mu_);
        if (!qps_.empty()) violations_.push_back("destroy_srq with a QP still on it");
        if (!srqs_.erase(s)) violations_.push_back("destroy_srq of an unknown SRQ");
        posted_.clear();
        delete s;
        return 0;
    }
    int post_srq_recv(ibv_srq* s, ibv_recv_wr* wr, ibv_recv_wr** bad) {
        std::lock_guard lock(mu_);
        if (!srqs_.count(s)) violations_.push_back("post_srq_recv on an unknown SRQ");
        for (; wr; wr = wr->next) {
            SrqRecv r{seq_++, wr->wr_id, wr->num_sge, {wr->sg_list, wr->sg_list + wr->num_sge}};
            for (const auto& sge : r.sge)
                if (!covered(sge)) violations_.push_back("SRQ sge outside its MR or with a wrong lkey");
            if (std::any_of(posted_.begin(), posted_.end(), [&](const SrqRecv& p) { return p.wr_id == wr->wr_id; }))
                violations_.push_back("buffer " + std::to_string(wr->wr_id) + " posted to the SRQ twice");
            if (posted_.size() >= srq_max_wr_) violations_.push_back("SRQ overflow");
            srq_posts_.push_back(r);
            posted_.push_back(r);
        }
        *bad = nullptr;
        return 0;
    }
    ibv_comp_channel* create_comp_channel(ibv_context* ctx) {
        std::lock_guard lock(mu_);
        // A semaphore eventfd: one read takes one event, as get_cq_event does.
        const int fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC | EFD_SEMAPHORE);
        if (fd < 0) return nullptr;
        auto* ch = new ibv_comp_channel{ctx, fd, 0};
        channels_.insert(ch);
        return ch;
    }
    int destroy_comp_channel(ibv_comp_channel* ch) {
        std::lock_guard lock(mu_);
        for (const auto& [cq, _] : cqs_)
            if (cq->channel == ch) violations_.push_back("destroy_comp_channel with its CQ alive");
        if (!channels_.erase(ch)) violations_.push_back("destroy_comp_channel of an unknown channel");
        ::close(ch->fd);
        delete ch;
        return 0;
    }
    ibv_cq* create_cq(ibv_context* ctx, int n, void* cq_ctx, ibv_comp_channel* ch) {
        std::lock_guard lock(mu_);
        if (!cqs_.empty()) violations_.push_back("the fake serves one CQ at a time");
        auto* cq = new ibv_cq{};
        cq->context = ctx;
        cq->channel = ch;
        cq->cq_context = cq_ctx;
        cq->cqe = n;
        cqs_[cq] = {};
        return cq;
    }
    int destroy_cq(ibv_cq* cq) {
        std::lock_guard lock(mu_);
        const auto it = cqs_.find(cq);
        if (it == cqs_.end()) {
            violations_.push_back("destroy_cq of an unknown CQ");
            return EINVAL;
        }
        // ibv_destroy_cq blocks forever on events taken and not acknowledged.
        if (it->second.acked != it->second.delivered) violations_.push_back("destroy_cq with CQ events not acked");
        for (const auto& [qp, _] : qps_)
            if (qp->send_cq == cq || qp->recv_cq == cq) violations_.push_back("destroy_cq with its QP alive");
        cqs_.erase(it);
        delete cq;
        return 0;
    }
    int req_notify_cq(ibv_cq* cq) {
        std::lock_guard lock(mu_);
        cqs_.at(cq).armed = true;
        return 0;
    }
    int get_cq_event(ibv_comp_channel* ch, ibv_cq** cq, void** cq_ctx) {
        std::lock_guard lock(mu_);
        std::uint64_t n = 0;
        if (::read(ch->fd, &n, sizeof n) != sizeof n) {
            errno = EAGAIN;
            return -1;
        }
        for (auto& [c, info] : cqs_)
            if (c->channel == ch) {
                ++info.delivered;
                *cq = c;
                *cq_ctx = c->cq_context;
                return 0;
            }
        violations_.push_back("a CQ event with no CQ");
        return -1;
    }
    void ack_cq_events(ibv_cq* cq, unsigned n) {
        std::lock_guard lock(mu_);
        auto& c = cqs_.at(cq);
        c.acked += n;
        if (c.acked > c.delivered) violations_.push_back("more CQ events acked than taken");
    }
    int poll_cq(ibv_cq* cq, int n, ibv_wc* wc) {
        std::lock_guard lock(mu_);
        auto& q = cqs_.at(cq).wcs;
        int i = 0;
        for (; i < n && !q.empty(); ++i) {
            wc[i] = q.front();
            q.pop_front();
        }
        return i;
    }
    int create_qp_ex(rdma_cm_id* id, ibv_qp_init_attr_ex* a) {
        std::lock_guard lock(mu_);
        qp_attrs_.push_back(*a);
        if (!srqs_.count(a->srq)) violations_.push_back("create_qp_ex on an unknown SRQ");
        if (!cqs_.count(a->send_cq) || !cqs_.count(a->recv_cq)) violations_.push_back("create_qp_ex on an unknown CQ");
        auto* qp = new ibv_qp{};
        qp->context = id->verbs;
        qp->pd = a->pd;
        qp->send_cq = a->send_cq;
        qp->recv_cq = a->recv_cq;
        qp->srq = a->srq;
        qp->qp_type = a->qp_type;
        qp->qp_num = 0x100 + std::uint32_t(qp_attrs_.size());
        qps_[qp] = Qp{a->cap.max_send_wr, a->cap.max_inline_data, {}};
        id->qp = qp;
        return 0;
    }
    void destroy_qp(rdma_cm_id* id) {
        std::lock_guard lock(mu_);
        if (!qps_.erase(id->qp)) violations_.push_back("destroy_qp of an unknown QP");
        delete id->qp;
        id->qp = nullptr;
    }
    int post_send(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad) {
        PostSend p;
        {
            std::lock_guard lock(mu_);
            *bad = wr;
            if (fail_post_send) return std::exchange(fail_post_send, 0);
            const auto it = qps_.find(qp);
            if (it == qps_.end()) {
                violations_.push_back("post_send on an unknown QP");
                return EINVAL;
            }
            auto& q = it->second;
            p.seq = seq_++;
            p.qp = qp;
            for (; wr; wr = wr->next) {
                SendWr w;
                w.wr_id = wr->wr_id;
                w.opcode = wr->opcode;
                w.send_flags = wr->send_flags;
                w.num_sge = wr->num_sge;
                w.sge.assign(wr->sg_list, wr->sg_list + wr->num_sge);
                w.remote_addr = wr->wr.rdma.remote_addr;
                w.rkey = wr->wr.rdma.rkey;
                if (wr->opcode == IBV_WR_SEND_WITH_INV) w.invalidate_rkey = wr->invalidate_rkey;
                const bool inl = (wr->send_flags & IBV_SEND_INLINE) != 0;
                std::size_t total = 0;
                for (const auto& s : w.sge) {
                    total += s.length;
                    if (!inl && s.length && !covered(s)) violations_.push_back("send sge outside its MR or with a wrong lkey");
                    if (wr->opcode != IBV_WR_RDMA_READ) {
                        const auto* b = reinterpret_cast<const std::uint8_t*>(s.addr);
                        w.bytes.insert(w.bytes.end(), b, b + s.length);
                    }
                }
                if (inl && total > q.max_inline) violations_.push_back("inline data beyond max_inline_data");
                q.inflight.push_back({w.wr_id, w.opcode, (w.send_flags & IBV_SEND_SIGNALED) != 0});
                p.chain.push_back(std::move(w));
            }
            if (q.inflight.size() > q.max_send_wr) violations_.push_back("more send WRs in flight than max_send_wr");
            sends_.push_back(p);
            *bad = nullptr;
        }
        if (on_send) on_send(p);
        return 0;
    }

    rdma::verbs::Verbs table_{};
    ibv_context ctx_{};
    mutable std::mutex mu_;
    std::uint64_t seq_ = 0;
    std::uint32_t next_key_ = 1;
    std::uint32_t srq_max_wr_ = 0;
    std::set<ibv_pd*> pds_;
    std::map<ibv_mr*, ibv_pd*> mrs_;
    std::set<ibv_srq*> srqs_;
    std::deque<SrqRecv> posted_;  ///< SRQ buffers, oldest first (the order a device takes them)
    std::set<ibv_comp_channel*> channels_;
    std::map<ibv_cq*, Cq> cqs_;
    std::map<ibv_qp*, Qp> qps_;
    std::vector<PostSend> sends_;
    std::vector<SrqRecv> srq_posts_;
    std::vector<ibv_qp_init_attr_ex> qp_attrs_;
    std::vector<rdma_cm_id*> disconnects_, destroyed_ids_;
    std::vector<std::string> violations_;
};

} // namespace rpm::nvmf::target::test
