// The fake's data path: one-sided operations copy between registered
// memory after the checks an RNIC makes; sends land in posted receives;
// completions go to the poster's CQ (and its eventfd).
#include "fake_rpma_fns.hpp"

#include <cstring>
#include <thread>

namespace rpm::rdma::fake::fn {
namespace {

constexpr int kOnSuccess = kCompletionAlways & ~kCompletionOnError;

struct Target {
    ibv_wc_status status = IBV_WC_SUCCESS;
    std::byte* remote = nullptr;
};

// What the responder's RNIC checks: a live link, a known key, bounds, access.
Target check_remote(Fabric& f, Conn* c, const RemoteMr* mr, std::size_t off, std::size_t len,
                    int needed_usage) {
    if (!c->remote || c->disconnected) return {IBV_WC_WR_FLUSH_ERR, nullptr};
    auto it = f.mrs_.find(mr->id);
    if (it == f.mrs_.end() || it->second->peer != c->remote->peer) return {IBV_WC_REM_ACCESS_ERR, nullptr};
    const LocalMr* m = it->second;
    if (off > m->size || len > m->size - off || (m->usage & needed_usage) == 0) return {IBV_WC_REM_ACCESS_ERR, nullptr};
    return {IBV_WC_SUCCESS, static_cast<std::byte*>(m->ptr) + off};
}

bool local_ok(const LocalMr* m, std::size_t off, std::size_t len, int needed_usage) {
    return m && off <= m->size && len <= m->size - off && (m->usage & needed_usage) != 0;
}

void complete(Fabric& f, Conn* c, const void* ctx, ibv_wc_opcode op, ibv_wc_status st, const char* kind,
              int flags) {
    if (auto it = f.fail_wcs_.find(kind); it != f.fail_wcs_.end()) {
        st = it->second;
        f.fail_wcs_.erase(it);
    }
    // Like an RNIC: a successful unsignalled work request makes no completion.
    if (st == IBV_WC_SUCCESS && (flags & kOnSuccess) == 0) return;
    ibv_wc wc{};
    wc.wr_id = reinterpret_cast<std::uint64_t>(ctx);
    wc.status = st;
    wc.opcode = op;
    push_wc(c, wc, true);
}

std::byte* at(const LocalMr* m, std::size_t off) { return static_cast<std::byte*>(m->ptr) + off; }

} // namespace

int write(Conn* c, const RemoteMr* dst, std::size_t dst_off, const LocalMr* src, std::size_t src_off,
          std::size_t len, int flags, const void* ctx) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    WriteCall call{c, dst, dst_off, src, src_off, len, flags, ctx, {}};
    if (local_ok(src, src_off, len, kUsageWriteSrc)) call.data.assign(at(src, src_off), at(src, src_off) + len);
    f.writes_.push_back(std::move(call));
    if (int e = take_failure(f, "rpma_write")) return e;
    if (!c || !dst || !src || flags == 0) return kErrInval;
    Target t = check_remote(f, c, dst, dst_off, len, kUsageWriteDst);
    if (t.status == IBV_WC_SUCCESS && !local_ok(src, src_off, len, kUsageWriteSrc)) t.status = IBV_WC_LOC_PROT_ERR;
    if (t.status == IBV_WC_SUCCESS) std::memcpy(t.remote, at(src, src_off), len);
    complete(f, c, ctx, IBV_WC_RDMA_WRITE, t.status, "write", flags);
    return 0;
}

int read(Conn* c, LocalMr* dst, std::size_t dst_off, const RemoteMr* src, std::size_t src_off,
         std::size_t len, int flags, const void* ctx) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    f.reads_.push_back({c, dst, dst_off, src, src_off, len, flags, ctx});
    if (int e = take_failure(f, "rpma_read")) return e;
    if (!c || !dst || !src || flags == 0) return kErrInval;
    Target t = check_remote(f, c, src, src_off, len, kUsageReadSrc);
    if (t.status == IBV_WC_SUCCESS && !local_ok(dst, dst_off, len, kUsageReadDst)) t.status = IBV_WC_LOC_PROT_ERR;
    if (t.status == IBV_WC_SUCCESS) std::memcpy(at(dst, dst_off), t.remote, len);
    complete(f, c, ctx, IBV_WC_RDMA_READ, t.status, "read", flags);
    return 0;
}

int atomic_write(Conn* c, const RemoteMr* dst, std::size_t dst_off, const char src[8], int flags,
                 const void* ctx) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    std::uint64_t value = 0;
    if (src) std::memcpy(&value, src, 8);
    f.atomics_.push_back({c, dst, dst_off, value, flags, ctx});
    if (int e = take_failure(f, "rpma_atomic_write")) return e;
    if (!c || !dst || !src || flags == 0 || dst_off % kAtomicWriteAlignment != 0) return kErrInval;
    Target t = check_remote(f, c, dst, dst_off, 8, kUsageWriteDst);
    if (t.status == IBV_WC_SUCCESS) std::memcpy(t.remote, src, 8);
    complete(f, c, ctx, f.native_atomic_write ? IBV_WC_ATOMIC_WRITE : IBV_WC_RDMA_WRITE, t.status, "atomic", flags);
    return 0;
}

int flush(Conn* c, const RemoteMr* dst, std::size_t dst_off, std::size_t len, FlushType type, int flags,
          const void* ctx) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    f.flushes_.push_back({c, dst, dst_off, len, type, flags, ctx, c ? c->direct_write : false});
    if (int e = take_failure(f, "rpma_flush")) return e;
    if (!c || !dst || flags == 0) return kErrInval;
    // As the verbs layer: persistent flush needs the remote peer cfg's direct write
    // to PMem and a region registered for it; then it reads 8 bytes.
    if (type == kFlushPersistent &&
        (!c->direct_write || (dst->usage & kUsageFlushPersistent) == 0))
        return kErrNoSupp;
    const Target t = check_remote(f, c, dst, dst_off, 8,
                                  kUsageFlushPersistent | kUsageFlushVisibility);
    complete(f, c, ctx, IBV_WC_RDMA_READ, t.status, "flush", flags);
    return 0;
}

int flush_native(Conn* c, const RemoteMr* dst, std::size_t dst_off, std::size_t len, FlushType type, int flags,
                 const void* ctx) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    f.native_flushes_.push_back({c, dst, dst_off, len, type, flags, ctx, c ? c->direct_write : false});
    if (int e = take_failure(f, "rpma_flush_native")) return e;
    if (!c || !dst || flags == 0 || len == 0 || dst_off > dst->size || len > dst->size - dst_off) return kErrInval;
    // As the verbs layer: the queue pair must take FLUSH, the region be registered for the type.
    const int needed = type == kFlushPersistent ? kUsageFlushPersistent : kUsageFlushVisibility;
    if (!f.native_flush || (dst->usage & needed) == 0) return kErrNoSupp;
    Target t = check_remote(f, c, dst, dst_off, len, needed);
    // As the responder's RNIC: the registration's access must admit that FLUSH.
    if (t.status == IBV_WC_SUCCESS && (f.mrs_.at(dst->id)->native_flush & needed) == 0)
        t.status = IBV_WC_REM_ACCESS_ERR;
    complete(f, c, ctx, kWcFlush, t.status, "native_flush", flags);
    return 0;
}

int send(Conn* c, const LocalMr* src, std::size_t off, std::size_t len, int flags, const void* ctx) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    SendCall call{c, src, off, len, flags, ctx, {}, c ? c->passive : false};
    if (local_ok(src, off, len, kUsageSend)) call.bytes.assign(at(src, off), at(src, off) + len);
    const auto bytes = call.bytes;
    f.sends_.push_back(std::move(call));
    if (int e = take_failure(f, "rpma_send")) return e;
    if (!c || flags == 0 || (!src && (off || len))) return kErrInval;
    ibv_wc_status st = c->remote && !c->disconnected ? IBV_WC_SUCCESS : IBV_WC_WR_FLUSH_ERR;
    if (st == IBV_WC_SUCCESS && !local_ok(src, off, len, kUsageSend)) st = IBV_WC_LOC_PROT_ERR;
    if (st == IBV_WC_SUCCESS) deliver(c->remote, bytes);
    complete(f, c, ctx, IBV_WC_SEND, st, "send", flags);
    return 0;
}

int recv(Conn* c, LocalMr* dst, std::size_t off, std::size_t len, const void* ctx) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    f.recvs_.push_back({c, dst, off, len, ctx, false});
    if (int e = take_failure(f, "rpma_recv")) return e;
    if (!c || (!dst && (off || len))) return kErrInval;
    if (!local_ok(dst, off, len, kUsageRecv)) return kErrInval;
    if (c->disconnected) {
        ibv_wc wc{};
        wc.wr_id = reinterpret_cast<std::uint64_t>(ctx);
        wc.status = IBV_WC_WR_FLUSH_ERR;
        push_wc(c, wc, false);
        return 0;
    }
    c->recvs.push_back({dst, off, len, ctx});
    if (!c->unmatched.empty()) {
        auto bytes = std::move(c->unmatched.front());
        c->unmatched.pop_front();
        deliver(c, std::move(bytes));
    }
    return 0;
}

int cq_get_fd(const Cq* cq, int* fd) {
    if (!cq || !fd) return kErrInval;
    *fd = cq->fd;
    return 0;
}

int cq_wait(Cq* cq) {
    if (!cq) return kErrInval;
    return take(cq->fd) ? 0 : kErrNoCompletion;
}

int cq_get_wc(Cq* cq, int n, ibv_wc* wc, int* got) {
    auto& f = F();
    std::unique_lock lock(f.mu_);
    if (!cq || !wc || n < 1 || (n > 1 && !got)) return kErrInval;
    if (cq->wcs.empty()) {
        if (const auto delay = f.empty_poll_delay.load(); delay.count() > 0) {
            lock.unlock();  // the others go on meanwhile
            std::this_thread::sleep_for(delay);
        }
        return kErrNoCompletion;
    }
    int i = 0;
    for (; i < n && !cq->wcs.empty(); ++i) {
        wc[i] = cq->wcs.front();
        cq->wcs.pop_front();
    }
    if (got) *got = i;
    return 0;
}

int ring(Conn* c) {
    auto& f = F();
    std::lock_guard lock(f.mu_);
    // Every work request took effect when it was queued: the fake has no
    // doorbell to ring, it records the call (take_failure does).
    if (int e = take_failure(f, "ring")) return e;
    return c ? 0 : kErrInval;
}

} // namespace rpm::rdma::fake::fn
