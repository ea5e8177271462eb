// The persistence model's events. Each one is the smallest statement of what
// the hardware guarantees; anything the hardware merely tends to do is left
// to drift(), so a flush method that only works "usually" shows up as lost
// bytes in the crash test.
#include "persistence_model.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace rpm::test {

std::string_view to_string(Level l) noexcept {
    switch (l) {
    case Level::iio: return "iio";
    case Level::llc: return "llc";
    case Level::wpq: return "wpq";
    case Level::media: return "media";
    }
    return "?";
}

PersistenceModel::PersistenceModel(const ModelConfig& cfg)
    : cfg_(cfg), ddio_on_(cfg.ddio != Ddio::off), rng_(cfg.seed) {
    const std::uint64_t lines = (cfg.size + kLine - 1) / kLine;
    cfg_.size = lines * kLine;
    current_.assign(cfg_.size, std::byte{0});
    durable_.assign(cfg_.size, std::byte{0});
    level_.assign(lines, Level::media);
    slot_.assign(lines, kNotUnsettled);
}

bool PersistenceModel::persistent(Level l) const noexcept {
    switch (cfg_.domain) {
    case PersistenceDomain::cpu_cache: return l != Level::iio;  // eADR: IIO buffers are not covered
    case PersistenceDomain::memory_controller: return l == Level::wpq || l == Level::media;
    case PersistenceDomain::none:
    case PersistenceDomain::unknown:
    case PersistenceDomain::not_pmem: return l == Level::media;
    }
    return l == Level::media;
}

// The one place a line changes level: entering the persistence domain is what
// makes the line's newest value its durable value.
void PersistenceModel::move(Line line, Level to) noexcept {
    level_[line] = to;
    if (persistent(to)) {
        const std::size_t at = std::size_t{line} * kLine;
        std::memcpy(durable_.data() + at, current_.data() + at, kLine);
    }
    const bool settled = to == Level::media;
    if (settled && slot_[line] != kNotUnsettled) {
        const Line last = unsettled_.back();
        unsettled_[slot_[line]] = last;
        slot_[last] = slot_[line];
        unsettled_.pop_back();
        slot_[line] = kNotUnsettled;
    } else if (!settled && slot_[line] == kNotUnsettled) {
        slot_[line] = static_cast<std::uint32_t>(unsettled_.size());
        unsettled_.push_back(line);
    }
}

// New bytes for the touched lines, which are then (as a whole) at `at`: a
// line's level describes its newest value, and a line is the unit caches
// and the IIO move.
void PersistenceModel::write_bytes(std::uint64_t offset, std::span<const std::byte> data, Level at) noexcept {
    if (data.empty()) return;
    std::memcpy(current_.data() + offset, data.data(), data.size());
    const Line first = static_cast<Line>(offset / kLine);
    const Line last = static_cast<Line>((offset + data.size() - 1) / kLine);
    for (Line l = first; l <= last; ++l) move(l, at);
}

template <class F>
void PersistenceModel::for_lines(std::span<const server::Range> ranges, F f) noexcept {
    for (const auto& r : ranges) {
        if (r.length == 0) continue;
        const Line first = static_cast<Line>(r.offset / kLine);
        const Line last = static_cast<Line>((r.offset + r.length - 1) / kLine);
        for (Line l = first; l <= last; ++l) f(l);
    }
}

// A snapshot, because move() reorders unsettled_ while we walk it.
template <class Pred>
std::vector<PersistenceModel::Line> PersistenceModel::unsettled_where(Pred p) const {
    std::vector<Line> out;
    for (Line l : unsettled_)
        if (p(level_[l])) out.push_back(l);
    return out;
}

void PersistenceModel::store(std::uint64_t offset, std::span<const std::byte> data) noexcept {
    ++stats_.stores;
    write_bytes(offset, data, Level::llc);
}

void PersistenceModel::load(std::uint64_t offset, std::span<std::byte> out) const noexcept {
    if (!out.empty()) std::memcpy(out.data(), current_.data() + offset, out.size());
}

void PersistenceModel::store8(std::uint64_t offset, std::uint64_t value) noexcept {
    if (offset % kWord != 0) {
        std::fprintf(stderr, "PersistenceModel::store8: misaligned offset %llu\n",
                     static_cast<unsigned long long>(offset));
        std::abort();
    }
    ++stats_.store8s;
    std::byte bytes[kWord];
    std::memcpy(bytes, &value, kWord);  // the host's byte order, as a real 8-byte store
    write_bytes(offset, bytes, Level::llc);
}

void PersistenceModel::nic_write(std::uint64_t offset, std::span<const std::byte> data) noexcept {
    ++stats_.nic_writes;
    write_bytes(offset, data, Level::iio);
}

void PersistenceModel::push_iio() noexcept {
    ++stats_.iio_pushes;
    for (Line l : unsettled_where([](Level v) { return v == Level::iio; })) {
        move(l, iio_target());
        ++stats_.lines_pushed;
    }
}

void PersistenceModel::nic_native_flush(std::uint64_t offset, std::uint64_t length) noexcept {
    ++stats_.native_flushes;
    const server::Range r{offset, length};
    for_lines({&r, 1}, [this](Line l) { move(l, Level::media); });
}

// CLWB / CLFLUSHOPT + SFENCE: the named lines leave the cache (and, as the
// seed notes, the IIO buffers) for the memory controller. For not_pmem that
// is DRAM: nothing persistent.
void PersistenceModel::flush_caches(std::span<const server::Range> ranges) noexcept {
    for_lines(ranges, [this](Line l) {
        if (level_[l] == Level::iio || level_[l] == Level::llc) move(l, Level::wpq);
    });
}

// pmem2_deep_flush drains every write-pending queue of the region, not just
// the named ranges. The page cache has no such control: for not_pmem the
// region's deep_flush does nothing.
void PersistenceModel::deep_flush() noexcept {
    if (!is_pm()) return;
    for (Line l : unsettled_where([](Level v) { return v == Level::wpq; })) move(l, Level::media);
}

// msync on a page-cache file: the named pages, wherever they are, reach disk.
void PersistenceModel::write_back(std::span<const server::Range> ranges) noexcept {
    for_lines(ranges, [this](Line l) { move(l, Level::media); });
}

Result<void> PersistenceModel::persist(flush::ServerPersist step, std::span<const server::Range> ranges) noexcept {
    ++stats_.persists;
    using SP = flush::ServerPersist;
    switch (step) {
    case SP::none:
    case SP::sfence:  // ordering only: nothing moves
        break;
    case SP::cache_flush_sfence:
        flush_caches(ranges);
        break;
    case SP::cache_flush_sfence_deep_flush:
        flush_caches(ranges);
        deep_flush();
        break;
    case SP::msync:
        // On DAX, msync flushes the CPU caches and the WPQ (libpmem2 does
        // exactly that for a PM mapping); on the page cache it writes back.
        if (is_pm()) {
            flush_caches(ranges);
            deep_flush();
        } else {
            write_back(ranges);
        }
        break;
    }
    return {};
}

void PersistenceModel::drift(unsigned events) noexcept {
    for (unsigned i = 0; i < events && !unsettled_.empty(); ++i) {
        const Line l = unsettled_[rng_.below(unsettled_.size())];
        switch (level_[l]) {
        case Level::iio: move(l, iio_target()); break;
        case Level::llc: move(l, Level::wpq); break;
        case Level::wpq: move(l, Level::media); break;
        case Level::media: break;  // not in unsettled_
        }
        ++stats_.drifted_lines;
    }
}

// Lines at a persistent level survive whole. The rest tear per aligned
// 8-byte word: PM guarantees 8-byte power-fail atomicity and nothing larger,
// which is also why a store8 is never torn (it is one word).
std::vector<std::byte> PersistenceModel::crash() {
    ++stats_.crashes;
    std::vector<std::byte> image = durable_;
    for (std::size_t line = 0; line < level_.size(); ++line) {
        const std::size_t at = line * kLine;
        if (persistent(level_[line])) {
            std::memcpy(image.data() + at, current_.data() + at, kLine);
            continue;
        }
        for (std::size_t w = at; w < at + kLine; w += kWord) {
            const bool differs = std::memcmp(current_.data() + w, durable_.data() + w, kWord) != 0;
            if (rng_.coin())
                std::memcpy(image.data() + w, current_.data() + w, kWord);
            else if (differs)
                ++stats_.torn_words;
        }
    }
    current_ = image;
    durable_ = image;
    std::fill(level_.begin(), level_.end(), Level::media);
    std::fill(slot_.begin(), slot_.end(), kNotUnsettled);
    unsettled_.clear();
    return image;
}

void PersistenceModel::preset(std::uint64_t offset, std::span<const std::byte> data) noexcept {
    write_bytes(offset, data, Level::media);
}

} // namespace rpm::test
