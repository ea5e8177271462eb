// TcpClient: what to do with each frame the server sends.
#include "transport/tcp/tcp_client.hpp"

namespace rpm::tcp {

namespace {
constexpr std::size_t kMaxInbox = 4096;  // unread server messages before we give up
}

void TcpClient::on_frame(const proto::Header& h, std::span<const std::byte> body) {
    if (state_ == State::awaiting_hello || state_ == State::awaiting_welcome)
        return on_handshake_frame(h, body);
    switch (h.type) {
    case proto::Type::response:
    case proto::Type::region: {
        auto it = pending_.find(h.request_id);
        if (it == pending_.end()) return fail(errc::io_error, "response to an unknown request");
        auto reply = std::move(it->second);
        pending_.erase(it);
        return reply({}, &h, body);
    }
    case proto::Type::message: return on_message(body);
    case proto::Type::goodbye: return fail(errc::io_error, "the server closed the connection");
    default: return fail(errc::io_error, "unexpected frame from the server");
    }
}

void TcpClient::on_handshake_frame(const proto::Header& h, std::span<const std::byte> body) {
    if (state_ == State::awaiting_hello && h.type == proto::Type::hello) {
        auto hello = proto::decode_hello(body);
        if (!hello) return fail(errc::io_error, "bad hello: " + hello.error().message());
        auto auth = client::answer_hello(*hello, opts_, hs_);
        if (!auth) return fail(auth.error().code(), auth.error().detail());
        std::vector<std::byte> frame;
        proto::encode(frame, 0, *auth);
        state_ = State::awaiting_welcome;
        return enqueue(std::move(frame));
    }
    if (state_ == State::awaiting_welcome && h.type == proto::Type::welcome) {
        auto w = proto::decode_welcome(body);
        if (!w) return fail(errc::io_error, "bad welcome: " + w.error().message());
        if (auto ok = client::check_welcome(*w, opts_, hs_); !ok)
            return fail(ok.error().code(), ok.error().detail());
        profile_ = std::move(w->profile_json);
        state_ = State::ready;
        return finish_handshake({});
    }
    if (h.type == proto::Type::response) {
        // The server refused the handshake (version, authentication).
        auto r = proto::decode_response(body);
        if (r && r->status != 0)
            return fail({static_cast<int>(r->status), rpm_category()}, r->message);
    }
    fail(errc::io_error, "unexpected frame during the handshake");
}

void TcpClient::on_message(std::span<const std::byte> body) {
    if (!recv_waiters_.empty()) {
        auto [out, done] = std::move(recv_waiters_.front());
        recv_waiters_.pop_front();
        if (body.size() > out.size()) return done(errc::bad_size, body.size());
        std::copy(body.begin(), body.end(), out.begin());
        return done({}, body.size());
    }
    if (inbox_.size() >= kMaxInbox) return fail(errc::io_error, "too many unread messages from the server");
    inbox_.emplace_back(body.begin(), body.end());
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
