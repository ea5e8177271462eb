// A simulated persistent-memory target: where each cache line of a region
// sits on its way from the RNIC (or a CPU store) to the media, and what a
// power failure leaves behind.
//
// This is the model of docs/persistence-model.md (and of "A model that makes
// the table falsifiable" in the design brief). Each 64-byte line has
//   current  the newest bytes (what a reader sees),
//   durable  the newest bytes that have reached a level inside the
//            persistence domain,
//   level    where `current` is: IIO buffer, LLC, memory controller (WPQ),
//            media.
// The persistence domain decides which levels survive a crash: eADR (LLC,
// WPQ, media), ADR (WPQ, media), none/unknown (media), not_pmem (media only,
// where "WPQ" stands for the page cache in DRAM and "media" for the disk).
//
// Events move lines forward: NIC writes land in the IIO buffer; an RDMA read
// or the arrival of a send pushes every IIO line one step on (to the LLC with
// DDIO on, to the WPQ with DDIO off: PCIe ordering); the server's persist
// steps flush caches and drain the WPQ; a native RDMA FLUSH writes a range to
// media. Random drift (drift()) moves lines on spontaneously, as real
// hardware does, but no correct flush method may depend on it. crash()
// returns the surviving image: lines at a persistent level keep `current`;
// the others tear at 8-byte granularity (each aligned word is `current` or
// `durable`, chosen by the seeded RNG).
//
// It implements server::ServedRegion, so the server's request handlers drive it
// exactly as they drive a real PmemServedRegion.
#pragma once

#include "pm_model_rng.hpp"
#include "server/served_region.hpp"

#include <rpm/flush.hpp>
#include <rpm/persistence.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace rpm::test {

/// Where a cache line's newest value is, from the RNIC towards the media.
enum class Level : std::uint8_t { iio, llc, wpq, media };
std::string_view to_string(Level l) noexcept;

struct ModelConfig {
    PersistenceDomain domain = PersistenceDomain::memory_controller;
    Ddio ddio = Ddio::on;            ///< unknown behaves as on (the hardware default)
    std::uint64_t size = 64 * 1024;  ///< bytes; rounded up to whole cache lines
    std::uint64_t seed = 1;          ///< drives drift and tearing
};

/// What happened to the model, for reports and for tests of the tests.
struct ModelStats {
    std::uint64_t nic_writes = 0;
    std::uint64_t stores = 0;
    std::uint64_t store8s = 0;
    std::uint64_t iio_pushes = 0;     ///< reads + sends (each pushes every IIO line)
    std::uint64_t lines_pushed = 0;
    std::uint64_t drifted_lines = 0;  ///< spontaneous moves
    std::uint64_t native_flushes = 0;
    std::uint64_t persists = 0;
    std::uint64_t crashes = 0;
    std::uint64_t torn_words = 0;     ///< words that lost their newest value in a crash
};

class PersistenceModel final : public server::ServedRegion {
public:
    static constexpr std::uint64_t kLine = 64;
    static constexpr std::uint64_t kWord = 8;

    explicit PersistenceModel(const ModelConfig& cfg);

    // --- server::ServedRegion: the server CPU's view (TCP writes, persist steps) ---
    [[nodiscard]] std::uint64_t size() const noexcept override { return current_.size(); }
    /// CPU stores land in the LLC (whatever DDIO says: DDIO is about PCIe).
    void store(std::uint64_t offset, std::span<const std::byte> data) noexcept override;
    void load(std::uint64_t offset, std::span<std::byte> out) const noexcept override;
    /// One aligned 8-byte store; aborts on a misaligned offset (a handler bug).
    void store8(std::uint64_t offset, std::uint64_t value) noexcept override;
    Result<void> persist(flush::ServerPersist step, std::span<const server::Range> ranges) noexcept override;
    [[nodiscard]] std::byte* base() noexcept override { return nullptr; }

    // --- the RNIC's view (RDMA) ---
    /// An inbound RDMA write: the touched lines' new bytes wait in the IIO buffer.
    void nic_write(std::uint64_t offset, std::span<const std::byte> data) noexcept;
    /// The read of read_after_write: its response cannot pass the posted writes.
    void nic_read() noexcept { push_iio(); }
    /// A send's arrival (send_flush): its receive completion cannot pass them either.
    void nic_receive() noexcept { push_iio(); }
    /// Native persistent RDMA FLUSH: the responder writes the range to media.
    void nic_native_flush(std::uint64_t offset, std::uint64_t length) noexcept;

    // --- the platform on its own ---
    /// `events` spontaneous moves of random unsettled lines: IIO drain (to LLC
    /// or WPQ by DDIO), LLC eviction (to WPQ), WPQ drain (to media).
    void drift(unsigned events) noexcept;
    /// Power fails: returns the surviving image, and the model restarts from
    /// it with every line on media (as after recovery).
    std::vector<std::byte> crash();

    // --- set-up and inspection ---
    /// Contents that were durable before the test began (every line on media).
    void preset(std::uint64_t offset, std::span<const std::byte> data) noexcept;
    [[nodiscard]] Level level_of(std::uint64_t offset) const noexcept { return level_[offset / kLine]; }
    /// Whether a line at `l` survives a crash in this model's domain.
    [[nodiscard]] bool persistent(Level l) const noexcept;
    /// Lines whose newest value is not on media yet.
    [[nodiscard]] std::size_t unsettled_lines() const noexcept { return unsettled_.size(); }
    [[nodiscard]] const ModelConfig& config() const noexcept { return cfg_; }
    [[nodiscard]] const ModelStats& stats() const noexcept { return stats_; }

private:
    using Line = std::uint32_t;
    static constexpr std::uint32_t kNotUnsettled = 0xFFFFFFFFu;

    [[nodiscard]] Level iio_target() const noexcept { return ddio_on_ ? Level::llc : Level::wpq; }
    [[nodiscard]] bool is_pm() const noexcept { return cfg_.domain != PersistenceDomain::not_pmem; }
    void move(Line line, Level to) noexcept;
    void write_bytes(std::uint64_t offset, std::span<const std::byte> data, Level at) noexcept;
    void push_iio() noexcept;
    void flush_caches(std::span<const server::Range> ranges) noexcept;
    void deep_flush() noexcept;
    void write_back(std::span<const server::Range> ranges) noexcept;
    template <class F>
    void for_lines(std::span<const server::Range> ranges, F f) noexcept;
    template <class Pred>
    std::vector<Line> unsettled_where(Pred p) const;

    ModelConfig cfg_;
    bool ddio_on_;
    ModelRng rng_;
    std::vector<std::byte> current_;
    std::vector<std::byte> durable_;
    std::vector<Level> level_;
    // Lines not on media, with each line's index in it: drift picks among
    // them and the pushes scan them, so cost follows activity, not size.
    std::vector<Line> unsettled_;
    std::vector<std::uint32_t> slot_;
    ModelStats stats_;
};

} // namespace rpm::test
