// RemoteRegion: range checks on the client (a clear error before anything
// crosses the wire), then the transport. Sync and future forms wrap the
// callback form.
#include "client/connection_state.hpp"
#include "core/small_buffer.hpp"

#include <array>
#include <future>
#include <vector>

namespace rpm {
namespace {

std::error_code out_of_range(const detail::GrantedRegion& g, std::uint64_t offset,
                             std::uint64_t length) {
    const std::uint64_t size = g.grant.size;
    if (offset <= size && length <= size - offset) return {};
    return errc::out_of_range;
}

std::future<std::error_code> as_future(const std::function<void(Callback)>& start) {
    auto p = std::make_shared<std::promise<std::error_code>>();
    auto f = p->get_future();
    start([p](std::error_code ec) { p->set_value(ec); });
    return f;
}

} // namespace

namespace detail {

std::error_code wait_for(ConnectionState& conn, FunctionRef<void(Callback)> start) {
    return conn.transport->call(start, conn.options.timeout);
}

} // namespace detail

const std::string& RemoteRegion::name() const noexcept { return g_->name; }
std::uint64_t RemoteRegion::size() const noexcept { return g_->grant.size; }
flush::Method RemoteRegion::method() const noexcept { return g_->grant.method; }
flush::ServerPersist RemoteRegion::server_persist() const noexcept {
    return g_->grant.server_persist;
}
PersistenceDomain RemoteRegion::domain() const noexcept { return g_->grant.domain; }
const std::string& RemoteRegion::reason() const noexcept { return g_->grant.reason; }

void RemoteRegion::write(std::uint64_t offset, std::span<const std::byte> data, Callback done) {
    const auto& g = *g_;
    if (auto ec = out_of_range(g, offset, data.size())) return done(ec);
    conn_->transport->write(g.grant, offset, data, std::move(done));
}

void RemoteRegion::read(std::uint64_t offset, std::span<std::byte> out, Callback done) {
    const auto& g = *g_;
    if (auto ec = out_of_range(g, offset, out.size())) return done(ec);
    conn_->transport->read(g.grant, offset, out, std::move(done));
}

void RemoteRegion::atomic_write(std::uint64_t offset, std::uint64_t value, Callback done) {
    const auto& g = *g_;
    if (offset % 8 != 0) return done(errc::misaligned);
    if (auto ec = out_of_range(g, offset, 8)) return done(ec);
    conn_->transport->atomic_write(g.grant, offset, value, std::move(done));
}

void RemoteRegion::flush(std::uint64_t offset, std::uint64_t length, Callback done) {
    const auto& g = *g_;
    if (auto ec = out_of_range(g, offset, length)) return done(ec);
    proto::Range r{offset, length};
    conn_->transport->flush(g.grant, std::span<const proto::Range>(&r, 1), std::move(done));
}

void RemoteRegion::persist(std::uint64_t offset, std::span<const std::byte> data, Callback done) {
    const WriteSlice one{offset, data};
    persist(std::span<const WriteSlice>(&one, 1), std::move(done));
}

void RemoteRegion::persist(std::span<const WriteSlice> slices, Callback done) {
    const auto& g = *g_;
    if (slices.empty() || slices.size() > kMaxPersistSlices) return done(errc::invalid_argument);
    // Up to 8 slices on the stack: the common record-and-commit-word persist allocates nothing here.
    SmallBuffer<proto::Slice, 8> room(slices.size());
    const std::span<proto::Slice> wire = room.all();
    for (std::size_t i = 0; i < slices.size(); ++i) {
        if (auto ec = out_of_range(g, slices[i].offset, slices[i].data.size())) return done(ec);
        wire[i] = proto::Slice{slices[i].offset, slices[i].data};
    }
    conn_->transport->persist(g.grant, wire, std::move(done));
}

// The synchronous read and write ask the transport directly (no callback
// to make and run: rdma:// then waits for the operation's own completion).
std::error_code RemoteRegion::write(std::uint64_t offset, std::span<const std::byte> data) {
    const auto& g = *g_;
    if (auto ec = out_of_range(g, offset, data.size())) return ec;
    return conn_->transport->write_now(g.grant, offset, data, conn_->options.timeout);
}
std::error_code RemoteRegion::read(std::uint64_t offset, std::span<std::byte> out) {
    const auto& g = *g_;
    if (auto ec = out_of_range(g, offset, out.size())) return ec;
    return conn_->transport->read_now(g.grant, offset, out, conn_->options.timeout);
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
std::error_code RemoteRegion::persist(std::span<const WriteSlice> slices) {
    return detail::wait_for(*conn_, [&](Callback cb) { persist(slices, std::move(cb)); });
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
std::future<std::error_code> RemoteRegion::persist_async(std::span<const WriteSlice> slices) {
    return as_future([&](Callback cb) { persist(slices, std::move(cb)); });
}

} // namespace rpm
