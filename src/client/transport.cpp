// client::Transport's defaults: call() waits for the completion from the I/O
// thread (rdma:// falls back to it for a nested call); register_memory() has
// nothing to register (tcp://).
#include "client/transport.hpp"

#include <future>

namespace rpm::client {

Result<std::shared_ptr<void>> Transport::register_memory(std::span<std::byte>) {
    return std::shared_ptr<void>();
}

std::error_code Transport::call(Start start, std::chrono::milliseconds timeout) {
    auto p = std::make_shared<std::promise<std::error_code>>();
    auto f = p->get_future();
    start([p](std::error_code ec) { p->set_value(ec); });
    if (f.wait_for(timeout) == std::future_status::ready) return f.get();
    close();
    return errc::io_error;
}

std::error_code Transport::read_now(const proto::RegionGrant& g, std::uint64_t offset, std::span<std::byte> out,
                                    std::chrono::milliseconds timeout) {
    return call([&](Done d) { read(g, offset, out, std::move(d)); }, timeout);
}

std::error_code Transport::write_now(const proto::RegionGrant& g, std::uint64_t offset,
                                     std::span<const std::byte> data, std::chrono::milliseconds timeout) {
    return call([&](Done d) { write(g, offset, data, std::move(d)); }, timeout);
}

} // namespace rpm::client
