// TcpSession: one client connection on the server. Malformed bodies get an
// error answer and the session goes on (the framing is intact); a broken
// header or a refused handshake gets an answer and then the connection is
// closed. Either way the region is untouched and other sessions go on.
#include "transport/tcp/tcp_listener.hpp"

namespace rpm::tcp {
namespace {

std::vector<std::byte> response_frame(std::uint32_t id, const Result<void>& r, std::span<const std::byte> data) {
    proto::Response resp;
    if (!r) {
        resp.status = static_cast<std::uint32_t>(r.error().code().value());
        // The detail only: the client rebuilds the full message from the code.
        const auto& e = r.error();
        resp.message = (e.detail().empty() ? e.message() : e.detail()).substr(0, 1024);
    } else {
        resp.data = data;
    }
    std::vector<std::byte> frame;
    proto::encode(frame, id, resp);
    return frame;
}

} // namespace

TcpSession::TcpSession(TcpListener& owner, tcp::socket socket)
    : owner_(owner), stream_(std::move(socket)), reader_(owner.core().options().max_payload),
      session_(owner.core().new_session()) {}

void TcpSession::start() {
    auto* tls = owner_.tls();
    if (!tls) return greet();
    stream_.start_tls(*tls, asio::ssl::stream_base::server,
                      [self = shared_from_this()](const boost::system::error_code& ec) {
                          if (ec) return self->close();
                          self->greet();
                      });
}

void TcpSession::greet() {
    std::vector<std::byte> frame;
    proto::encode(frame, 0, owner_.core().hello_for(session_));
    enqueue(std::move(frame));
    read_more();
}

void TcpSession::read_more() {
    stream_.read_some(rbuf_.bytes(), [self = shared_from_this()](const boost::system::error_code& ec, std::size_t n) {
        // A client that vanishes mid-frame simply ends here: its partial
        // frame was never applied.
        if (ec) return self->close();
        self->reader_.feed(self->rbuf_.bytes().first(n));
        while (!self->closing_ && !self->closed_) {
            auto f = self->reader_.next();
            if (!f) break;
            self->on_frame(f->first, f->second);
        }
        if (self->reader_.error() && !self->closing_) return self->refuse_and_close(0, *self->reader_.error());
        if (!self->closing_ && !self->closed_) self->read_more();
    });
}

void TcpSession::on_frame(const proto::Header& h, std::span<const std::byte> body) {
    if (!session_.authenticated) return on_auth(h, body);
    if (h.type == proto::Type::goodbye) return close();
    on_request(h, body);
}

void TcpSession::on_auth(const proto::Header& h, std::span<const std::byte> body) {
    if (h.type != proto::Type::auth)
        return refuse_and_close(h.request_id, Error(errc::permission_denied, "authenticate first"));
    auto auth = proto::decode_auth(body);
    if (!auth) return refuse_and_close(h.request_id, auth.error());
    auto welcome = owner_.core().authenticate(session_, *auth);
    if (!welcome) return refuse_and_close(h.request_id, welcome.error());
    std::vector<std::byte> frame;
    proto::encode(frame, h.request_id, *welcome);
    enqueue(std::move(frame));
}

void TcpSession::on_request(const proto::Header& h, std::span<const std::byte> body) {
    auto answer = run_request(h, body);
    if (!answer) return respond(h.request_id, answer.error());
    enqueue(std::move(*answer));
}

void TcpSession::respond(std::uint32_t id, const Result<void>& r, std::span<const std::byte> data) {
    enqueue(response_frame(id, r, data));
}

void TcpSession::refuse_and_close(std::uint32_t id, const Error& e) {
    respond(id, e);
    closing_ = true;
    if (!writing_) close();
}

void TcpSession::send_message(std::vector<std::byte> frame) {
    if (session_.authenticated && !closing_) enqueue(std::move(frame));
}

void TcpSession::enqueue(std::vector<std::byte> frame) {
    if (closed_) return;
    outq_.push_back(std::move(frame));
    if (!writing_) write_next();
}

void TcpSession::write_next() {
    auto batch = std::make_shared<std::vector<std::vector<std::byte>>>();
    while (!outq_.empty()) batch->push_back(std::move(outq_.front())), outq_.pop_front();
    std::vector<asio::const_buffer> bufs;
    for (const auto& f : *batch) bufs.emplace_back(f.data(), f.size());
    writing_ = true;
    stream_.write_all(bufs, [self = shared_from_this(), batch](const boost::system::error_code& ec, std::size_t) {
        self->writing_ = false;
        if (ec) return self->close();
        if (!self->outq_.empty()) return self->write_next();
        if (self->closing_) self->close();
    });
}

void TcpSession::close() noexcept {
    if (closed_) return;
    closed_ = true;
    stream_.close();
    owner_.forget(session_.id);
}

} // namespace rpm::tcp
