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

Error operation_error(std::error_code ec, std::string_view op, std::string_view where, std::string_view what) {
    std::string detail(op);
    detail.append(" over ").append(where);
    if (!what.empty()) detail.append(": ").append(what);
    return Error(ec, std::move(detail));
}

Error connection_failed(std::error_code ec, std::string_view op, std::string_view where, std::string_view why) {
    const std::string prefix = std::string(where) + ": ";
    if (why.starts_with(prefix)) why.remove_prefix(prefix.size());
    return operation_error(ec, op, where, "the connection failed: " + std::string(why));
}

Error refused_by_server(std::error_code ec, std::string_view op, std::string_view where, std::string_view message) {
    std::string what = "refused by the server";
    if (!message.empty()) what.append(": ").append(message);
    return operation_error(ec, op, where, what);
}

Error message_dropped(std::string_view where, std::size_t size, std::size_t room) {
    std::string what = "a message of " + std::to_string(size) + " bytes";
    what += room > 0 ? " into " + std::to_string(room) : std::string(", larger than the buffer");
    return operation_error(errc::bad_size, "recv", where, what + ": dropped");
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
