// ManagerState: allocation from providers, the host fallback, accounting.
#include "p2p/manager_state.hpp"

#include "platform/sysfs.hpp"

#include <unistd.h>

#include <charconv>
#include <limits>
#include <utility>

namespace rpm::p2p::detail {
namespace {

std::size_t page_rounded(std::size_t n) {
    const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    return (n + page - 1) / page * page;
}

std::string slot_key(const Provider& p) {
    return p.bdf + " " + std::string(to_string(p.kind)) + " " + std::to_string(p.bar);
}

// p2pmem/available now (the kernel's figure), or nullopt when unreadable.
std::optional<std::uint64_t> p2pmem_available(const std::filesystem::path& root,
                                              const std::string& bdf) {
    auto text = platform::sysfs::read_text(
        root, std::filesystem::path("sys/bus/pci/devices") / bdf / "p2pmem" / "available");
    if (!text) return std::nullopt;
    std::uint64_t v = 0;
    const auto* end = text->data() + text->size();
    if (std::from_chars(text->data(), end, v).ptr != end) return std::nullopt;
    return v;
}

std::string no_room(const std::string& bdf, std::uint64_t free, std::uint64_t largest,
                    std::size_t size, std::size_t align) {
    std::string s = "provider " + bdf + " has " + format_bytes(free) + " free";
    if (largest < free) s += " (largest extent " + format_bytes(largest) + ")";
    s += ", " + format_bytes(size) + " asked";
    if (largest >= size) s += " aligned to " + format_bytes(align);
    return s;
}

// Why a provider cannot serve at all, before any allocation is tried.
std::optional<std::string> unusable(const Provider& p, const ManagerOptions& opts) {
    if (p.kind != ProviderKind::p2pmem && !opts.map_bars)
        return "provider " + p.bdf + ": mapping BARs is off (ManagerOptions::map_bars)";
    if (p.kind == ProviderKind::nvme_cmb && !(p.write_data && p.read_data))
        return "provider " + p.bdf + "'s CMB does not hold data (CMBSZ " +
               (p.write_data ? "RDS" : "WDS") + " is clear)";
    return std::nullopt;
}

} // namespace

std::string no_provider_reason(const Choice& choice) {
    std::string who;
    for (const auto& c : choice.clients) who += (who.empty() ? "" : ", ") + c;
    std::string s = "no provider suits " + (who.empty() ? std::string("the clients") : who);
    return s + ": " + (choice.explanation.empty() ? "none was found" : choice.explanation);
}

ManagerState::ManagerState(ManagerOptions opts, std::vector<Provider> providers, HostFacts facts,
                         std::vector<std::string> skipped)
    : opts_(std::move(opts)), providers_(std::move(providers)), facts_(std::move(facts)),
      skipped_(std::move(skipped)) {}

Buffer ManagerState::make(std::unique_ptr<Buffer::State> s) {
    s->manager = shared_from_this();
    ++allocations_;
    bytes_allocated_ += s->size;
    return Buffer(std::move(s));
}

Slot& ManagerState::slot_for(const Provider& p, std::string& key) {
    key = slot_key(p);
    auto [it, fresh] = slots_.try_emplace(key);
    if (fresh) it->second.provider = p;
    return it->second;
}

Result<Buffer> ManagerState::allocate(const Choice& choice, std::size_t size, std::size_t align,
                                     bool fallback) {
    if (size == 0) return Error(errc::invalid_argument, "a P2P buffer of 0 bytes");
    // Rounding to pages or 2 MiB must not wrap around.
    if (size > std::numeric_limits<std::size_t>::max() / 2)
        return Error(errc::invalid_argument, "a P2P buffer of " + std::to_string(size) + " bytes");
    if (align == 0 || (align & (align - 1)) != 0 || align > SubAllocator::max_align)
        return Error(errc::invalid_argument, "alignment " + std::to_string(align) +
                                                 " is not a power of two up to 2 MiB");
    std::string why;
    if (choice.provider) {
        auto b = from_provider(*choice.provider, size, align);
        if (b) return b;
        why = b.error().detail();
    } else {
        why = no_provider_reason(choice);
    }
    if (!fallback) return Error(errc::no_p2p_memory, std::move(why));
    return from_host(size, align, std::move(why));
}

Result<Buffer> ManagerState::from_provider(const Provider& p, std::size_t size, std::size_t align) {
    if (auto reason = unusable(p, opts_)) return Error(errc::no_p2p_memory, *reason);
    const std::lock_guard lock(mu_);
    std::string key;
    Slot& slot = slot_for(p, key);
    if (p.kind == ProviderKind::p2pmem) return from_p2pmem(slot, key, size, align);
    return from_bar(slot, key, size, align);
}

Result<Buffer> ManagerState::from_bar(Slot& slot, const std::string& key, std::size_t size,
                                     std::size_t align) {
    const Provider& p = slot.provider;
    if (!slot.bar) {
        auto m = map_bar(opts_.root, p);
        if (!m) return Error(errc::no_p2p_memory, "provider " + p.bdf + " cannot be mapped: " +
                                                      m.error().detail());
        slot.bar = std::move(*m);
        slot.alloc = std::make_unique<SubAllocator>(p.bar_offset, p.size);
    }
    auto off = slot.alloc->allocate(size, align);
    if (!off)
        return Error(errc::no_p2p_memory,
                     no_room(p.bdf, slot.alloc->free_bytes(), slot.alloc->largest_free(), size,
                             align));
    auto s = std::make_unique<Buffer::State>();
    s->data = slot.bar.data() + p.bar_offset + *off;
    s->size = size;
    s->source = Source::bar;
    s->provider = p.bdf;
    s->slot = key;
    s->offset = *off;
    ++slot.live;
    slot.live_bytes += size;
    return make(std::move(s));
}

Result<Buffer> ManagerState::from_p2pmem(Slot& slot, const std::string& key, std::size_t size,
                                        std::size_t align) {
    const Provider& p = slot.provider;
    auto m = map_p2pmem(opts_.root, p, page_rounded(size), align);
    if (!m) {
        const auto avail = p2pmem_available(opts_.root, p.bdf);
        if (avail && *avail < size)
            return Error(errc::no_p2p_memory, no_room(p.bdf, *avail, *avail, size, align));
        return Error(errc::no_p2p_memory, "provider " + p.bdf + ": " + m.error().detail());
    }
    auto s = std::make_unique<Buffer::State>();
    s->data = m->data();
    s->size = size;
    s->source = Source::p2pmem;
    s->provider = p.bdf;
    s->slot = key;
    s->own = std::move(*m);
    ++slot.live;
    slot.live_bytes += size;
    return make(std::move(s));
}

Result<Buffer> ManagerState::from_host(std::size_t size, std::size_t align, std::string why) {
    auto host = map_host(size, align, opts_.hugepages);
    if (!host)
        return Error(errc::io_error, why + "; and host memory cannot be mapped either: " +
                                         host.error().detail());
    if (!host->note.empty()) why += "; host memory without " + host->note;
    auto s = std::make_unique<Buffer::State>();
    s->data = host->mapping.data();
    s->size = size;
    s->source = host->source;
    s->why = std::move(why);
    s->own = std::move(host->mapping);
    const std::lock_guard lock(mu_);
    ++fallbacks_;
    return make(std::move(s));
}

void ManagerState::release(Buffer::State& s) noexcept {
    const std::lock_guard lock(mu_);
    bytes_allocated_ -= s.size;
    const auto it = slots_.find(s.slot);
    if (it == slots_.end()) return;
    Slot& slot = it->second;
    if (s.source == Source::bar && slot.alloc) (void)slot.alloc->free(s.offset);
    --slot.live;
    slot.live_bytes -= s.size;
}

void ManagerState::account(Source source, std::uint64_t bytes) noexcept {
    auto& counter = source == Source::bar || source == Source::p2pmem ? device_bytes_
                                                                      : host_staged_bytes_;
    counter.fetch_add(bytes, std::memory_order_relaxed);
}

Accounting ManagerState::accounting() const {
    Accounting a;
    a.device_bytes = device_bytes_.load(std::memory_order_relaxed);
    a.host_staged_bytes = host_staged_bytes_.load(std::memory_order_relaxed);
    const std::lock_guard lock(mu_);
    a.allocations = allocations_;
    a.fallbacks = fallbacks_;
    a.bytes_allocated = bytes_allocated_;
    return a;
}

ProviderUsage ManagerState::usage_of(const Slot& s) const {
    const Provider& p = s.provider;
    ProviderUsage u{p.bdf, p.kind, p.size, p.size, p.size, 0.0, s.live};
    if (s.alloc) {
        u.free_bytes = s.alloc->free_bytes();
        u.largest_free = s.alloc->largest_free();
        u.fragmentation = s.alloc->fragmentation();
    } else if (p.kind == ProviderKind::p2pmem) {
        // The kernel's pool may serve others too: its figure, not ours.
        u.free_bytes = p2pmem_available(opts_.root, p.bdf).value_or(p.available);
        u.largest_free = u.free_bytes;
    }
    return u;
}

std::vector<ProviderUsage> ManagerState::usage() const {
    const std::lock_guard lock(mu_);
    std::vector<ProviderUsage> out;
    std::vector<bool> listed(slots_.size());
    for (const auto& p : providers_) {
        const auto it = slots_.find(slot_key(p));
        if (it == slots_.end()) {
            out.push_back(usage_of(Slot{p, nullptr, {}, 0, 0}));
            continue;
        }
        listed[std::distance(slots_.begin(), it)] = true;
        out.push_back(usage_of(it->second));
    }
    std::size_t i = 0;
    for (const auto& [key, slot] : slots_)
        if (!listed[i++]) out.push_back(usage_of(slot));
    return out;
}

} // namespace rpm::p2p::detail
