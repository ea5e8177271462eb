// TcpClient: connection set-up, the handshake, and closing. The set-up runs
// on a thread that blocks SIGPIPE (TLS I/O may raise it): as a task on the
// connection's own I/O thread (blocking it, by the deadline), or on a helper
// thread when the I/O thread is shared.
#include "transport/tcp/client.hpp"

namespace rpm::tcp {

TcpClient::TcpClient(const ClientOptions& opts, std::uint32_t max_payload)
    : opts_(opts), max_payload_(max_payload), io_(opts.io_group ? opts.io_group : std::make_shared<IoGroup>()),
      loop_(io_->loop()), reader_(max_payload, rbuf_.bytes()) {}

TcpClient::~TcpClient() {
    close();
    // Let go of from a callback, on the group's thread: if this was the
    // group's last user, its thread must be joined by another (after this
    // callback returns), never by itself.
    if (loop_.in_loop()) std::thread([g = std::move(io_)] {}).detach();
}

Result<void> TcpClient::start(const std::string& host, std::uint16_t port) {
    where_ = "tcp://" + (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(port);
    if (loop_.error()) return Error(errc::io_error, "cannot create an event loop: " + loop_.error().message());
    const Deadline deadline = std::chrono::steady_clock::now() + opts_.timeout;
    auto result = std::make_shared<std::promise<Result<void>>>();
    auto ready = result->get_future();
    if (opts_.io_group) {
        // A shared I/O thread must not block in a connect or handshake
        // (up to the timeout) while other connections wait for answers:
        // a helper thread does it, blocking SIGPIPE as the I/O thread does.
        std::thread([this, host, port, deadline, result] {
            block_sigpipe();
            result->set_value(handshake(host, port, deadline));
        }).join();
    } else {
        loop_.post([this, host, port, deadline, result] { result->set_value(handshake(host, port, deadline)); });
    }
    // The set-up itself keeps the deadline; a little slack covers the hand-over.
    if (ready.wait_until(deadline + std::chrono::seconds(1)) != std::future_status::ready) {
        close();
        return Error(errc::io_error, "connecting to " + host + ":" + std::to_string(port) + " timed out");
    }
    auto r = ready.get();
    if (!r) close();
    return r;
}

// One frame, blocking: only during the handshake, before anyone else reads.
Result<std::pair<proto::Header, std::vector<std::byte>>> TcpClient::read_frame_wait(Deadline deadline) {
    for (;;) {
        if (auto f = reader_.next()) return std::pair{f->first, std::vector<std::byte>(f->second.begin(), f->second.end())};
        if (reader_.error()) return Error(errc::io_error, "bad frame from server: " + reader_.error()->message());
        IoResult r = stream_.read_wait(reader_.space(), deadline);
        if (r.status != IoResult::ok)
            return Error(errc::io_error, r.status == IoResult::timed_out ? "the handshake timed out" : "handshake: " + r.why);
        reader_.commit(r.n);
    }
}

Result<void> TcpClient::handshake(const std::string& host, std::uint16_t port, Deadline deadline) {
    auto s = Stream::connect(host, port, deadline);
    if (!s) return s.error();
    std::unique_lock lock(mu_);
    stream_ = std::move(*s);
    if (opts_.tls) {
        auto ctx = TlsContext::client(opts_.tls_ca);
        if (!ctx) return ctx.error();
        if (auto r = stream_.start_tls_client(*ctx, deadline); !r) return r;
    }
    auto hello_frame = read_frame_wait(deadline);
    if (!hello_frame) return hello_frame.error();
    if (hello_frame->first.type != proto::Type::hello) return Error(errc::io_error, "unexpected frame during the handshake");
    auto hello = proto::decode_hello(hello_frame->second);
    if (!hello) return Error(errc::io_error, "bad hello: " + hello.error().message());
    client::HandshakeState hs;
    auto auth = client::answer_hello(*hello, opts_, hs);
    if (!auth) return auth.error();
    std::vector<std::byte> frame;
    proto::encode(frame, 0, *auth);
    const iovec iov{frame.data(), frame.size()};
    if (auto w = stream_.write_all_wait(std::span<const iovec>(&iov, 1), deadline); w.status != IoResult::ok)
        return Error(errc::io_error, "handshake: " + w.why);
    auto reply = read_frame_wait(deadline);
    if (!reply) return reply.error();
    if (reply->first.type == proto::Type::response) {
        // The server refused the handshake (version, authentication).
        auto r = proto::decode_response(reply->second);
        if (r && r->status != 0) return Error({static_cast<int>(r->status), rpm_category()}, r->message);
        return Error(errc::io_error, "unexpected frame during the handshake");
    }
    if (reply->first.type != proto::Type::welcome) return Error(errc::io_error, "unexpected frame during the handshake");
    auto w = proto::decode_welcome(reply->second);
    if (!w) return Error(errc::io_error, "bad welcome: " + w.error().message());
    if (auto ok = client::check_welcome(*w, opts_, hs); !ok) return ok.error();
    profile_ = std::move(w->profile_json);
    state_ = State::ready;
    return {};
}

void TcpClient::close() noexcept {
    Completions done;
    {
        std::lock_guard lock(mu_);
        fail_locked(errc::io_error, "connection closed", done);
    }
    io_->forget(this);  // a driver of the group lets go of it
    if (loop_.error()) {
        run(done);  // no loop thread: nothing else can run them
        return;
    }
    if (loop_.in_loop()) {
        // Events of this batch may still name this connection: the loop
        // skips them (it may be destroyed when this returns).
        loop_.forget(this);
        run(done);
        return;
    }
    // The completions run on the loop; once that task has run, every task
    // posted before it has too, and no event can name this connection any
    // more (fail_locked unwatched it before): it may then be destroyed.
    std::promise<void> finished;
    auto barrier = finished.get_future();
    loop_.post([this, &finished, d = std::make_shared<Completions>(std::move(done))] {
        run(*d);
        io_->wake_driver();  // one may wait for these completions
        finished.set_value();
    });
    barrier.wait();
}

} // namespace rpm::tcp

namespace rpm::client {

Result<std::unique_ptr<Transport>> connect_tcp(const std::string& host, std::uint16_t port,
                                               const ClientOptions& opts) {
    auto t = std::make_unique<tcp::TcpClient>(opts, proto::kDefaultMaxPayload);
    if (auto r = t->start(host, port); !r) return r.error();
    return std::unique_ptr<Transport>(std::move(t));
}

} // namespace rpm::client
