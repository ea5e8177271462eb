// What a crash may leave in each byte of a region, given what the client was
// told. A byte may hold the value of the last write to it that a returned
// flush covered (or its initial value if none did), or the value of any
// later write: those were in flight, and a crash may or may not keep them.
// Anything else is a lost byte: an acknowledged write that did not survive.
#pragma once

#include "server/served_region.hpp"

#include <bitset>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace rpm::test {

class DurabilityOracle {
public:
    /// Start over with `initial` as the durable contents of the region.
    void reset(std::span<const std::byte> initial);

    /// A write was issued (its bytes may or may not survive a crash).
    void wrote(std::uint64_t offset, std::span<const std::byte> data);
    /// A flush of `ranges` returned: the newest writes there must survive.
    void acknowledged(std::span<const server::Range> ranges);

    /// The newest value of each byte, what a reader must see before a crash.
    [[nodiscard]] const std::vector<std::byte>& newest() const noexcept { return newest_; }
    /// Bytes of a post-crash image that hold no acceptable value.
    [[nodiscard]] std::uint64_t lost_bytes(std::span<const std::byte> image) const;

private:
    using Values = std::bitset<256>;
    Values& values(std::size_t at);

    // A byte never written since reset() accepts only its initial value, so
    // its set is built on first use: `epoch_` says whose set is current,
    // which spares clearing 32 bytes per region byte on every reset.
    std::vector<std::byte> initial_;
    std::vector<std::byte> newest_;
    std::vector<Values> acceptable_;
    std::vector<std::uint32_t> epoch_;
    std::uint32_t run_ = 0;
};

} // namespace rpm::test
