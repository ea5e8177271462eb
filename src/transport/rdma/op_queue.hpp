// The client's operations in posting order.
//
// Every operation is queued here first, posted when its resources are free
// (a send-queue credit, a bounce entry from the device's pool, a send slot)
// and strictly in order: an operation that must wait holds back every later one, so a
// flush never overtakes the writes it has to cover. Operations finish when
// their completion (and, for requests, the server's reply) has arrived, and
// their callbacks are handed out in posting order. Not thread-safe: the
// client holds its mutex around every call.
#pragma once

#include "client/transport.hpp"
#include "core/block_cache.hpp"
#include "core/function_ref.hpp"
#include "transport/rdma/api.hpp"
#include "transport/rdma/buffers.hpp"
#include "transport/rdma/user_memory.hpp"

#include <rpm/mr_pool.hpp>

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace rpm::rdma {

enum class OpKind {
    none,          ///< no work request: finishes as soon as it is queued (errors, empty spans)
    write,         ///< write from a bounce entry, or from registered user memory
    read,          ///< read into a bounce entry, or into registered user memory
    atomic_write,  ///< atomic_write (8 bytes, inline)
    flush,         ///< flush(PERSISTENT): an 8-byte read (read-after-write) or a native FLUSH (Op::flush_call)
    request,       ///< send of a frame, then the server's reply
};

/// Turns the reply frame of a request into the operation's status.
using OnReply = std::function<std::error_code(const proto::Header&, std::span<const std::byte>)>;

struct Op {
    OpKind kind = OpKind::none;
    client::Done done;
    std::error_code ec;  ///< the first error; set before queuing for a failed call
    // What to post.
    RemoteMr* remote = nullptr;
    std::uint64_t remote_offset = 0;
    std::uint64_t length = 0;
    std::span<const std::byte> src;  ///< write: copied into the bounce entry when posted
    std::span<std::byte> out;        ///< read: copied out of the bounce entry on completion
    std::uint64_t value = 0;         ///< atomic_write, in wire (little-endian) byte order
    /// flush: the Api call that posts it (Api::flush or Api::flush_native),
    /// set by the region's flusher, so posting it asks no method.
    decltype(&Api::flush) flush_call = nullptr;
    std::vector<std::byte> frame;    ///< request: copied into a send slot when posted
    std::uint32_t request_id = 0;
    OnReply on_reply;
    /// write (or a native flush of one range of several): part of a
    /// persist; posted without a completion of its own (kCompletionOnError)
    /// when the op behind it is the persist's (next) flush, whose
    /// completion then retires it (RC completes in order).
    bool chain = false;
    /// A persist's write (or commit word): no callback of its own; its
    /// error, if the first, goes to the op behind it (the persist's flush).
    bool joins_next = false;
    /// Posted so: a persist's write (retired by a later completion or
    /// reply), or a request (finished by its reply); either way its
    /// send-queue credit comes back with a later completion.
    bool unsignaled = false;
    // Bookkeeping.
    std::uint64_t seq = 0;
    int owed = 0;  ///< completions still to come: the work request's, the reply
    bool posted = false;
    bool finished = false;
    bool holds_credit = false;
    /// Posted and not known done on the wire: a failed connection keeps its
    /// bounce entry aside (the device may still read or write it).
    bool wr_pending = false;
    MrBuffer* bounce = nullptr;  ///< write/read: the pool entry, from posting until the op retires
    std::shared_ptr<UserMemory> user;  ///< write/read: src/out lie in this registration (no bounce entry)
    std::optional<std::uint32_t> slot;
};

/// `frame` fits a send slot of `slot_size` bytes: success, or errc::bad_size.
[[nodiscard]] std::error_code frame_fits(const std::vector<std::byte>& frame, std::size_t slot_size) noexcept;
/// A request op: `frame` to send (a request of id `rid`), its reply turned
/// into a status by `on_reply`; failed at once (bad_size) when `frame` does
/// not fit a send slot of `slot_size` bytes.
[[nodiscard]] Op request_op(std::vector<std::byte> frame, std::uint32_t rid, OnReply on_reply, client::Done done,
                            std::size_t slot_size);

class OpQueue {
public:
    OpQueue(std::uint32_t credits, std::uint32_t send_slots);
    OpQueue(const OpQueue&) = delete;
    OpQueue& operator=(const OpQueue&) = delete;

    /// Where writes and reads take their bounce entries (one per op, which
    /// is at most one entry long). Set before the first write or read.
    void use_bounce(MrPoolUser* user) noexcept { bounce_ = user; }

    /// Queue an operation; returns its sequence number (>= 1).
    std::uint64_t push(Op&& op);
    /// Post queued operations in order while resources last. `post` issues
    /// the work request and returns the error of a failed post.
    void pump(FunctionRef<std::error_code(Op&)> post);
    [[nodiscard]] Op* find(std::uint64_t seq) noexcept;
    /// One owed completion arrived; the first error sticks.
    void settle(Op& op, std::error_code ec) noexcept;
    /// The op's work request completed: its send-queue credit is free (a
    /// request's send slot is freed when the op finishes).
    void retire_wr(Op& op);
    /// Everything posted before op `seq` is done: a work request's
    /// completion (`completion`: RC, one send queue, completes in order),
    /// or a request's reply (the server received the frame, so every write
    /// posted before it was placed). Settle the unsignaled writes before
    /// it; on a completion, their send-queue entries (and unsignaled
    /// requests') are free again too.
    void retire_unsignaled_before(std::uint64_t seq, bool completion = true);
    /// A post failed right behind an unsignaled op, which no completion will
    /// ever retire now: the connection must fail. Reading clears it.
    [[nodiscard]] bool take_orphaned() noexcept { return std::exchange(orphaned_, false); }
    /// What an operation posted outside the queue (ClientConn's direct
    /// operation, only while the queue holds nothing unfinished) holds of
    /// the queue's resources.
    struct DirectHold {
        std::uint32_t credits = 0;
        MrBuffer* entry = nullptr;           ///< a bounce entry, when the data is not registered memory
        std::optional<std::uint32_t> slot;   ///< a send slot, for a request
    };
    /// Take `credits` send-queue credits, a bounce entry of the pool when
    /// `bounce`, and a send slot when `slot`. RETURN VALUE: false, taking
    /// nothing, when any is short (the operation then goes through the
    /// queue, which waits for them).
    bool take_direct(std::uint32_t credits, bool bounce, bool slot, DirectHold& out);
    /// That operation is over: its credits and slot come back, and its
    /// entry (if any) goes back to the pool, or aside when its work request
    /// may still be on the wire (`wr_pending`: the connection failed first).
    void end_direct(DirectHold& hold, bool wr_pending);
    /// Whether `n` more work requests may go unsignaled: fewer than
    /// signal_every_ send-queue entries then wait for a later completion,
    /// so one is always free for a signaled work request that retires them.
    [[nodiscard]] bool may_go_unsignaled(std::uint32_t n) const noexcept {
        return unsignaled_credits_.size() + n < signal_every_;
    }
    /// The direct operation's work requests went unsignaled: their credits
    /// come back with the next completion (retire_unsignaled_before), in
    /// posting order after what was queued before it, not with end_direct.
    void defer_direct(DirectHold& hold);
    /// Finish every unfinished operation with `ec` (the connection failed).
    void fail_all(std::error_code ec);
    /// Hand each finished operation at the front, in posting order, to
    /// `take` (which moves out what it needs: the client, the callback and
    /// status) and drop it; their bounce entries go back to the pool. An entry whose work request
    /// never completed (the connection failed) is kept aside instead: the
    /// RNIC may still touch it until the queue pair is destroyed.
    /// Only operations before sequence number `before` (a direct one's
    /// callback runs in between: ClientConn::deliver_round).
    /// Inline, as most rounds find nothing to take: no call for them.
    void take_finished(FunctionRef<void(Op&)> take, std::uint64_t before = UINT64_MAX) {
        if (front_finished()) take_finished_from_front(take, before);
    }
    /// Give back every entry still held (ops left in the queue, those kept
    /// aside). Only after the connection is deleted.
    void release_buffers() noexcept;
    [[nodiscard]] bool front_finished() const noexcept { return !ops_.empty() && ops_.front().finished; }
    /// Every queued operation has finished (their callbacks wait): nothing
    /// of the queue is on the wire, nor will be.
    [[nodiscard]] bool all_finished() const noexcept {
        for (const auto& op : ops_)
            if (!op.finished) return false;
        return true;
    }
    [[nodiscard]] std::size_t size() const noexcept { return ops_.size(); }
    /// Operations queued so far. The one member safe to read without the
    /// client's mutex: the thread that runs callbacks compares it before
    /// and after them, to see whether they queued anything.
    [[nodiscard]] std::uint64_t pushed() const noexcept { return next_seq_.load(std::memory_order_relaxed) - 1; }
    /// Some op was posted and not taken back yet: once finished ones are
    /// taken, a completion (or a request's reply) is on its way.
    [[nodiscard]] bool posted() const noexcept { return unposted_ > 0; }
    /// Some op waits to be posted (pump has work).
    [[nodiscard]] bool has_unposted() const noexcept { return unposted_ < ops_.size(); }
    [[nodiscard]] std::uint32_t credits() const noexcept { return credits_; }
    [[nodiscard]] const SlotPool& slots() const noexcept { return slots_; }
    /// The next op waits for a bounce entry the pool had none of: nothing
    /// this connection does may free one, so the caller retries on a timer.
    [[nodiscard]] bool starved() const noexcept { return starved_ && unposted_ < ops_.size(); }
    /// Entries held now: by ops in flight, and kept aside.
    [[nodiscard]] std::size_t bounce_held() const noexcept;

private:
    void take_finished_from_front(FunctionRef<void(Op&)> take, std::uint64_t before);
    bool acquire(Op& op);
    [[nodiscard]] bool unsignaled(const Op& op, const Op* next) const noexcept;
    void posted_unsignaled(Op& op);
    static bool owes_wr(const Op& op) noexcept;
    void release_held(Op& op);
    void drop_bounce(Op& op) noexcept;

    // A deque: posted ops keep their address. Two Ops fit in one of its
    // blocks, so it would allocate on every other push: the cache (declared
    // first, destroyed last) keeps the blocks the pops give back.
    BlockCache block_cache_;
    std::deque<Op, BlockCacheAllocator<Op>> ops_{BlockCacheAllocator<Op>(block_cache_)};
    std::uint64_t front_seq_ = 1;
    std::atomic<std::uint64_t> next_seq_{1};  // written under the client's mutex only
    std::size_t unposted_ = 0;  // index of the first op not yet posted
    std::uint32_t credits_;
    // Sequence numbers of unsignaled work requests whose send-queue entry
    // (credit) waits for a later completion, in posting order: at most
    // signal_every_ (OpQueue::unsignaled lets a request go unsignaled only
    // while fewer than signal_every_ - 1 wait, a direct persist its two
    // only while fewer than signal_every_ - 2 do; a persist's write may
    // join them right in front of the signaled one).
    std::deque<std::uint64_t> unsignaled_credits_;
    std::uint32_t signal_every_;
    SlotPool slots_;
    MrPoolUser* bounce_ = nullptr;
    std::vector<MrBuffer*> kept_aside_;
    bool starved_ = false;
    bool orphaned_ = false;
};

/// The number of work-request completions plus replies an op owes.
int owed_for(OpKind k) noexcept;

} // namespace rpm::rdma
