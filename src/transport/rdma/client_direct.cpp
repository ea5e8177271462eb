// An operation posted outside the op queue, when nothing is queued.
//
// A read or write on a connection with nothing else in flight is the
// common case at queue depth 1 (a key-value store's get, a log's record
// write, a synchronous call, a callback that issues the next operation),
// and it needs none of the queue's work: no ordering behind other
// operations, no waiting for resources, no hand-out of callbacks in order.
// That work was about a third of rpm's own instructions per read
// (docs/benchmarks-history.md, "A synchronous call's own operation"). So a read,
// a write, or a persist of one slice (its write and its flush under one
// doorbell; its flush is the region's flusher's: client_flush.cpp) goes
// direct when the queue holds nothing unfinished, no other
// direct operation is over but unreported, and a credit (and, without
// registered memory, a bounce entry) is free at once: posted under the
// connection's lock with its own tag (kDirectTag), settled by its
// completion (send_flush's: by the server's Response) or by the
// connection's failure. One at a time: the next
// queues behind it. Posting order still holds: whatever is queued after it
// is posted after it, completes after it (RC, one send queue) and has its
// callback run after it (deliver_round).
#include "transport/rdma/client.hpp"
#include "transport/rdma/frames.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

namespace rpm::rdma {
namespace {

// No error, made once: std::error_code{} calls std::system_category() in
// libstdc++, a call per use on every direct operation (twice).
const std::error_code kSuccess{};

LocalMr* local_mr(const OpQueue::DirectHold& hold, const UserMemory* user) noexcept {
    return user ? user->mr.get() : static_cast<LocalMr*>(hold.entry->handle());
}

} // namespace

bool ClientConn::direct_idle_locked() const noexcept {
    // Anything in flight or waiting to be posted (another thread's
    // operations) keeps the order only if this one queues behind it. Ops
    // that finished and wait for their callbacks (a reply the I/O thread has
    // not handed out yet) are no such thing: theirs run first (deliver_round).
    return lim_.direct && !failed_ && !batching_ && ring_error_ == 0 && ops_.all_finished() && !direct_.active &&
           !direct_.finished;
}

bool ClientConn::try_direct(OpKind kind, std::uint32_t grant_id, std::uint64_t offset,
                            std::span<const std::byte> src, std::span<std::byte> out, client::Done* done,
                            std::uint64_t sync_gen) {
    const std::size_t length = kind == OpKind::write ? src.size() : out.size();
    if (length == 0) return false;
    std::lock_guard lock(mu_);
    if (!direct_idle_locked()) return false;
    const RemoteRegion* r = region_locked(grant_id);
    if (!r) return false;  // the queue reports the error
    auto user = user_memory_locked(kind == OpKind::write ? src.data() : out.data(), length);
    if (length > (user ? kMaxUserChunk : lim_.chunk)) return false;  // chunks: the queue's
    OpQueue::DirectHold hold;
    if (!ops_.take_direct(1, !user, false, hold)) return false;
    LocalMr* local = local_mr(hold, user.get());
    int ret = 0;
    if (kind == OpKind::write) {
        if (!user) std::memcpy(hold.entry->data(), src.data(), length);
        ret = api_.write(conn_.get(), r->mr.get(), offset, local, user ? user->offset_of(src.data()) : 0, length,
                         kCompletionAlways, wr_tag(kDirectTag));
    } else {
        ret = api_.read(conn_.get(), local, user ? user->offset_of(out.data()) : 0, r->mr.get(), offset, length,
                        kCompletionAlways, wr_tag(kDirectTag));
    }
    begin_direct_locked(kind, hold, std::move(user), out, done, sync_gen);
    if (ret != 0) direct_post_failed_locked(ret);
    return true;
}

bool ClientConn::try_direct_persist(const proto::RegionGrant& g, std::span<const proto::Slice> slices,
                                    client::Done& done) {
    if (slices.size() != 1 || slices[0].data.empty()) return false;
    const proto::Slice& s = slices[0];
    const std::size_t length = s.data.size();
    std::lock_guard lock(mu_);
    if (!direct_idle_locked() || commit_word(s)) return false;
    const RemoteRegion* r = region_locked(g.id);
    if (!r) return false;
    const Flusher& fl = *r->flusher;
    auto user = user_memory_locked(s.data.data(), length);
    if (length > (user ? kMaxUserChunk : lim_.chunk)) return false;
    if (fl.prepare_direct != nullptr && !(this->*fl.prepare_direct)(g.id, s)) return false;
    OpQueue::DirectHold hold;
    if (!ops_.take_direct(2, !user, fl.direct_slot, hold)) return false;
    if (!user) std::memcpy(hold.entry->data(), s.data.data(), length);
    // The write goes unsignaled right in front of its flush: RC completes
    // in order, so the flush's completion retires it (as OpQueue::pump).
    int ret = api_.write(conn_.get(), r->mr.get(), s.offset, local_mr(hold, user.get()),
                         user ? user->offset_of(s.data.data()) : 0, length, kCompletionOnError | kDeferDoorbell,
                         wr_tag(kDirectWriteTag));
    begin_direct_locked(fl.direct_kind, hold, std::move(user), {}, &done);
    if (ret != 0) {
        direct_post_failed_locked(ret);
        return true;
    }
    // The flusher's work request behind it, and what the persist now owes:
    // the read's or FLUSH's completion; send_flush's Response (and the
    // send's completion only when it goes signaled).
    ret = (this->*fl.post_direct)(*r, s);
    // The write is queued in the verbs layer either way: post it, and when
    // its flush could not join it, no completion will retire it (as in
    // pump_locked): the connection fails, and the persist with it.
    const int rang = api_.ring(conn_.get());
    if (ret != 0) {
        fail_locked(errc::io_error, where_ + ": a persist's flush could not be posted behind its write");
    } else if (rang != 0) {
        fail_locked(errc::io_error, call_failure(errc::io_error, where_, "posting work requests", rang).detail());
    }
    return true;
}

void ClientConn::begin_direct_locked(OpKind kind, OpQueue::DirectHold& hold, std::shared_ptr<UserMemory> user,
                                     std::span<std::byte> out, client::Done* done, std::uint64_t sync_gen) {
    direct_.active = true;
    direct_.kind = kind;
    direct_.owed = 1;
    direct_.wc_done = false;
    direct_.rid = 0;
    direct_.out = out;
    direct_.hold = std::exchange(hold, {});
    direct_.user = std::move(user);
    direct_.ec = kSuccess;
    if (done)
        direct_.done = std::move(*done);
    else
        direct_.done = nullptr;  // inline: an empty one holds nothing to destroy
    direct_.sync_gen = sync_gen;
    direct_.before_seq = ops_.pushed() + 1;  // its place in posting order
    direct_posts_.fetch_add(1, std::memory_order_relaxed);
    // The driver's own operation, and nothing finished waits for its
    // callback: the driver's first round may be skipped (drive_until).
    if (driving_here()) drive_fresh_ = ops_.size() == 0 && ready_recvs_.empty() && polled_.empty();
    // Nobody may be watching the CQ: the I/O thread parks after a
    // synchronous call and is woken only for work (as in submit_locked).
    if (io_parked_ && drivers_ == 0) notify_locked();
}

void ClientConn::direct_post_failed_locked(int ret) {
    // Nothing was posted: the operation fails, the connection does not (as
    // a failed post in the queue).
    direct_.active = false;
    ops_.end_direct(direct_.hold, false);
    direct_.ec = code_of(ret);
    direct_.finished = true;
    if (driving_here()) drive_fresh_ = false;  // its callback is there to run
    notify_locked();  // its callback waits for whoever delivers next
}

void ClientConn::on_direct_wc_locked(const ibv_wc& wc) {
    if (wc.status != IBV_WC_SUCCESS) {
        // RC: the queue pair is in error, even when the operation is over
        // (an unsignaled send whose Response came first). The signaled
        // request's failure means nothing of the operation is on the wire
        // any more; the persist's write failing says nothing of the flush
        // behind it.
        if (direct_.active) direct_.wc_done = wc.wr_id == kDirectTag;
        return fail_locked(errc::io_error, where_ + ": work request failed: " + ibv_wc_status_str(wc.status));
    }
    if (!direct_.active) return;  // it failed with the connection already
    direct_.wc_done = true;
    // RC completes in order: what went unsignaled before it is done too.
    ops_.retire_unsignaled_before(direct_.before_seq);
    if (direct_.kind == OpKind::read && direct_.hold.entry)
        std::memcpy(direct_.out.data(), direct_.hold.entry->data(), direct_.out.size());
    settle_direct_locked(kSuccess);
}

bool ClientConn::on_direct_reply_locked(const proto::Header& h, std::span<const std::byte> body) {
    if (!direct_.active || direct_.rid == 0 || h.request_id != direct_.rid) return false;
    direct_.rid = 0;
    settle_direct_locked(response_status(h, body));
    return true;
}

void ClientConn::settle_direct_locked(std::error_code ec) {
    if (ec && !direct_.ec) direct_.ec = ec;
    if (--direct_.owed > 0) return;
    direct_.active = false;
    ops_.end_direct(direct_.hold, false);
    direct_.finished = true;
    // Its credits may let queued operations go.
    pump_locked();
}

void ClientConn::fail_direct_locked(std::error_code ec) {
    if (!direct_.active) return;
    direct_.active = false;
    direct_.rid = 0;
    // Its work request may still be on the wire: the device may read or
    // write the entry until the queue pair is gone (OpQueue keeps it aside).
    ops_.end_direct(direct_.hold, !direct_.wc_done);
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
    if (direct_.sync_gen == 0) {
        // In place: a temporary would cost its destructor's call.
        finished.push_back({std::move(direct_.done), outcome_locked(direct_.ec, direct_.kind)});
        return;
    }
    // transfer_now's operation: the outcome of its call, unless a newer
    // call has begun since (this one timed out). If none has, no one reads
    // it: the next call resets sync_ before it posts. Here under drive_mu_,
    // as sync_ wants: whoever delivers holds it.
    if (sync_.gen == std::exchange(direct_.sync_gen, 0)) {
        sync_.r = outcome_locked(direct_.ec, direct_.kind);
        sync_.done = true;
    }
}

} // namespace rpm::rdma
