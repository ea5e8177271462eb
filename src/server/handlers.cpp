// The request handlers: validate, then touch the ServedRegion. Shared by the TCP
// listener, the RDMA listener (flush only) and the persistence-model tests.
#include "core/small_buffer.hpp"
#include "protocol/commit_word.hpp"
#include "server/service.hpp"

#include <shared_mutex>
#include <type_traits>

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

// Every handler's prologue: the session's grant of `region`, then, with the
// region's fence held shared, the grant's term checked (check_term,
// fence.hpp); `body(grant, region)` runs under that lock and its result is
// the handler's. The lock lasts from the term check to the end of the
// request's stores: a newer term's open (Service::admit_term) waits for it,
// so nothing of an older term reaches the region once that open is granted.
template <class Body>
std::invoke_result_t<Body&, const Grant&, Region&> granted(const Session& s, std::uint32_t region, Body&& body) {
    auto g = lookup(s, region);
    if (!g) return g.error();
    const Grant& grant = **g;
    Region& r = *grant.region;
    std::shared_lock fence(r.fence.mu);
    if (auto t = check_term(r.report.name, r.fence.term, grant.term); !t) return t.error();
    return body(grant, r);
}

// Room for a request's ranges: most flushes and persists name one or two
// (a record and its commit word), which then live on the stack.
using RangeRoom = SmallBuffer<Range, 8>;

} // namespace

Result<void> Service::handle_write(const Session& s, const proto::Write& w) {
    return granted(s, w.region, [&](const Grant&, Region& r) -> Result<void> {
        if (auto ok = check_range(r, w.offset, w.data.size()); !ok) return ok;
        r.served->store(w.offset, w.data);
        return {};
    });
}

Result<void> Service::handle_read(const Session& s, const proto::Read& rd, std::span<std::byte> out) {
    return granted(s, rd.region, [&](const Grant&, Region& r) -> Result<void> {
        if (auto ok = check_range(r, rd.offset, rd.length); !ok) return ok;
        if (out.size() < rd.length) return Error(errc::bad_size, "read buffer smaller than the request");
        r.served->load(rd.offset, out.first(rd.length));
        return {};
    });
}

Result<std::span<const std::byte>> Service::read_view(const Session& s, const proto::Read& rd) {
    return granted(s, rd.region, [&](const Grant&, Region& r) -> Result<std::span<const std::byte>> {
        if (auto ok = check_range(r, rd.offset, rd.length); !ok) return ok.error();
        const std::byte* base = r.served->base();
        if (base == nullptr) return Error(errc::unsupported, "this region has no memory to view");
        return std::span<const std::byte>(base + rd.offset, rd.length);
    });
}

Result<void> Service::handle_atomic_write(const Session& s, const proto::AtomicWrite& a) {
    return granted(s, a.region, [&](const Grant&, Region& r) -> Result<void> {
        if (a.offset % proto::kCommitWordSize != 0)
            return Error(errc::misaligned, "atomic write at offset " + std::to_string(a.offset) +
                                               " is not 8-byte aligned");
        if (auto ok = check_range(r, a.offset, proto::kCommitWordSize); !ok) return ok;
        r.served->store8(a.offset, a.value);
        return {};
    });
}

Result<void> Service::handle_flush(const Session& s, const proto::Flush& f) {
    return granted(s, f.region, [&](const Grant& g, Region& r) -> Result<void> {
        RangeRoom room(f.ranges.size());
        const std::span<Range> ranges = room.all();
        std::size_t n = 0;
        for (const auto& range : f.ranges) {
            if (auto ok = check_range(r, range.offset, range.length); !ok) return ok;
            if (range.length != 0) ranges[n++] = range;  // an empty range needs no persist
        }
        if (n == 0) return {};
        return r.served->persist(g.step, ranges.first(n));
    });
}

Result<void> Service::handle_persist(const Session& s, const proto::Persist& p) {
    return granted(s, p.region, [&](const Grant& g, Region& r) -> Result<void> {
        for (const auto& slice : p.slices)
            if (auto ok = check_range(r, slice.offset, slice.data.size()); !ok) return ok;
        RangeRoom room(p.slices.size());
        const std::span<Range> ranges = room.all();
        std::size_t n = 0;
        for (const auto& slice : p.slices) {
            // A commit word (protocol/commit_word.hpp) is stored whole, as
            // atomic_write does.
            if (proto::is_commit_word(slice))
                r.served->store8(slice.offset, proto::commit_word_value(slice));
            else
                r.served->store(slice.offset, slice.data);
            if (!slice.data.empty()) ranges[n++] = Range{slice.offset, slice.data.size()};
        }
        if (n == 0) return {};
        return r.served->persist(g.step, ranges.first(n));
    });
}

} // namespace rpm::server
