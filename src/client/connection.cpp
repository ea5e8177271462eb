// Connection and Client::connect: pick the transport from the URI, then
// hand out RemoteRegion handles for the regions the server grants.
#include "client/connection_state.hpp"
#include "core/longest_wait.hpp"
#include "core/uri.hpp"

namespace rpm {

Result<RemoteRegion> Connection::open_region(std::string_view name, const RegionOptions& opts) {
    if (!s_) return Error(errc::invalid_argument, "open_region on a moved-from connection");
    if (name.empty() || name.size() > proto::kMaxName)
        return Error(errc::invalid_argument, "region names are 1 to 255 bytes");
    proto::OpenRegion req{std::string(name), opts.force_method, opts.unsafe, opts.fencing_term};
    auto grant = s_->transport->open_region(req);
    if (!grant) return grant.error();
    const detail::GrantedRegion& g = s_->add(std::string(name), std::move(*grant));
    return RemoteRegion(s_, &g);
}

// A moved-from Connection has no state: its calls fail (or report nothing)
// instead of dereferencing it.
namespace {
Error moved_from(const char* call) { return Error(errc::invalid_argument, std::string(call) + " on a moved-from connection"); }
const std::string& no_profile() {
    static const std::string none;
    return none;
}
} // namespace

Result<void> Connection::send(std::span<const std::byte> payload) {
    if (!s_) return moved_from("send");
    return detail::wait_for(*s_, [&](Callback cb) { send(payload, std::move(cb)); });
}

Result<LocalMemory> Connection::register_memory(std::span<std::byte> mem) {
    if (!s_) return Error(errc::invalid_argument, "register_memory on a moved-from connection");
    if (mem.empty()) return Error(errc::invalid_argument, "register_memory: empty memory");
    auto h = s_->transport->register_memory(mem);
    if (!h) return h.error();
    return LocalMemory(mem, std::move(*h));
}

void Connection::send(std::span<const std::byte> payload, Callback done) {
    if (!s_) return done(moved_from("send"));
    s_->transport->send(payload, std::move(done));
}

std::future<Result<void>> Connection::send_async(std::span<const std::byte> payload) {
    return detail::as_future<void>([&](Callback cb) { send(payload, std::move(cb)); });
}

Result<std::size_t> Connection::recv(std::span<std::byte> out) {
    if (!s_) return moved_from("recv");
    auto f = recv_async(out);
    if (f.wait_for(s_->options.timeout) != std::future_status::ready) {
        s_->transport->close();
        return client::timed_out(s_->transport->scheme(), s_->options.timeout);
    }
    return f.get();
}

void Connection::recv(std::span<std::byte> out, RecvCallback done) {
    if (!s_) return done(moved_from("recv"));
    s_->transport->recv(out, std::move(done));
}

std::future<Result<std::size_t>> Connection::recv_async(std::span<std::byte> out) {
    return detail::as_future<std::size_t>([&](RecvCallback cb) { recv(out, std::move(cb)); });
}

const std::string& Connection::server_profile_json() const noexcept {
    return s_ ? s_->transport->profile_json() : no_profile();
}

// A moved-from Connection has no transport: nullopt, not a made-up scheme.
std::optional<Scheme> Connection::transport() const noexcept {
    if (!s_) return std::nullopt;
    return s_->transport->scheme();
}

AtomicWriteStats Connection::atomic_write_stats() const noexcept {
    return s_ ? s_->transport->atomic_write_stats() : AtomicWriteStats{};
}

void Connection::close() {
    if (s_) s_->transport->close();
}

Connection::Connection(Connection&&) noexcept = default;
Connection& Connection::operator=(Connection&&) noexcept = default;
Connection::~Connection() = default;

Result<Connection> Client::connect(std::string_view uri) const {
    auto u = detail::parse_uri(uri);
    if (!u) return u.error();
    // Refused, not ignored: a caller who asked for TLS must not get a
    // connection that sends its data in the clear.
    if (u->scheme == Scheme::rdma && opts_.tls)
        return Error(errc::unsupported, "ClientOptions::tls with " + std::string(uri) +
                                            ": rdma:// has no TLS; use tcp:// for an encrypted connection");
    ClientOptions o = opts_;
    o.timeout = detail::capped_wait(o.timeout);
    auto t = u->scheme == Scheme::tcp ? client::connect_tcp(u->host, u->port, o)
                                : client::connect_rdma(u->host, u->port, o);
    if (!t) return t.error();
    return Connection(std::make_shared<detail::ConnectionState>(std::move(*t), o));
}

} // namespace rpm
