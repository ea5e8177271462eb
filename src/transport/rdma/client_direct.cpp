// An operation posted outside the op queue, when nothing is queued.
//
// A read or write on a connection with nothing else in flight is the
// common case at queue depth 1 (a key-value store's get, a log's record
// write, a synchronous call, a callback that issues the next operation),
// and it needs none of the queue's work: no ordering behind other
// operations, no waiting for resources, no hand-out of callbacks in order.
// That work was about a third of rpm's own instructions per read
// (docs/benchmarks.md, "A synchronous call's own operation"). So a read or
// write goes direct when the queue holds nothing unfinished, no other
// direct operation is over but unreported, and a credit (and, without
// registered memory, a bounce entry) is free at once: posted signaled
// under the connection's lock with its own tag (kDirectTag), settled by
// its completion or by the connection's failure. One at a time: the next
// queues behind it. Posting order still holds: whatever is queued after it
// is posted after it, completes after it (RC, one send queue) and has its
// callback run after it (deliver_round).
#include "transport/rdma/client.hpp"

#include <cstring>
#include <utility>

namespace rpm::rdma {

bool ClientConn::try_direct(OpKind kind, std::uint32_t grant_id, std::uint64_t offset,
                            std::span<const std::byte> src, std::span<std::byte> out, client::Done& done) {
    const std::size_t length = kind == OpKind::write ? src.size() : out.size();
    if (length == 0) return false;
    std::lock_guard lock(mu_);
    // Anything in flight or waiting to be posted (another thread's
    // operations) keeps the order only if this one queues behind it. Ops
    // that finished and wait for their callbacks (a reply the I/O thread has
    // not handed out yet) are no such thing: theirs run first (deliver_round).
    if (failed_ || batching_ || ring_error_ != 0 || !ops_.all_finished() || direct_.active || direct_.finished)
        return false;
    const RemoteRegion* r = region_locked(grant_id);
    if (!r) return false;  // the queue reports the error
    auto user = user_memory_locked(kind == OpKind::write ? src.data() : out.data(), length);
    if (length > (user ? kMaxUserChunk : lim_.chunk)) return false;  // chunks: the queue's
    MrBuffer* entry = nullptr;
    if (!ops_.take_direct(!user, entry)) return false;
    const void* ctx = reinterpret_cast<const void*>(kDirectTag);
    LocalMr* local = user ? user->mr.get() : static_cast<LocalMr*>(entry->handle());
    int ret = 0;
    if (kind == OpKind::write) {
        if (!user) std::memcpy(entry->data(), src.data(), length);
        ret = api_.write(conn_.get(), r->mr.get(), offset, local, user ? user->offset_of(src.data()) : 0, length,
                         kCompletionAlways, ctx);
    } else {
        ret = api_.read(conn_.get(), local, user ? user->offset_of(out.data()) : 0, r->mr.get(), offset, length,
                        kCompletionAlways, ctx);
    }
    direct_.done = std::move(done);
    direct_.before_seq = ops_.pushed() + 1;  // its place in posting order
    direct_posts_.fetch_add(1, std::memory_order_relaxed);
    if (ret != 0) {
        // Nothing was posted: the call fails, the connection does not (as
        // a failed post in the queue).
        ops_.end_direct(entry, false);
        direct_.ec = code_of(ret);
        direct_.finished = true;
        notify_locked();  // its callback waits for whoever delivers next
        return true;
    }
    direct_.active = true;
    direct_.kind = kind;
    direct_.out = out;
    direct_.entry = entry;
    direct_.user = std::move(user);
    direct_.ec = {};
    // Nobody may be watching the CQ: the I/O thread parks after a
    // synchronous call and is woken only for work (as in submit_locked).
    if (io_parked_ && drivers_ == 0) notify_locked();
    return true;
}

void ClientConn::on_direct_wc_locked(const ibv_wc& wc) {
    if (!direct_.active) return;  // it failed with the connection already
    direct_.active = false;
    const bool ok = wc.status == IBV_WC_SUCCESS;
    if (ok) {
        // RC completes in order: what went unsignaled before it is done too.
        ops_.retire_unsignaled_before(direct_.before_seq);
        if (direct_.kind == OpKind::read && direct_.entry)
            std::memcpy(direct_.out.data(), direct_.entry->data(), direct_.out.size());
    }
    ops_.end_direct(std::exchange(direct_.entry, nullptr), false);
    direct_.ec = ok ? std::error_code{} : std::error_code(errc::io_error);
    direct_.finished = true;
    if (!ok)
        return fail_locked(errc::io_error, where_ + ": work request failed: " + ibv_wc_status_str(wc.status));
    // Its credit may let queued operations go.
    pump_locked();
}

void ClientConn::fail_direct_locked(std::error_code ec) {
    if (!direct_.active) return;
    direct_.active = false;
    // Its work request may still be on the wire: the device may write the
    // entry until the queue pair is gone (OpQueue keeps it aside).
    ops_.end_direct(std::exchange(direct_.entry, nullptr), true);
    direct_.ec = ec;
    direct_.finished = true;
}

void ClientConn::take_direct_locked(std::vector<Finished>& finished) {
    // What was queued before it goes first, then it, then what came after
    // (a later op that failed at once waits behind it, as in the queue).
    ops_.take_finished([&](Op& op) { take_locked(op, finished); }, direct_.before_seq);
    if (!direct_.finished) return;
    direct_.finished = false;
    direct_.user.reset();
    finished.push_back({std::move(direct_.done), direct_.ec});
}

} // namespace rpm::rdma
