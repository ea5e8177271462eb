// A served region as the server's request handlers see it.
//
// The real one (PmemServedRegion) wraps an rpm::pmem::Region; the persistence
// model in tests/support/ simulates where each cache line sits (IIO buffer,
// LLC, WPQ, media) so crash tests drive the very same handlers. Bounds are
// checked by the handlers (src/server/handlers.cpp) before a ServedRegion is
// touched: a ServedRegion may assume every range lies inside it.
#pragma once

#include <rpm/flush.hpp>
#include <rpm/pmem.hpp>
#include <rpm/result.hpp>

#include "protocol/protocol.hpp"

#include <cstddef>
#include <cstdint>
#include <span>

namespace rpm::server {

using proto::Range;

/// Copies out.size() bytes from src (a region's memory) with one 8-byte load
/// per aligned word of the source, so a word that another connection stores
/// whole (store8) is seen old or new, never torn; the unaligned edges go a
/// byte at a time.
void load_words(std::span<std::byte> out, const std::byte* src) noexcept;

class ServedRegion {
public:
    virtual ~ServedRegion() = default;
    [[nodiscard]] virtual std::uint64_t size() const noexcept = 0;
    /// CPU stores of the server (the TCP transport applying a write).
    virtual void store(std::uint64_t offset, std::span<const std::byte> data) noexcept = 0;
    /// Aligned 8-byte words are loaded whole (see load_words).
    virtual void load(std::uint64_t offset, std::span<std::byte> out) const noexcept = 0;
    /// One aligned 8-byte store: never torn (commit records).
    virtual void store8(std::uint64_t offset, std::uint64_t value) noexcept = 0;
    /// The server's persist step over the ranges (see flush::ServerPersist).
    /// ERRORS: errc::deep_flush_failed, errc::io_error (msync).
    virtual Result<void> persist(flush::ServerPersist step, std::span<const Range> ranges) noexcept = 0;
    /// Base address for RDMA registration; nullptr where there is no real memory.
    [[nodiscard]] virtual std::byte* base() noexcept = 0;
};

/// The real ServedRegion over a mapped PM region.
class PmemServedRegion final : public ServedRegion {
public:
    explicit PmemServedRegion(pmem::Region region) noexcept : region_(std::move(region)) {}
    [[nodiscard]] std::uint64_t size() const noexcept override { return region_.size(); }
    void store(std::uint64_t offset, std::span<const std::byte> data) noexcept override;
    void load(std::uint64_t offset, std::span<std::byte> out) const noexcept override;
    void store8(std::uint64_t offset, std::uint64_t value) noexcept override;
    Result<void> persist(flush::ServerPersist step, std::span<const Range> ranges) noexcept override;
    [[nodiscard]] std::byte* base() noexcept override { return region_.bytes().data(); }
    [[nodiscard]] const pmem::Region& region() const noexcept { return region_; }

private:
    pmem::Region region_;
};

} // namespace rpm::server
