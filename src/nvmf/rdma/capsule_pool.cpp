// The NVMe/RDMA port's protection domain, shared receive queue and capsule
// buffers (port.hpp).
#include "nvmf/rdma/port.hpp"

#include <cerrno>
#include <cstring>

namespace rpm::nvmf::target {

namespace {
Error verb_failed(const char* verb, int err) {
    return Error(errc::io_error, std::string("nvmf rdma: ") + verb + ": " + std::strerror(err ? err : EIO));
}
} // namespace

Result<std::shared_ptr<CapsulePool>> CapsulePool::make(const rdma::verbs::Verbs& v, ibv_context* ctx,
                                                       std::uint32_t entries, std::uint32_t capsule_len) {
    std::shared_ptr<CapsulePool> p(new CapsulePool());
    p->v_ = &v;
    p->ctx_ = ctx;
    p->entries_ = entries;
    // 64-byte aligned slots: a capsule never shares a cache line with the next.
    p->capsule_len_ = (capsule_len + 63) / 64 * 64;
    p->buf_.resize(std::size_t(entries) * p->capsule_len_);
    if (!(p->pd_ = v.alloc_pd(ctx))) return verb_failed("ibv_alloc_pd", errno);
    p->mr_ = v.reg_mr(p->pd_, p->buf_.data(), p->buf_.size(), IBV_ACCESS_LOCAL_WRITE);
    if (!p->mr_) return verb_failed("ibv_reg_mr (capsule buffers)", errno);
    ibv_srq_init_attr attr{};
    attr.attr.max_wr = entries;
    attr.attr.max_sge = 1;
    if (!(p->srq_ = v.create_srq(p->pd_, &attr))) return verb_failed("ibv_create_srq", errno);
    for (std::uint32_t i = 0; i < entries; ++i)
        if (!p->repost(i)) return verb_failed("ibv_post_srq_recv", errno);
    return p;
}

CapsulePool::~CapsulePool() {
    if (srq_) v_->destroy_srq(srq_);
    if (mr_) v_->dereg_mr(mr_);
    if (pd_) v_->dealloc_pd(pd_);
}

std::span<const std::uint8_t> CapsulePool::capsule(std::uint32_t slot, std::uint32_t len) const {
    if (slot >= entries_) return {};
    return std::span<const std::uint8_t>(buf_).subspan(std::size_t(slot) * capsule_len_, std::min(len, capsule_len_));
}

bool CapsulePool::repost(std::uint32_t slot) {
    if (slot >= entries_) return false;
    ibv_sge sge{reinterpret_cast<std::uintptr_t>(buf_.data()) + std::uint64_t(slot) * capsule_len_, capsule_len_,
                mr_->lkey};
    ibv_recv_wr wr{};
    wr.wr_id = slot;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    return v_->post_srq_recv(srq_, &wr, &bad) == 0;
}

} // namespace rpm::nvmf::target
