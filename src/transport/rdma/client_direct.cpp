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
// doorbell; its flush is the region's flusher's: flusher.hpp) goes
// direct when the queue holds nothing unfinished, no other
// direct operation is over but unreported, and a credit (and, without
// registered memory, a bounce entry) is free at once: posted under the
// connection's lock with its own tag (kDirectTag), settled by its
// completion (send_flush's: by the server's Response) or by the
// connection's failure. One at a time: the next
// queues behind it. Posting order still holds: whatever is queued after it
// is posted after it, completes after it (RC, one send queue) and has its
// callback run after it (deliver_round). The operation's own state is a
// DirectOp (direct_op.hpp); this file decides when one goes and posts it.
#include "transport/rdma/client.hpp"
#include "transport/rdma/frames.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

namespace rpm::rdma {
namespace {

LocalMr* local_mr(const OpQueue::DirectHold& hold, const UserMemory* user) noexcept {
    return user ? user->mr.get() : static_cast<LocalMr*>(hold.entry->handle());
}

} // namespace

bool ClientConn::direct_idle_locked() const noexcept {
    // Anything in flight or waiting to be posted (another thread's
    // operations) keeps the order only if this one queues behind it. Ops
    // that finished and wait for their callbacks (a reply the I/O thread has
    // not handed out yet) are no such thing: theirs run first (deliver_round).
    return lim_.direct && !failed_ && !batching_ && ring_error_ == 0 && ops_.all_finished() && !direct_.pending();
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
        ret = api_.write(link_.conn(), r->mr.get(), offset, local, user ? user->offset_of(src.data()) : 0, length,
                         kCompletionAlways, wr_tag(kDirectTag));
    } else {
        ret = api_.read(link_.conn(), local, user ? user->offset_of(out.data()) : 0, r->mr.get(), offset, length,
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
    if (fl.prepare_direct != nullptr && !fl.prepare_direct(flush_work_, g.id, s)) return false;
    OpQueue::DirectHold hold;
    if (!ops_.take_direct(2, !user, fl.direct_slot, hold)) return false;
    post_direct_persist_locked(*r, s, hold, std::move(user), done);
    return true;
}

void ClientConn::post_direct_persist_locked(const RemoteRegion& r, const proto::Slice& s, OpQueue::DirectHold& hold,
                                            std::shared_ptr<UserMemory> user, client::Done& done) {
    const Flusher& fl = *r.flusher;
    if (!user) std::memcpy(hold.entry->data(), s.data.data(), s.data.size());
    // The write goes unsignaled right in front of its flush: RC completes
    // in order, so the flush's completion retires it (as OpQueue::pump).
    int ret = api_.write(link_.conn(), r.mr.get(), s.offset, local_mr(hold, user.get()),
                         user ? user->offset_of(s.data.data()) : 0, s.data.size(), kCompletionOnError | kDeferDoorbell,
                         wr_tag(kDirectWriteTag));
    begin_direct_locked(fl.direct_kind, hold, std::move(user), {}, &done);
    if (ret != 0) return direct_post_failed_locked(ret);
    // The flusher's work request behind it, and what the persist now owes:
    // the read's or FLUSH's completion; send_flush's Response (and the
    // send's completion only when it goes signaled).
    ret = fl.post_direct(flush_work_, r, s);
    // The write is queued in the verbs layer either way: post it, and when
    // its flush could not join it, no completion will retire it (as in
    // pump_locked): the connection fails, and the persist with it.
    const int rang = api_.ring(link_.conn());
    if (ret != 0) {
        fail_locked(errc::io_error, link_.where() + ": a persist's flush could not be posted behind its write");
    } else if (rang != 0) {
        fail_locked(errc::io_error, call_failure(errc::io_error, link_.where(), "posting work requests", rang).detail());
    }
}

void ClientConn::begin_direct_locked(OpKind kind, OpQueue::DirectHold& hold, std::shared_ptr<UserMemory> user,
                                     std::span<std::byte> out, client::Done* done, std::uint64_t sync_gen) {
    direct_.begin(kind, hold, std::move(user), out, done, sync_gen, ops_.pushed() + 1);
    // The driver's own operation, and nothing finished waits for its
    // callback: the driver's first round may be skipped (drive_until).
    if (driving_here()) drive_.fresh = ops_.size() == 0 && !inbox_.has_ready() && drive_.polled.empty();
    // Nobody may be watching the CQ: the I/O thread parks after a
    // synchronous call and is woken only for work (as in submit_locked).
    if (io_.parked && drive_.drivers == 0) notify_locked();
}

void ClientConn::direct_post_failed_locked(int ret) {
    // Nothing was posted: the operation fails, the connection does not (as
    // a failed post in the queue).
    direct_.post_failed(ops_, code_of(ret));
    if (driving_here()) drive_.fresh = false;  // its callback is there to run
    notify_locked();  // its callback waits for whoever delivers next
}

void ClientConn::on_direct_wc_locked(const ibv_wc& wc) {
    if (wc.status != IBV_WC_SUCCESS) {
        // RC: the queue pair is in error, even when the operation is over
        // (an unsignaled send whose Response came first). The signaled
        // request's failure means nothing of the operation is on the wire
        // any more; the persist's write failing says nothing of the flush
        // behind it.
        direct_.on_failed_wc(wc.wr_id);
        return fail_locked(errc::io_error, link_.where() + ": work request failed: " + ibv_wc_status_str(wc.status));
    }
    if (!direct_.active()) return;  // it failed with the connection already
    // Its credits may let queued operations go.
    if (direct_.on_completion(ops_)) pump_locked();
}

bool ClientConn::on_direct_reply_locked(const proto::Header& h, std::span<const std::byte> body) {
    if (!direct_.awaits_reply(h.request_id)) return false;
    if (direct_.settle_reply(ops_, response_status(h, body))) pump_locked();
    return true;
}

void ClientConn::take_direct_locked(std::vector<Finished>& finished) {
    // What was queued before it goes first, then it, then what came after
    // (a later op that failed at once waits behind it, as in the queue).
    ops_.take_finished([&](Op& op) { take_locked(op, finished); }, direct_.before_seq());
    if (!direct_.finished()) return;
    direct_.handed_out();
    if (!direct_.has_sync_gen()) {
        // In place: a temporary would cost its destructor's call.
        finished.push_back({std::move(direct_.done()), outcome_locked(direct_.ec(), direct_.kind())});
        return;
    }
    // transfer_now's operation: the outcome of its call, unless a newer
    // call has begun since (this one timed out). If none has, no one reads
    // it: the next call resets drive_.sync before it posts. Here under drive_.mu,
    // as drive_.sync wants: whoever delivers holds it.
    if (drive_.sync.gen == direct_.take_sync_gen()) {
        drive_.sync.r = outcome_locked(direct_.ec(), direct_.kind());
        drive_.sync.done = true;
    }
}

} // namespace rpm::rdma
