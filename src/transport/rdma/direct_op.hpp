// The state of the one operation a connection may have outside its op
// queue (client_direct.cpp says when one goes so): what it holds, what it
// still owes (its signaled completion, a send_flush persist's Response),
// its outcome until deliver_round hands it out, and the Flush frame a
// send_flush persist sends. Its own object so that the steps of its life
// (begin, settle, fail, hand out) are written once; the connection calls
// it under its mu_, and only posts() is read without it.
#pragma once

#include "client/transport.hpp"
#include "transport/rdma/op_queue.hpp"
#include "transport/rdma/user_memory.hpp"
#include "transport/rdma/wr_tags.hpp"

#include <atomic>
#include <cstring>
#include <cstdint>
#include <memory>
#include <span>
#include <system_error>
#include <utility>
#include <vector>

namespace rpm::rdma {

class DirectOp {
public:
    /// Posted, its completion (and reply) not all in yet.
    [[nodiscard]] bool active() const noexcept { return active_; }
    /// Over; its callback not handed out yet.
    [[nodiscard]] bool finished() const noexcept { return finished_; }
    [[nodiscard]] bool pending() const noexcept { return active_ || finished_; }
    /// Direct operations begun so far: a driver's deliver_round compares it
    /// around the callbacks it runs, as it does the queue's count, to see
    /// whether they posted anything (its next wait then expects a completion).
    [[nodiscard]] std::uint64_t posts() const noexcept { return posts_.load(std::memory_order_relaxed); }
    /// The queue's next sequence number when it was posted: its place in posting order.
    [[nodiscard]] std::uint64_t before_seq() const noexcept { return before_seq_; }
    [[nodiscard]] OpQueue::DirectHold& hold() noexcept { return hold_; }

    /// It is posted (or about to be): it takes `hold`, and `done` unless
    /// null (`sync_gen` not 0: transfer_now's, whose outcome goes to its call).
    /// Inline, as are on_completion and settle: they run on every direct
    /// operation, where a call costs tens of nanoseconds in the lab
    /// (docs/benchmarks-history.md, "A call costs more than its instructions in the lab").
    void begin(OpKind kind, OpQueue::DirectHold& hold, std::shared_ptr<UserMemory> user, std::span<std::byte> out,
               client::Done* done, std::uint64_t sync_gen, std::uint64_t before_seq) {
        active_ = true;
        kind_ = kind;
        owed_ = 1;
        wc_done_ = false;
        rid_ = 0;
        out_ = out;
        hold_ = std::exchange(hold, {});
        user_ = std::move(user);
        ec_ = kSuccess;
        if (done)
            done_ = std::move(*done);
        else
            done_ = nullptr;  // inline: an empty one holds nothing to destroy
        sync_gen_ = sync_gen;
        before_seq_ = before_seq;
        posts_.fetch_add(1, std::memory_order_relaxed);
    }
    /// What it owes besides its signaled completion: `owed` in all
    /// (a flusher's post_direct sets it), and the Response to `rid` (not 0).
    void owe(int owed, std::uint32_t rid = 0) noexcept {
        owed_ = owed;
        if (rid != 0) rid_ = rid;
    }
    /// Nothing was posted: it fails with `ec`, the connection does not.
    void post_failed(OpQueue& ops, std::error_code ec);
    /// Its signaled work request completed. RETURN VALUE: true when that
    /// was the last it owed (settle).
    bool on_completion(OpQueue& ops) {
        wc_done_ = true;
        // RC completes in order: what went unsignaled before it is done too.
        ops.retire_unsignaled_before(before_seq_);
        if (kind_ == OpKind::read && hold_.entry) std::memcpy(out_.data(), hold_.entry->data(), out_.size());
        return settle(ops, kSuccess);
    }
    /// A work request of the connection failed: whether it was this one's
    /// signaled request (nothing of it is on the wire then).
    void on_failed_wc(std::uint64_t wr_id) noexcept {
        if (active_) wc_done_ = wr_id == kDirectTag;
    }
    /// A Response to `rid`. RETURN VALUE: false when it answers something else.
    [[nodiscard]] bool awaits_reply(std::uint32_t rid) const noexcept {
        return active_ && rid_ != 0 && rid == rid_;
    }
    /// The Response it awaited, with its status. RETURN VALUE: as settle.
    bool settle_reply(OpQueue& ops, std::error_code ec) {
        rid_ = 0;
        return settle(ops, ec);
    }
    /// One of what it owes came in, with `ec`. RETURN VALUE: true when it
    /// is over (its credits may let queued operations go).
    bool settle(OpQueue& ops, std::error_code ec) {
        if (ec && !ec_) ec_ = ec;
        if (--owed_ > 0) return false;
        active_ = false;
        ops.end_direct(hold_, false);
        finished_ = true;
        return true;
    }
    /// The connection failed: its work request may still be on the wire,
    /// and the queue keeps what it holds aside until the QP is gone.
    void fail(OpQueue& ops, std::error_code ec);
    /// The connection is torn down without having failed: give back what it holds.
    void release(OpQueue& ops);

    // Handing out its outcome (take_direct_locked): in place, no temporary.
    [[nodiscard]] std::error_code ec() const noexcept { return ec_; }
    [[nodiscard]] OpKind kind() const noexcept { return kind_; }
    [[nodiscard]] client::Done& done() noexcept { return done_; }
    /// Not 0: transfer_now's call it reports to (and 0 from now on).
    std::uint64_t take_sync_gen() noexcept { return std::exchange(sync_gen_, 0); }
    [[nodiscard]] bool has_sync_gen() const noexcept { return sync_gen_ != 0; }
    /// Its outcome is being handed out: no longer pending.
    void handed_out() noexcept {
        finished_ = false;
        user_.reset();
    }

    /// A send_flush persist's Flush frame (keeps its capacity) and its request id.
    std::vector<std::byte> frame;
    std::uint32_t frame_rid = 0;

private:
    // No error, made once: std::error_code{} calls std::system_category() in
    // libstdc++, a call per use on every direct operation (twice).
    static const std::error_code kSuccess;

    bool active_ = false;
    bool finished_ = false;
    OpKind kind_ = OpKind::none;  // write, read; flush or request: a persist's
    int owed_ = 0;                // the signaled completion, and a send_flush persist's reply
    bool wc_done_ = false;        // its signaled work request completed: nothing of it is on the wire
    std::uint32_t rid_ = 0;       // a send_flush persist's Flush, awaiting its Response
    std::span<std::byte> out_;    // a read through the entry: copied out on completion
    OpQueue::DirectHold hold_;
    std::shared_ptr<UserMemory> user_;
    std::uint64_t before_seq_ = 0;
    std::error_code ec_;
    client::Done done_;
    std::uint64_t sync_gen_ = 0;  // not 0: transfer_now's, no `done` (try_direct)
    std::atomic<std::uint64_t> posts_{0};
};

} // namespace rpm::rdma
