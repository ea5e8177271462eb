// How a region's writes are made durable over rdma://: one Flusher per
// flush method, chosen once when the region's grant is applied
// (Flusher::of), as librpma picks one flush function per connection (its
// src/flush.c). The posting paths call through it and never ask the method
// again. Each queues the flush of a flush() or persist() behind its writes,
// and posts the flush behind a direct one-slice persist's write
// (client_direct.cpp).
//
//   read_after_write  an 8-byte RDMA read behind the writes (Api::flush):
//                     one read covers every earlier write on the connection
//   send_flush        a Flush frame naming the ranges; the server runs its
//                     persist step and answers
//   native_flush      an IBTA FLUSH per written range (Api::flush_native:
//                     placement type persistent, selectivity range), in the
//                     writes' chain; the responder's RNIC makes the range
//                     durable, the server's CPU does nothing
//
// A flusher works on what the connection lends it (FlushWork), always
// under the connection's lock; it owns no state of its own.
#pragma once

#include "core/function_ref.hpp"
#include "protocol/protocol.hpp"
#include "transport/rdma/api.hpp"
#include "transport/rdma/client_link.hpp"
#include "transport/rdma/direct_op.hpp"
#include "transport/rdma/op_queue.hpp"
#include "transport/rdma/requests.hpp"

#include <rpm/flush_plan.hpp>

#include <cstdint>
#include <span>

namespace rpm::rdma {

struct RemoteRegion;

/// What a flusher works with: the connection's verbs layer, set-up, op
/// queue, request ids and direct operation (ClientConn lends them once).
struct FlushWork {
    const Api& api;
    ClientLink& link;
    OpQueue& ops;
    Requests& requests;
    DirectOp& direct;
};

/// Where a queued flush's operations go, in order (ClientConn::submit_flush_locked).
/// An operation that joins the next (Op::joins_next) is queued without being
/// posted; the one that does not ends the flush, with its callback, and posts
/// them all under one doorbell.
using OpSink = FunctionRef<void(Op&&)>;

struct Flusher {
    flush::Method method;
    /// Queue what flushes `ranges` of `r` into `sink`; `done` goes with the last.
    void (*queue)(FlushWork& w, const RemoteRegion& r, std::uint32_t grant_id, std::span<const proto::Range> ranges,
                  client::Done&& done, OpSink sink);
    /// A direct one-slice persist (try_direct_persist): its flush takes
    /// a send slot; the kind its completion finishes it as.
    bool direct_slot;
    OpKind direct_kind;
    /// Before anything is taken (nullptr: nothing to do). RETURN VALUE:
    /// false: the persist goes through the queue instead.
    bool (*prepare_direct)(FlushWork& w, std::uint32_t grant_id, const proto::Slice& s);
    /// Queue the flush behind the direct write (deferred doorbell) and
    /// set what the direct operation owes. RETURN VALUE: the Api's code.
    int (*post_direct)(FlushWork& w, const RemoteRegion& r, const proto::Slice& s);

    /// The flusher of `m`'s grants (static tables); nullptr for no method.
    static const Flusher* of(flush::Method m) noexcept;
};

} // namespace rpm::rdma
