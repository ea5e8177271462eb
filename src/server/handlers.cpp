// The request handlers: validate, then touch the Target. Shared by the TCP
// listener, the RDMA listener (flush only) and the persistence-model tests.
#include "server/core.hpp"

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

} // namespace

Result<void> Core::handle_write(const Session& s, const proto::Write& w) {
    auto g = lookup(s, w.region);
    if (!g) return g.error();
    if (auto r = check_range(*(*g)->region, w.offset, w.data.size()); !r) return r;
    (*g)->region->target->store(w.offset, w.data);
    return {};
}

Result<void> Core::handle_read(const Session& s, const proto::Read& rd, std::span<std::byte> out) {
    auto g = lookup(s, rd.region);
    if (!g) return g.error();
    if (auto r = check_range(*(*g)->region, rd.offset, rd.length); !r) return r;
    if (out.size() < rd.length) return Error(errc::bad_size, "read buffer smaller than the request");
    (*g)->region->target->load(rd.offset, out.first(rd.length));
    return {};
}

Result<void> Core::handle_atomic_write(const Session& s, const proto::AtomicWrite& a) {
    auto g = lookup(s, a.region);
    if (!g) return g.error();
    if (a.offset % 8 != 0)
        return Error(errc::invalid_argument, "atomic write at offset " + std::to_string(a.offset) +
                                                 " is not 8-byte aligned");
    if (auto r = check_range(*(*g)->region, a.offset, 8); !r) return r;
    (*g)->region->target->store8(a.offset, a.value);
    return {};
}

Result<void> Core::handle_flush(const Session& s, const proto::Flush& f) {
    auto g = lookup(s, f.region);
    if (!g) return g.error();
    std::vector<Range> ranges;
    ranges.reserve(f.ranges.size());
    for (const auto& r : f.ranges) {
        if (auto ok = check_range(*(*g)->region, r.offset, r.length); !ok) return ok;
        if (r.length != 0) ranges.push_back(r);  // an empty range needs no persist
    }
    if (ranges.empty()) return {};
    return (*g)->region->target->persist((*g)->step, ranges);
}

} // namespace rpm::server
