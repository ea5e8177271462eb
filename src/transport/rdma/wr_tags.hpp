// The contexts a client connection gives its work requests, by which a
// completion finds what it completes: in one header for the connection's
// set-up (its receives), its direct path and its completion handling.
#pragma once

#include <cstdint>

namespace rpm::rdma {

/// Work-request contexts: a receive slot has the top bit set, an operation
/// is its sequence number (never 0: a NULL context is refused).
inline constexpr std::uint64_t kRecvTag = std::uint64_t{1} << 63;
/// The work request of a direct operation (client_direct.cpp).
inline constexpr std::uint64_t kDirectTag = std::uint64_t{1} << 62;
/// A direct persist's unsignaled write (its completion comes only on failure).
inline constexpr std::uint64_t kDirectWriteTag = kDirectTag | 1;
/// A work request's context made of one of the tags above.
inline const void* wr_tag(std::uint64_t t) noexcept { return reinterpret_cast<const void*>(t); }

} // namespace rpm::rdma
