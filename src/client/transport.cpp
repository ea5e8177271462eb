// client::Transport's default persist, call and register_memory, for transports that have
// no better way (rdma://: the data moves one-sided, the flush follows).
#include "client/transport.hpp"

#include <future>
#include <vector>

namespace rpm::client {

void Transport::persist(const proto::RegionGrant& g, std::span<const proto::Slice> slices, Done done) {
    // The flush is posted right behind the writes on the same ordered
    // connection, so it covers them; the caller hears the first error.
    auto first = std::make_shared<std::error_code>();
    std::vector<proto::Range> ranges;
    ranges.reserve(slices.size());
    for (const auto& s : slices) {
        write(g, s.offset, s.data, [first](std::error_code ec) { if (ec && !*first) *first = ec; });
        ranges.push_back({s.offset, s.data.size()});
    }
    flush(g, ranges, [first, done = std::move(done)](std::error_code ec) { done(*first ? *first : ec); });
}

Result<std::shared_ptr<void>> Transport::register_memory(std::span<std::byte>) {
    return std::shared_ptr<void>();
}

std::error_code Transport::call(const std::function<void(Done)>& start, std::chrono::milliseconds timeout) {
    auto p = std::make_shared<std::promise<std::error_code>>();
    auto f = p->get_future();
    start([p](std::error_code ec) { p->set_value(ec); });
    if (f.wait_for(timeout) == std::future_status::ready) return f.get();
    close();
    return errc::io_error;
}

} // namespace rpm::client
