#include "transport/rdma/op_queue.hpp"
#include "transport/rdma/limits.hpp"

#include <algorithm>
#include <utility>

namespace rpm::rdma {

std::error_code frame_fits(const std::vector<std::byte>& frame, std::size_t slot_size) noexcept {
    return frame.size() <= slot_size ? std::error_code{} : std::error_code(errc::bad_size);
}

Op request_op(std::vector<std::byte> frame, std::uint32_t rid, OnReply on_reply, client::Done done,
              std::size_t slot_size) {
    Op op;
    op.kind = OpKind::request;
    op.ec = frame_fits(frame, slot_size);
    op.length = frame.size();
    op.frame = std::move(frame);
    op.request_id = rid;
    op.on_reply = std::move(on_reply);
    op.done = std::move(done);
    return op;
}
int owed_for(OpKind k) noexcept {
    switch (k) {
    case OpKind::none: return 0;
    case OpKind::request: return 2;  // the send's completion and the reply
    default: return 1;
    }
}

OpQueue::OpQueue(std::uint32_t credits, std::uint32_t send_slots)
    : credits_(credits), signal_every_(std::clamp<std::uint32_t>(credits / 2, 1, kSignalEvery)), slots_(send_slots) {}

std::uint64_t OpQueue::push(Op&& op) {
    op.seq = next_seq_.load(std::memory_order_relaxed);
    next_seq_.store(op.seq + 1, std::memory_order_relaxed);
    op.owed = owed_for(op.kind);
    op.finished = op.ec || op.kind == OpKind::none;
    ops_.push_back(std::move(op));
    return ops_.back().seq;
}

bool OpQueue::acquire(Op& op) {
    const bool bounce = (op.kind == OpKind::write || op.kind == OpKind::read) && !op.user;
    const bool slot = op.kind == OpKind::request;
    if (credits_ == 0) return false;
    if (slot && slots_.free_count() == 0) return false;
    if (bounce) {
        // Never registers: none now means wait, as for any other resource.
        op.bounce = bounce_ ? bounce_->get() : nullptr;
        if (!op.bounce) {
            starved_ = true;
            return false;
        }
    }
    if (slot) op.slot = slots_.acquire();
    --credits_;
    op.holds_credit = true;
    return true;
}

bool OpQueue::take_direct(std::uint32_t credits, bool bounce, bool slot, DirectHold& out) {
    out = {};
    if (credits_ < credits || (slot && slots_.free_count() == 0)) return false;
    if (bounce) {
        out.entry = bounce_ ? bounce_->get() : nullptr;
        if (!out.entry) return false;
    }
    if (slot) out.slot = slots_.acquire();
    credits_ -= credits;
    out.credits = credits;
    return true;
}

void OpQueue::end_direct(DirectHold& hold, bool wr_pending) {
    credits_ += std::exchange(hold.credits, 0);
    if (hold.slot) slots_.release(*hold.slot);
    hold.slot.reset();
    MrBuffer* entry = std::exchange(hold.entry, nullptr);
    if (entry == nullptr) return;
    if (wr_pending)
        kept_aside_.push_back(entry);
    else
        bounce_->put(entry);
}

void OpQueue::defer_direct(DirectHold& hold) {
    // Keyed as the last op queued before it: any later op's completion,
    // and a later direct one's (retire_unsignaled_before(its before_seq)),
    // comes after it on the send queue.
    const std::uint64_t key = next_seq_.load(std::memory_order_relaxed) - 1;
    for (; hold.credits > 0; --hold.credits) unsignaled_credits_.push_back(key);
}

void OpQueue::release_held(Op& op) {
    if (op.holds_credit) ++credits_;
    op.holds_credit = false;
    if (op.slot) slots_.release(*op.slot);
    op.slot.reset();
}

void OpQueue::drop_bounce(Op& op) noexcept {
    if (op.bounce == nullptr) return;
    if (op.wr_pending)
        kept_aside_.push_back(op.bounce);
    else
        bounce_->put(op.bounce);
    op.bounce = nullptr;
}

void OpQueue::release_buffers() noexcept {
    for (auto& op : ops_)
        if (op.bounce) bounce_->put(std::exchange(op.bounce, nullptr));
    for (MrBuffer* b : kept_aside_) bounce_->put(b);
    kept_aside_.clear();
}

std::size_t OpQueue::bounce_held() const noexcept {
    std::size_t n = kept_aside_.size();
    for (const auto& op : ops_) n += op.bounce ? 1 : 0;
    return n;
}

namespace {

// A persist's write may go unsignaled only right in front of its flush
// (queued with it, under one lock): the flush needs no bounce entry, so it
// can always be posted once a credit or send slot frees up, and its
// completion retires the write. One such write at most waits on it. A
// native flush of several ranges is several FLUSHes: all but the last go
// so too, in front of the next.
bool may_defer(const Op& op, const Op* next) noexcept {
    return op.chain && (op.kind == OpKind::write || op.kind == OpKind::flush) && next && !next->finished &&
           (next->kind == OpKind::flush || next->kind == OpKind::request);
}

} // namespace

bool OpQueue::unsignaled(const Op& op, const Op* next) const noexcept {
    // A chained FLUSH only while fewer than signal_every_ credits wait, so a
    // persist of many ranges cannot hold every credit unsignaled (then
    // signaled, its completion retires the ones before it just as well).
    if (may_defer(op, next)) return op.kind == OpKind::write || may_go_unsignaled(1);
    // A request finishes with its reply, which the server sends only once
    // the frame was received: the send's own completion tells nothing more.
    // Unsignaled but one in signal_every_, so that a signaled completion
    // gives the credits of the unsignaled ones back in time.
    return op.kind == OpKind::request && may_go_unsignaled(1);
}

void OpQueue::posted_unsignaled(Op& op) {
    // Its send-queue entry is free only once a later work request's
    // completion is in, which may come after the op itself has finished
    // (a request's reply): the credit waits in unsignaled_credits_.
    op.holds_credit = false;
    unsignaled_credits_.push_back(op.seq);
    // A request then owes only its reply; a write its completion (or a
    // later reply, retire_unsignaled_before).
    if (op.kind == OpKind::request) --op.owed;
}

void OpQueue::pump(FunctionRef<std::error_code(Op&)> post) {
    starved_ = false;
    while (unposted_ < ops_.size()) {
        Op& op = ops_[unposted_];
        if (!op.finished) {
            if (!acquire(op)) return;  // everything behind it waits too
            op.unsignaled = unsignaled(op, unposted_ + 1 < ops_.size() ? &ops_[unposted_ + 1] : nullptr);
            if (auto ec = post(op)) {
                if (unposted_ > 0 && owes_wr(ops_[unposted_ - 1])) orphaned_ = true;
                release_held(op);  // nothing was posted: the entry is free at once
                drop_bounce(op);
                op.unsignaled = false;
                op.ec = ec;
                op.owed = 0;
                op.finished = true;
            } else {
                op.wr_pending = op.kind != OpKind::none;
                if (op.unsignaled) posted_unsignaled(op);
            }
        }
        op.posted = true;
        ++unposted_;
    }
}

Op* OpQueue::find(std::uint64_t seq) noexcept {
    if (seq < front_seq_ || seq - front_seq_ >= ops_.size()) return nullptr;
    return &ops_[static_cast<std::size_t>(seq - front_seq_)];
}

void OpQueue::settle(Op& op, std::error_code ec) noexcept {
    if (op.finished) return;
    if (ec && !op.ec) op.ec = ec;
    if (--op.owed <= 0) op.finished = true;
}

void OpQueue::retire_wr(Op& op) {
    // The send slot of a request stays taken until the reply is in: it is
    // the client's flow control, so no more requests are in flight than the
    // server has receives posted (kSendSlots <= kRecvSlots), and a send never
    // stalls the queue pair in RNR retries.
    if (op.holds_credit) ++credits_;
    op.holds_credit = false;
    op.wr_pending = false;
}

bool OpQueue::owes_wr(const Op& op) noexcept {
    // An unsignaled write (or chained FLUSH) not yet known done (a request
    // owes only its reply).
    return op.unsignaled && (op.kind == OpKind::write || op.kind == OpKind::flush) && !op.finished;
}

void OpQueue::retire_unsignaled_before(std::uint64_t seq, bool completion) {
    // Every op posted unsignaled waits here until a completion: none
    // waiting (a read's or a write's completion, mostly), nothing to do.
    if (unsignaled_credits_.empty()) return;
    for (auto& op : ops_) {
        if (op.seq >= seq) break;
        if (!op.posted) continue;
        if (owes_wr(op)) settle(op, {});
        // Done on the wire: a reply means the server had the frame, so the
        // device read every entry posted before it.
        if (op.unsignaled) op.wr_pending = false;
    }
    if (!completion) return;
    while (!unsignaled_credits_.empty() && unsignaled_credits_.front() < seq) {
        unsignaled_credits_.pop_front();
        ++credits_;
    }
}

void OpQueue::fail_all(std::error_code ec) {
    starved_ = false;
    // Nothing is posted after a failure: the entries are not reused.
    credits_ += static_cast<std::uint32_t>(unsignaled_credits_.size());
    unsignaled_credits_.clear();
    for (auto& op : ops_) {
        if (op.finished) continue;
        if (!op.ec) op.ec = ec;
        op.owed = 0;
        op.finished = true;
    }
}

void OpQueue::take_finished_from_front(FunctionRef<void(Op&)> take, std::uint64_t before) {
    while (!ops_.empty() && ops_.front().finished && ops_.front().seq < before) {
        Op& op = ops_.front();
        // A failed connection never completes these work requests; nothing
        // is posted after a failure, so their credit can go back (their
        // bounce entries wait for the queue pair's end: drop_bounce).
        drop_bounce(op);
        release_held(op);
        take(op);
        ops_.pop_front();
        ++front_seq_;
        if (unposted_ > 0) --unposted_;
    }
}

} // namespace rpm::rdma
