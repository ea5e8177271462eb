// Sizes of an RDMA connection. (What this build's rdma-core can do, native
// FLUSH, is the build probe's: flush::rdma_ability(), verbs.cpp.)
//
// One place for the numbers docs/rdma.md quotes. Tests shrink them through
// ClientLimits / ServerLimits to reach the "queue full" paths quickly.
#pragma once

#include <rpm/mr_pool.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace rpm::rdma {

/// Send-queue depth: RDMA writes, reads, atomic writes, flushes and sends
/// in flight on one connection. The completion queue never holds more than
/// this plus the posted receives.
inline constexpr std::uint32_t kSqDepth = 128;
/// A client signals one request's send in this many at most (half its
/// send-queue depth, if fewer): a request finishes with its reply, and a
/// signaled completion gives back the send-queue entries of the unsignaled
/// work requests before it (RC completes a send queue in order).
inline constexpr std::uint32_t kSignalEvery = 16;
/// Posted receives per connection, each a message slot.
inline constexpr std::uint32_t kRecvSlots = 8;
/// Send slots per connection: control frames in flight.
inline constexpr std::uint32_t kSendSlots = 8;
// A client never has more requests awaiting a reply than it has send slots;
// the server must have a receive posted for each (no RNR stalls).
static_assert(kSendSlots <= kRecvSlots);
/// One control frame (header + body) must fit a slot. 64 KiB leaves room
/// for a server's platform profile in Welcome; application messages over
/// rdma:// are limited to kSlotSize - 16 bytes.
inline constexpr std::size_t kSlotSize = 64 * 1024;
/// Larger writes and reads are cut into work requests of at most this size;
/// each chunk goes through one entry of the device's bounce pool.
inline constexpr std::size_t kMaxChunk = 256 * 1024;
/// The most one work request moves from or into registered application
/// memory (RC messages may be up to 2 GiB; bounded so one call does not
/// hold the send queue's head for long).
inline constexpr std::size_t kMaxUserChunk = std::size_t{16} << 20;

// Registered-buffer pools (rpm::MrPool, docs/rdma.md "Buffers"). A client
// process has one bounce pool and one message pool per RDMA device, shared
// by every connection on it; a listener has one message pool for its
// sessions. The I/O path never registers: an operation that finds no free
// entry waits in its queue.

/// Bounce entries per device at most: 64 MiB of 256 KiB chunks.
inline constexpr std::uint32_t kBouncePoolBudget = 256;
/// Registered when the device's first connection opens: four connections'
/// worth of L1 caches.
inline constexpr std::uint32_t kBouncePoolInitial = 16;
/// A connection's L1: four chunks, the 1 MiB a connection used to register
/// for itself, so one busy connection never touches the shared levels.
inline constexpr std::uint32_t kBouncePoolL1 = 4;
/// Message-slot buffers (one per connection) per device, client side.
inline constexpr std::uint32_t kMessagePoolBudget = 64;
inline constexpr std::uint32_t kMessagePoolInitial = 2;
/// Session message-slot buffers per listener; beyond the budget a session
/// registers its own, as before the pools.
inline constexpr std::uint32_t kServerMessagePoolBudget = 64;
inline constexpr std::uint32_t kServerMessagePoolInitial = 4;
/// How often a connection whose next operation waits for a bounce entry
/// asks the pool again (the pool refills in the background).
inline constexpr int kBounceRetryMs = 1;

/// The transport's pools' background period. MrPool's default (1 ms, the
/// seed's) woke two threads a thousand times a second in every client and
/// server process, for nothing while the pool is steady: in the lab VM that
/// cost 14% of a read's p50 and a third of its CPU (docs/benchmarks-history.md, "The
/// floor, measured"). A miss still wakes the thread at once (note_miss), so
/// only refills ahead of a miss and idle aging (100 ms) run at this period.
inline constexpr std::chrono::milliseconds kPoolMonitorInterval{10};

/// A client device's bounce pool; buffer_size is the connection's chunk.
inline MrPoolOptions bounce_pool_defaults() {
    MrPoolOptions o;
    o.buffer_size = kMaxChunk;
    o.budget = kBouncePoolBudget;
    o.initial = kBouncePoolInitial;
    o.floor = kBouncePoolInitial;
    o.low_water = 8;
    o.replenish_batch = 8;
    o.l1_entries = kBouncePoolL1;
    o.l2_buckets = 4;
    o.l2_entries = 16;
    o.monitor_interval = kPoolMonitorInterval;
    return o;
}

/// Message-slot buffers: one entry is a connection's whole slot layout
/// (buffer_size is set from it), held for the connection's life.
inline MrPoolOptions message_pool_defaults(std::uint32_t budget = kMessagePoolBudget,
                                           std::uint32_t initial = kMessagePoolInitial) {
    MrPoolOptions o;
    o.budget = budget;
    o.initial = initial;
    o.floor = initial;
    o.low_water = 1;
    o.replenish_batch = 2;
    o.l1_entries = 1;
    o.l2_buckets = 4;
    o.l2_entries = 2;
    o.monitor_interval = kPoolMonitorInterval;
    return o;
}

} // namespace rpm::rdma
