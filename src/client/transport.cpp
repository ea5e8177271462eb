// client::Transport's defaults: call() waits for the completion from the I/O
// thread (rdma:// falls back to it for a nested call); register_memory() has
// nothing to register (tcp://).
#include "client/transport.hpp"

#include <future>

namespace rpm::client {

Result<std::shared_ptr<void>> Transport::register_memory(std::span<std::byte>) {
    return std::shared_ptr<void>();
}

Result<void> Transport::call(Start start, std::chrono::milliseconds timeout) {
    auto p = std::make_shared<std::promise<Result<void>>>();
    auto f = p->get_future();
    start([p](Result<void> r) { p->set_value(std::move(r)); });
    if (f.wait_for(timeout) == std::future_status::ready) return f.get();
    close();
    return timed_out(scheme(), timeout);
}

Error timed_out(Scheme scheme, std::chrono::milliseconds timeout) {
    return Error(errc::io_error, "no answer within the timeout (" + std::to_string(timeout.count()) + " ms): the " +
                                     std::string(to_string(scheme)) + ":// connection was closed");
}

Result<void> Transport::read_now(const proto::RegionGrant& g, std::uint64_t offset, std::span<std::byte> out,
                                 std::chrono::milliseconds timeout) {
    return call([&](Done d) { read(g, offset, out, std::move(d)); }, timeout);
}

Result<void> Transport::write_now(const proto::RegionGrant& g, std::uint64_t offset,
                                  std::span<const std::byte> data, std::chrono::milliseconds timeout) {
    return call([&](Done d) { write(g, offset, data, std::move(d)); }, timeout);
}

} // namespace rpm::client
