// RemoteRegion: range checks on the client (a clear error before anything
// crosses the wire), then the transport. Sync and future forms wrap the
// callback form.
#include "client/connection_state.hpp"

#include <future>

namespace rpm {
namespace {

std::error_code out_of_range(const detail::ConnectionState::Granted& g, std::uint64_t offset,
                             std::uint64_t length) {
    const std::uint64_t size = g.grant.size;
    if (offset <= size && length <= size - offset) return {};
    return errc::invalid_argument;
}

std::future<std::error_code> as_future(const std::function<void(Callback)>& start) {
    auto p = std::make_shared<std::promise<std::error_code>>();
    auto f = p->get_future();
    start([p](std::error_code ec) { p->set_value(ec); });
    return f;
}

} // namespace

namespace detail {

std::error_code wait_for(ConnectionState& conn, const std::function<void(Callback)>& start) {
    auto f = as_future(start);
    if (f.wait_for(conn.options.timeout) == std::future_status::ready) return f.get();
    conn.transport->close();
    return errc::io_error;
}

} // namespace detail

const std::string& RemoteRegion::name() const noexcept { return conn_->region(index_).name; }
std::uint64_t RemoteRegion::size() const noexcept { return conn_->region(index_).grant.size; }
flush::Method RemoteRegion::method() const noexcept { return conn_->region(index_).grant.method; }
flush::ServerPersist RemoteRegion::server_persist() const noexcept {
    return conn_->region(index_).grant.server_persist;
}
PersistenceDomain RemoteRegion::domain() const noexcept { return conn_->region(index_).grant.domain; }
const std::string& RemoteRegion::reason() const noexcept { return conn_->region(index_).grant.reason; }

void RemoteRegion::write(std::uint64_t offset, std::span<const std::byte> data, Callback done) {
    const auto& g = conn_->region(index_);
    if (auto ec = out_of_range(g, offset, data.size())) return done(ec);
    conn_->transport->write(g.grant, offset, data, std::move(done));
}

void RemoteRegion::read(std::uint64_t offset, std::span<std::byte> out, Callback done) {
    const auto& g = conn_->region(index_);
    if (auto ec = out_of_range(g, offset, out.size())) return done(ec);
    conn_->transport->read(g.grant, offset, out, std::move(done));
}

void RemoteRegion::atomic_write(std::uint64_t offset, std::uint64_t value, Callback done) {
    const auto& g = conn_->region(index_);
    if (offset % 8 != 0) return done(errc::invalid_argument);
    if (auto ec = out_of_range(g, offset, 8)) return done(ec);
    conn_->transport->atomic_write(g.grant, offset, value, std::move(done));
}

void RemoteRegion::flush(std::uint64_t offset, std::uint64_t length, Callback done) {
    const auto& g = conn_->region(index_);
    if (auto ec = out_of_range(g, offset, length)) return done(ec);
    proto::Range r{offset, length};
    conn_->transport->flush(g.grant, std::span<const proto::Range>(&r, 1), std::move(done));
}

void RemoteRegion::persist(std::uint64_t offset, std::span<const std::byte> data, Callback done) {
    // The flush is posted right behind the write on the same ordered
    // connection, so it covers it; the caller hears the first error.
    auto first = std::make_shared<std::error_code>();
    write(offset, data, [first](std::error_code ec) { if (ec && !*first) *first = ec; });
    flush(offset, data.size(), [first, done = std::move(done)](std::error_code ec) {
        done(*first ? *first : ec);
    });
}

std::error_code RemoteRegion::write(std::uint64_t offset, std::span<const std::byte> data) {
    return detail::wait_for(*conn_, [&](Callback cb) { write(offset, data, std::move(cb)); });
}
std::error_code RemoteRegion::read(std::uint64_t offset, std::span<std::byte> out) {
    return detail::wait_for(*conn_, [&](Callback cb) { read(offset, out, std::move(cb)); });
}
std::error_code RemoteRegion::atomic_write(std::uint64_t offset, std::uint64_t value) {
    return detail::wait_for(*conn_, [&](Callback cb) { atomic_write(offset, value, std::move(cb)); });
}
std::error_code RemoteRegion::flush(std::uint64_t offset, std::uint64_t length) {
    return detail::wait_for(*conn_, [&](Callback cb) { flush(offset, length, std::move(cb)); });
}
std::error_code RemoteRegion::persist(std::uint64_t offset, std::span<const std::byte> data) {
    return detail::wait_for(*conn_, [&](Callback cb) { persist(offset, data, std::move(cb)); });
}

std::future<std::error_code> RemoteRegion::write_async(std::uint64_t offset, std::span<const std::byte> data) {
    return as_future([&](Callback cb) { write(offset, data, std::move(cb)); });
}
std::future<std::error_code> RemoteRegion::flush_async(std::uint64_t offset, std::uint64_t length) {
    return as_future([&](Callback cb) { flush(offset, length, std::move(cb)); });
}
std::future<std::error_code> RemoteRegion::persist_async(std::uint64_t offset, std::span<const std::byte> data) {
    return as_future([&](Callback cb) { persist(offset, data, std::move(cb)); });
}

} // namespace rpm
