// The 4 KiB header at the start of every member's region. The replicator
// writes it whole when it synchronises a member, and single fields (8-byte
// aligned) afterwards, so a field is never seen torn.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace rpm::replication {

inline constexpr std::uint64_t kHeaderMagic = 0x314C5045524D5052ull;  // "RPMREPL1"
inline constexpr std::uint32_t kHeaderVersion = 1;

// Field offsets inside the header (region offsets).
inline constexpr std::size_t kOffMagic = 0;
inline constexpr std::size_t kOffVersion = 8;
inline constexpr std::size_t kOffGroup = 16;      // 16 bytes
inline constexpr std::size_t kOffGeneration = 32;
inline constexpr std::size_t kOffHighWater = 40;
inline constexpr std::size_t kOffPosition = 48;
inline constexpr std::size_t kOffDataSize = 56;
inline constexpr std::size_t kHeaderBytes = 64;   // what is written; the rest of the page is reserved

/// The group a region belongs to: random when the first primary creates it.
using GroupId = std::array<std::byte, 16>;

struct Header {
    GroupId group{};
    /// The generation that last synchronised this member: each
    /// Replicator::open starts one more than the highest any member held.
    /// Not the fencing term (ReplicatorOptions::fencing_term), which the
    /// servers keep apart, in their fence files.
    std::uint64_t generation = 0;
    std::uint64_t high_water = 0;  ///< data bytes [0, high_water) may have been written
    std::uint64_t position = 0;    ///< an LSN this member is known persistent up to (a lower bound)
    std::uint64_t data_size = 0;
};

/// nullopt-like: valid is false for a blank or foreign-format page.
struct DecodedHeader {
    bool valid = false;
    Header h;
};

DecodedHeader decode_header(std::span<const std::byte> page) noexcept;
std::array<std::byte, kHeaderBytes> encode_header(const Header& h) noexcept;
GroupId random_group();
bool is_zero(const GroupId& g) noexcept;

/// High-water marks move in steps, so growing one costs a header write per
/// step rather than per append.
inline constexpr std::uint64_t kHighWaterStep = 1u << 20;

} // namespace rpm::replication
