// RemoteRegion: range checks on the client (a clear error before anything
// crosses the wire), then the transport. Sync and future forms wrap the
// callback form. A refusal here names the call, the region and the range.
#include "client/connection_state.hpp"
#include "core/small_buffer.hpp"

#include <array>
#include <future>
#include <vector>

namespace rpm {
namespace {

std::string range_text(std::uint64_t offset, std::uint64_t length) {
    return "[" + std::to_string(offset) + ", +" + std::to_string(length) + ")";
}

/// Success when [offset, offset + length) lies in the region; else
/// errc::out_of_range naming the call, the region and both ranges.
Result<void> in_range(const detail::GrantedRegion& g, const char* call, std::uint64_t offset,
                      std::uint64_t length) {
    const std::uint64_t size = g.grant.size;
    if (offset <= size && length <= size - offset) return {};
    return Error(errc::out_of_range, std::string(call) + " " + range_text(offset, length) + " on region '" + g.name +
                                         "' of " + std::to_string(size) + " bytes");
}

} // namespace

namespace detail {

Result<void> wait_for(ConnectionState& conn, FunctionRef<void(Callback)> start) {
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
    if (auto r = in_range(g, "write", offset, data.size()); !r) return done(std::move(r));
    conn_->transport->write(g.grant, offset, data, std::move(done));
}

void RemoteRegion::read(std::uint64_t offset, std::span<std::byte> out, Callback done) {
    const auto& g = *g_;
    if (auto r = in_range(g, "read", offset, out.size()); !r) return done(std::move(r));
    conn_->transport->read(g.grant, offset, out, std::move(done));
}

void RemoteRegion::atomic_write(std::uint64_t offset, std::uint64_t value, Callback done) {
    const auto& g = *g_;
    if (offset % 8 != 0)
        return done(Error(errc::misaligned, "atomic_write at offset " + std::to_string(offset) + " on region '" +
                                                g.name + "': not a multiple of 8"));
    if (auto r = in_range(g, "atomic_write", offset, 8); !r) return done(std::move(r));
    conn_->transport->atomic_write(g.grant, offset, value, std::move(done));
}

void RemoteRegion::flush(std::uint64_t offset, std::uint64_t length, Callback done) {
    const auto& g = *g_;
    if (auto ok = in_range(g, "flush", offset, length); !ok) return done(std::move(ok));
    proto::Range r{offset, length};
    conn_->transport->flush(g.grant, std::span<const proto::Range>(&r, 1), std::move(done));
}

void RemoteRegion::persist(std::uint64_t offset, std::span<const std::byte> data, Callback done) {
    const WriteSlice one{offset, data};
    persist(std::span<const WriteSlice>(&one, 1), std::move(done));
}

void RemoteRegion::persist(std::span<const WriteSlice> slices, Callback done) {
    const auto& g = *g_;
    if (slices.empty() || slices.size() > kMaxPersistSlices)
        return done(Error(errc::invalid_argument, "persist of " + std::to_string(slices.size()) + " slices on region '" +
                                                      g.name + "': 1 to " + std::to_string(kMaxPersistSlices) + " slices"));
    // Up to 8 slices on the stack: the common record-and-commit-word persist allocates nothing here.
    SmallBuffer<proto::Slice, 8> room(slices.size());
    const std::span<proto::Slice> wire = room.all();
    for (std::size_t i = 0; i < slices.size(); ++i) {
        if (auto r = in_range(g, "persist", slices[i].offset, slices[i].data.size()); !r) return done(std::move(r));
        wire[i] = proto::Slice{slices[i].offset, slices[i].data};
    }
    conn_->transport->persist(g.grant, wire, std::move(done));
}

// The synchronous read and write ask the transport directly (no callback
// to make and run: rdma:// then waits for the operation's own completion).
Result<void> RemoteRegion::write(std::uint64_t offset, std::span<const std::byte> data) {
    const auto& g = *g_;
    if (auto r = in_range(g, "write", offset, data.size()); !r) return r;
    return conn_->transport->write_now(g.grant, offset, data, conn_->options.timeout);
}
Result<void> RemoteRegion::read(std::uint64_t offset, std::span<std::byte> out) {
    const auto& g = *g_;
    if (auto r = in_range(g, "read", offset, out.size()); !r) return r;
    return conn_->transport->read_now(g.grant, offset, out, conn_->options.timeout);
}
Result<void> RemoteRegion::atomic_write(std::uint64_t offset, std::uint64_t value) {
    return detail::wait_for(*conn_, [&](Callback cb) { atomic_write(offset, value, std::move(cb)); });
}
Result<void> RemoteRegion::flush(std::uint64_t offset, std::uint64_t length) {
    return detail::wait_for(*conn_, [&](Callback cb) { flush(offset, length, std::move(cb)); });
}
Result<void> RemoteRegion::persist(std::uint64_t offset, std::span<const std::byte> data) {
    return detail::wait_for(*conn_, [&](Callback cb) { persist(offset, data, std::move(cb)); });
}
Result<void> RemoteRegion::persist(std::span<const WriteSlice> slices) {
    return detail::wait_for(*conn_, [&](Callback cb) { persist(slices, std::move(cb)); });
}

std::future<Result<void>> RemoteRegion::write_async(std::uint64_t offset, std::span<const std::byte> data) {
    return detail::as_future<void>([&](Callback cb) { write(offset, data, std::move(cb)); });
}
std::future<Result<void>> RemoteRegion::read_async(std::uint64_t offset, std::span<std::byte> out) {
    return detail::as_future<void>([&](Callback cb) { read(offset, out, std::move(cb)); });
}
std::future<Result<void>> RemoteRegion::atomic_write_async(std::uint64_t offset, std::uint64_t value) {
    return detail::as_future<void>([&](Callback cb) { atomic_write(offset, value, std::move(cb)); });
}
std::future<Result<void>> RemoteRegion::flush_async(std::uint64_t offset, std::uint64_t length) {
    return detail::as_future<void>([&](Callback cb) { flush(offset, length, std::move(cb)); });
}
std::future<Result<void>> RemoteRegion::persist_async(std::uint64_t offset, std::span<const std::byte> data) {
    return detail::as_future<void>([&](Callback cb) { persist(offset, data, std::move(cb)); });
}
std::future<Result<void>> RemoteRegion::persist_async(std::span<const WriteSlice> slices) {
    return detail::as_future<void>([&](Callback cb) { persist(slices, std::move(cb)); });
}

} // namespace rpm
