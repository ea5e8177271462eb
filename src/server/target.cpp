// The real Target: CPU stores into the mapping, and the persist steps of
// docs/flush-methods.md through libpmem2's own functions.
#include "server/target.hpp"

#include "server/peer_memory.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

namespace rpm::server {
namespace {

// msync needs page-aligned starts; widen the range down to its page.
Result<void> msync_range(std::byte* base, const Range& r) {
    const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    auto start = reinterpret_cast<std::uintptr_t>(base + r.offset);
    auto aligned = start & ~(page - 1);
    if (::msync(reinterpret_cast<void*>(aligned), r.length + (start - aligned), MS_SYNC) != 0)
        return Error(errc::io_error, "msync of " + std::to_string(r.length) + " bytes at offset " +
                                         std::to_string(r.offset) + ": " + std::strerror(errno));
    return {};
}

} // namespace

void load_words(std::span<std::byte> out, const std::byte* src) noexcept {
    PeerMemoryAccess shared;
    std::size_t i = 0;
    const std::size_t n = out.size();
    const auto byte_at = [&](std::size_t k) {
        auto* p = reinterpret_cast<unsigned char*>(const_cast<std::byte*>(src + k));
        out[k] = static_cast<std::byte>(__atomic_load_n(p, __ATOMIC_RELAXED));
    };
    // Up to the first 8-byte boundary of the source, a byte at a time.
    for (; i < n && reinterpret_cast<std::uintptr_t>(src + i) % 8 != 0; ++i) byte_at(i);
    for (; i + 8 <= n; i += 8) {
        auto* w = reinterpret_cast<std::uint64_t*>(const_cast<std::byte*>(src + i));
        const std::uint64_t v = __atomic_load_n(w, __ATOMIC_RELAXED);
        std::memcpy(out.data() + i, &v, 8);  // the destination need not be aligned
    }
    for (; i < n; ++i) byte_at(i);
}

void PmemTarget::store(std::uint64_t offset, std::span<const std::byte> data) noexcept {
    PeerMemoryAccess shared;
    std::memcpy(region_.bytes().data() + offset, data.data(), data.size());
}

void PmemTarget::load(std::uint64_t offset, std::span<std::byte> out) const noexcept {
    load_words(out, region_.bytes().data() + offset);
}

void PmemTarget::store8(std::uint64_t offset, std::uint64_t value) noexcept {
    // One aligned 8-byte store is single-copy atomic on x86-64: a crash
    // leaves either the old or the new commit record, never a mix.
    auto* word = reinterpret_cast<std::uint64_t*>(region_.bytes().data() + offset);
    PeerMemoryAccess shared;
    std::atomic_ref<std::uint64_t>(*word).store(value, std::memory_order_release);
}

Result<void> PmemTarget::persist(flush::ServerPersist step, std::span<const Range> ranges) noexcept {
    using SP = flush::ServerPersist;
    std::byte* base = region_.bytes().data();
    switch (step) {
    case SP::none: return {};
    case SP::sfence: region_.drain(); return {};
    case SP::cache_flush_sfence:
    case SP::cache_flush_sfence_deep_flush:
        for (const auto& r : ranges) region_.flush(base + r.offset, r.length);
        region_.drain();
        if (step == SP::cache_flush_sfence) return {};
        for (const auto& r : ranges)
            if (auto res = region_.deep_flush(base + r.offset, r.length); !res) return res;
        return {};
    case SP::msync:
        for (const auto& r : ranges)
            if (auto res = msync_range(base, r); !res) return res;
        return {};
    }
    return Error(errc::invalid_argument, "unknown persist step");
}

} // namespace rpm::server
