// The request handlers: validate, then touch the ServedRegion. Shared by the TCP
// listener, the RDMA listener (flush only) and the persistence-model tests.
#include "core/small_buffer.hpp"
#include "server/service.hpp"

#include <cstring>
#include <shared_mutex>

namespace rpm::server {
namespace {

Result<const Grant*> lookup(const Session& s, std::uint32_t region) {
    if (!s.authenticated) return Error(errc::permission_denied, "request before authentication");
    const Grant* g = s.grant(region);
    if (g == nullptr)
        return Error(errc::invalid_argument, "region id " + std::to_string(region) +
                                                 " was not granted on this connection");
    return g;
}

// Held from the grant's term check to the end of the request's stores: a
// newer term's open (Service::admit_term) waits for it, so nothing of an older
// term reaches the region once that open is granted.
using FenceLock = std::shared_lock<std::shared_mutex>;

Result<void> check_term(const Grant& g) {
    if (g.term >= g.region->fence.term) return {};
    return Error(errc::fenced, fenced_detail(g.region->report.name, g.region->fence.term, g.term));
}

// Room for a request's ranges: most flushes and persists name one or two
// (a record and its commit word), which then live on the stack.
using RangeRoom = SmallBuffer<Range, 8>;

} // namespace

Result<void> Service::handle_write(const Session& s, const proto::Write& w) {
    auto g = lookup(s, w.region);
    if (!g) return g.error();
    FenceLock fence((*g)->region->fence.mu);
    if (auto t = check_term(**g); !t) return t.error();
    if (auto r = check_range(*(*g)->region, w.offset, w.data.size()); !r) return r;
    (*g)->region->target->store(w.offset, w.data);
    return {};
}

Result<void> Service::handle_read(const Session& s, const proto::Read& rd, std::span<std::byte> out) {
    auto g = lookup(s, rd.region);
    if (!g) return g.error();
    FenceLock fence((*g)->region->fence.mu);
    if (auto t = check_term(**g); !t) return t.error();
    if (auto r = check_range(*(*g)->region, rd.offset, rd.length); !r) return r;
    if (out.size() < rd.length) return Error(errc::bad_size, "read buffer smaller than the request");
    (*g)->region->target->load(rd.offset, out.first(rd.length));
    return {};
}

Result<std::span<const std::byte>> Service::read_view(const Session& s, const proto::Read& rd) {
    auto g = lookup(s, rd.region);
    if (!g) return g.error();
    FenceLock fence((*g)->region->fence.mu);
    if (auto t = check_term(**g); !t) return t.error();
    if (auto r = check_range(*(*g)->region, rd.offset, rd.length); !r) return r.error();
    const std::byte* base = (*g)->region->target->base();
    if (base == nullptr) return Error(errc::unsupported, "this region has no memory to view");
    return std::span<const std::byte>(base + rd.offset, rd.length);
}

Result<void> Service::handle_atomic_write(const Session& s, const proto::AtomicWrite& a) {
    auto g = lookup(s, a.region);
    if (!g) return g.error();
    FenceLock fence((*g)->region->fence.mu);
    if (auto t = check_term(**g); !t) return t.error();
    if (a.offset % 8 != 0)
        return Error(errc::misaligned, "atomic write at offset " + std::to_string(a.offset) +
                                                 " is not 8-byte aligned");
    if (auto r = check_range(*(*g)->region, a.offset, 8); !r) return r;
    (*g)->region->target->store8(a.offset, a.value);
    return {};
}

Result<void> Service::handle_flush(const Session& s, const proto::Flush& f) {
    auto g = lookup(s, f.region);
    if (!g) return g.error();
    FenceLock fence((*g)->region->fence.mu);
    if (auto t = check_term(**g); !t) return t.error();
    RangeRoom room(f.ranges.size());
    const std::span<Range> ranges = room.all();
    std::size_t n = 0;
    for (const auto& r : f.ranges) {
        if (auto ok = check_range(*(*g)->region, r.offset, r.length); !ok) return ok;
        if (r.length != 0) ranges[n++] = r;  // an empty range needs no persist
    }
    if (n == 0) return {};
    return (*g)->region->target->persist((*g)->step, ranges.first(n));
}

Result<void> Service::handle_persist(const Session& s, const proto::Persist& p) {
    auto g = lookup(s, p.region);
    if (!g) return g.error();
    FenceLock fence((*g)->region->fence.mu);
    if (auto t = check_term(**g); !t) return t.error();
    Region& region = *(*g)->region;
    for (const auto& slice : p.slices)
        if (auto ok = check_range(region, slice.offset, slice.data.size()); !ok) return ok;
    RangeRoom room(p.slices.size());
    const std::span<Range> ranges = room.all();
    std::size_t n = 0;
    for (const auto& slice : p.slices) {
        // An aligned 8-byte slice is a commit word (a log record's, sent
        // with its body): stored whole, as atomic_write does.
        if (slice.data.size() == 8 && slice.offset % 8 == 0) {
            std::uint64_t word;
            std::memcpy(&word, slice.data.data(), 8);
            region.target->store8(slice.offset, word);
        } else {
            region.target->store(slice.offset, slice.data);
        }
        if (!slice.data.empty()) ranges[n++] = Range{slice.offset, slice.data.size()};
    }
    if (n == 0) return {};
    return region.target->persist((*g)->step, ranges.first(n));
}

} // namespace rpm::server
