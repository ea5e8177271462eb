// TcpClient: what to do with each frame the server sends, and failure.
#include "transport/tcp/client.hpp"

#include <cstring>

namespace rpm::tcp {

namespace {
constexpr std::size_t kMaxInbox = 4096;  // unread server messages before we give up

std::error_code status_code(std::uint32_t status) { return {static_cast<int>(status), rpm_category()}; }
} // namespace

void TcpClient::on_frame_locked(const proto::Header& h, std::span<const std::byte> body, Completions& out) {
    switch (h.type) {
    case proto::Type::response:
    case proto::Type::region: return on_answer_locked(h, body, out);
    case proto::Type::message: return on_message_locked(body, out);
    case proto::Type::goodbye: return on_goodbye_locked(body, out);
    default: return fail_locked(errc::io_error, "unexpected frame from the server", out);
    }
}

// A goodbye with a reason (errc::fenced: a newer primary term took a region
// over) fails every request with that reason, now and later.
void TcpClient::on_goodbye_locked(std::span<const std::byte> body, Completions& out) {
    auto g = proto::decode_goodbye(body);
    if (!g || g->status == 0) return fail_locked(errc::io_error, "the server closed the connection", out);
    fail_locked(status_code(g->status), "the server closed the connection: " + g->message, out);
}

// The server answers in order: the answer is the oldest request's.
void TcpClient::on_answer_locked(const proto::Header& h, std::span<const std::byte> body, Completions& out) {
    if (pending_.empty() || pending_.front().id != h.request_id)
        return fail_locked(errc::io_error, "response to an unknown request", out);
    Pending p = std::move(pending_.front());
    pending_.pop_front();
    if (p.kind == Kind::region) {
        Completion c;
        c.region_done = std::move(p.region_done);
        if (h.type == proto::Type::region) {
            c.grant = proto::decode_region(body);
        } else if (auto r = proto::decode_response(body)) {
            c.grant = Result<proto::RegionGrant>(Error(status_code(r->status), r->message));
        } else {
            c.grant = Result<proto::RegionGrant>(r.error());
        }
        out.push_back(std::move(c));
        return;
    }
    const auto bad = [&](const char* what) { return client::operation_error(errc::io_error, p.op, where_, what); };
    if (h.type != proto::Type::response) return complete_locked(p, bad("the server answered with another frame type"), out);
    const auto r = proto::response_view(body);
    if (!r) return complete_locked(p, bad("a malformed answer from the server"), out);
    if (r->status != 0) {
        // Only a failure pays for the server's text.
        const auto full = proto::decode_response(body);
        return complete_locked(p, client::refused_by_server(status_code(r->status), p.op, where_, full ? full->message : ""),
                               out);
    }
    if (p.kind == Kind::read) {
        if (r->data.size() != p.out.size()) return complete_locked(p, bad("the server answered with another length"), out);
        std::memcpy(p.out.data(), r->data.data(), r->data.size());
    }
    complete_locked(p, {}, out);
}

void TcpClient::on_message_locked(std::span<const std::byte> body, Completions& out) {
    if (!recv_waiters_.empty()) {
        auto [buf, done] = std::move(recv_waiters_.front());
        recv_waiters_.pop_front();
        Completion c;
        c.recv_done = std::move(done);
        c.n = body.size();
        if (body.size() > buf.size())
            c.err = client::message_dropped(where_, body.size(), buf.size());
        else std::memcpy(buf.data(), body.data(), body.size());
        out.push_back(std::move(c));
        return;
    }
    if (inbox_.size() >= kMaxInbox) return fail_locked(errc::io_error, "too many unread messages from the server", out);
    inbox_.emplace_back(body.begin(), body.end());
}

// A driver's own request completes at once, on its thread (it holds mu_
// and only sets its result); every other completion is handed to `out`.
void TcpClient::complete_locked(Pending& p, Error err, Completions& out) {
    if (p.direct) return p.done(client::status(std::move(err)));
    Completion c;
    if (p.kind == Kind::region) {
        c.region_done = std::move(p.region_done);
        c.grant = Result<proto::RegionGrant>(std::move(err));
    } else {
        c.done = std::move(p.done);
        c.err = std::move(err);
    }
    out.push_back(std::move(c));
}

Error TcpClient::failed_locked(const char* op) const {
    if (state_ == State::closed)
        return client::connection_failed(failure_ec_, op, where_, failure_);
    return client::operation_error(errc::io_error, op, where_, "the connection is not ready");
}

void TcpClient::fail_locked(std::error_code ec, const std::string& why, Completions& out) {
    if (state_ == State::closed) return;
    state_ = State::closed;
    failure_ = why;
    failure_ec_ = ec;
    if (watched_) loop_.unwatch(stream_.fd());
    watched_ = false;
    stream_.shutdown();  // wakes a driver blocked in recv
    outq_.clear();
    auto pending = std::move(pending_);
    pending_.clear();
    for (auto& p : pending) {
        const char* op = p.op;
        complete_locked(p, failed_locked(op), out);
    }
    auto waiters = std::move(recv_waiters_);
    recv_waiters_.clear();
    for (auto& [buf, done] : waiters) {
        Completion c;
        c.recv_done = std::move(done);
        c.err = failed_locked("recv");
        out.push_back(std::move(c));
    }
}

} // namespace rpm::tcp
