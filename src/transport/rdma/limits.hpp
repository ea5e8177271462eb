// Sizes of an RDMA connection and what this build of librpma can do.
//
// One place for the numbers docs/rdma.md quotes. Tests shrink them through
// ClientLimits / ServerLimits to reach the "queue full" paths quickly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace rpm::rdma {

/// Send-queue depth: RDMA writes, reads, atomic writes, flushes and sends
/// in flight on one connection. Every one is signalled, so the completion
/// queue never holds more than this plus the posted receives.
inline constexpr std::uint32_t kSqDepth = 128;
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
/// The registered bounce buffer every write and read goes through.
inline constexpr std::size_t kBounceSize = 1024 * 1024;
/// Larger writes and reads are cut into work requests of at most this size
/// so several can be in flight in the bounce buffer at once.
inline constexpr std::size_t kMaxChunk = 256 * 1024;

/// librpma 1.2.0 implements rpma_flush() only as read-after-write (an 8-byte
/// RDMA read). Native IBTA FLUSH (ibv_wr_flush) arrived in librpma 1.3.0,
/// and only when built against rdma-core >= 45; Debian 12 ships 1.2.0 on
/// rdma-core 44. Flip this (and revisit client_region.cpp) when moving on.
inline constexpr bool kNativeFlushAvailable = false;
inline constexpr std::string_view kNativeFlushUnavailable =
    "native_flush cannot be honored over rdma://: librpma 1.2.0 implements rpma_flush only as "
    "read-after-write (native ibv_wr_flush needs librpma >= 1.3 built on rdma-core >= 45); "
    "set RPM_NATIVE_FLUSH=no on the server to use the platform table instead";

} // namespace rpm::rdma
