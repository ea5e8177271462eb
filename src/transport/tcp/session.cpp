// TcpSession: one client connection on the server. Malformed bodies get an
// error answer and the session goes on (the framing is intact); a broken
// header or a refused handshake gets an answer and then the connection is
// closed. Either way the region is untouched and other sessions go on.
#include "transport/tcp/listener.hpp"

#include "server/peer_memory.hpp"

#include <algorithm>
#include <optional>

namespace rpm::tcp {
namespace {

// Reads per readiness event: bounded so one busy session cannot starve the
// others on its loop.
constexpr int kSessionReadsPerEvent = 16;

} // namespace

TcpSession::TcpSession(TcpListener& owner, EventLoop& loop, Stream stream, std::string peer)
    : owner_(owner), loop_(loop), stream_(std::move(stream)),
      reader_(std::min(proto::kMaxHandshakePayload, owner.service().options().max_payload), rbuf_.bytes()),
      session_(owner.service().new_session()), peer_(std::move(peer)) {}

void TcpSession::start() {
    const TlsContext* tls = owner_.tls();
    if (!tls) return greet();
    if (auto r = stream_.start_tls_server(*tls); !r) return close();
    tls_pending_ = true;
    step_tls();
}

void TcpSession::step_tls() {
    IoResult r = stream_.accept_tls_step();
    if (r.status == IoResult::ok) {
        tls_pending_ = false;
        return greet();
    }
    if (r.status != IoResult::would_block) return close();
    update_watch();
}

void TcpSession::greet() {
    proto::encode(outq_.arena(), 0, owner_.service().hello_for(session_));
    outq_.commit();
    flush();
    update_watch();
}

void TcpSession::on_events(std::uint32_t events) {
    if (closed_) return;
    if (tls_pending_) return step_tls();
    const bool tls_read_wants_write = stream_.is_tls() && stream_.wants_write();
    if (events & EPOLLOUT) {
        flush();
        // A read answer that held the requests behind it has left.
        if (!too_far_ahead() && reader_.buffered() > 0) process_frames();
    }
    // A TLS read that had to write first waits for EPOLLOUT, not EPOLLIN.
    if (!closed_ && !closing_ && ((events & (EPOLLIN | EPOLLHUP | EPOLLERR)) || (tls_read_wants_write && (events & EPOLLOUT))))
        read_frames();
    if (closed_) return;
    flush();  // the answers of this batch, in one gathered write
    if (closing_ && outq_.empty()) return close();
    update_watch();
}

// Receive what the socket has and run every whole frame; the answers queue
// up in outq_ and leave together after the batch.
void TcpSession::read_frames() {
    for (int i = 0; i < kSessionReadsPerEvent && !closing_ && !closed_; ++i) {
        if (too_far_ahead()) return;  // update_watch stops reading
        auto room = reader_.space();
        IoResult r = stream_.read_some(room);
        // A client that vanishes mid-frame simply ends here: its partial
        // frame was never applied.
        if (r.status == IoResult::would_block) {
            // Idle: a large request's buffer goes back, so an idle session
            // holds only its pinned 64 KiB, not its largest frame.
            if (reader_.buffered() == 0) reader_.release_large();
            return;
        }
        if (r.status != IoResult::ok) return close();
        reader_.commit(r.n);
        process_frames();
        if (!stream_.is_tls() && r.n < room.size()) return;
    }
}

// Run the whole frames received. A read answered from the region's own
// bytes must be sent before the next request runs (it could change them),
// and no request runs while the client has not taken max_queued_answer_bytes
// of answers: until then the frames wait in the reader.
void TcpSession::process_frames() {
    while (!closing_ && !closed_) {
        // Requests already received wait too while the client is behind:
        // a buffer of small requests can ask for far more answer bytes.
        if (too_far_ahead()) {
            flush();
            if (too_far_ahead()) return;
        }
        auto f = reader_.next();
        if (!f) break;
        on_frame(f->first, f->second);
    }
    if (reader_.error() && !closing_ && !closed_) {
        const Error& e = *reader_.error();
        if (!session_.authenticated && e.code() == errc::bad_size)
            return refuse_and_close(0, Error(errc::permission_denied, "authenticate first: before authentication frames of up to " +
                                                                          std::to_string(proto::kMaxHandshakePayload) +
                                                                          " bytes are accepted (" + e.detail() + ")"));
        refuse_and_close(0, e);
    }
}

void TcpSession::on_frame(const proto::Header& h, std::span<const std::byte> body) {
    if (!session_.authenticated) return on_auth(h, body);
    if (h.type == proto::Type::goodbye) return close();
    run_request(h, body);
}

void TcpSession::on_auth(const proto::Header& h, std::span<const std::byte> body) {
    if (h.type != proto::Type::auth)
        return refuse_and_close(h.request_id, Error(errc::permission_denied, "authenticate first"));
    auto auth = proto::decode_auth(body);
    if (!auth) return refuse_and_close(h.request_id, auth.error());
    auto welcome = owner_.service().authenticate(session_, *auth);
    if (!welcome) return refuse_and_close(h.request_id, welcome.error());
    reader_.set_max_payload(owner_.service().options().max_payload);  // requests may now be large
    set_up_.store(true, std::memory_order_release);
    owner_.handshake_over(peer_);
    proto::encode(outq_.arena(), h.request_id, *welcome);
    outq_.commit();
}

void TcpSession::respond(std::uint32_t id, const Result<void>& r) {
    queue_response(id, r);
    // A request of a revoked term: the session has lost its region for good.
    if (!r && r.error().code() == errc::fenced) say_fenced(r.error().detail());
}

void TcpSession::queue_response(std::uint32_t id, const Result<void>& r) {
    proto::Response resp;
    if (!r) {
        resp.status = static_cast<std::uint32_t>(r.error().code().value());
        // The detail only: the client rebuilds the full message from the code.
        const auto& e = r.error();
        resp.message = (e.detail().empty() ? e.message() : e.detail()).substr(0, 1024);
    }
    proto::encode(outq_.arena(), id, resp);
    outq_.commit();
}

// Goodbye with errc::fenced, then close once the answers have left: the
// client fails every request with fenced from then on.
void TcpSession::say_fenced(std::string why) {
    proto::Goodbye bye;
    bye.status = static_cast<std::uint32_t>(errc::fenced);
    bye.message = std::move(why);
    proto::encode(outq_.arena(), 0, bye);
    outq_.commit();
    closing_ = true;
}

void TcpSession::refuse_and_close(std::uint32_t id, const Error& e) {
    respond(id, e);
    closing_ = true;
}

void TcpSession::send_message(std::span<const std::byte> payload) {
    if (closed_ || closing_ || !session_.authenticated) return;
    proto::encode_message(outq_.arena(), 0, payload);
    outq_.commit();
    flush();
    update_watch();
}

void TcpSession::flush() {
    while (!outq_.empty() && !closed_) {
        // With a read answer queued, the kernel copies region bytes that
        // other connections may be writing (server/peer_memory.hpp).
        std::optional<server::PeerMemoryAccess> shared;
        if (view_pending_) shared.emplace();
        IoResult r = stream_.write_some(outq_.iovecs());
        shared.reset();
        if (r.status == IoResult::would_block) return;
        if (r.status != IoResult::ok) return close();
        outq_.consume(r.n);
    }
    if (outq_.empty()) view_pending_ = false;
}

bool TcpSession::too_far_ahead() const noexcept {
    return outq_.bytes() > owner_.service().options().max_queued_answer_bytes || view_blocks();
}

// EPOLLIN unless closing or too far ahead of the client; EPOLLOUT while
// answers wait (or TLS needs to write to make progress).
void TcpSession::update_watch() {
    if (closed_) return;
    std::uint32_t ev = 0;
    if (!closing_ && (tls_pending_ || !too_far_ahead())) ev |= EPOLLIN;
    if (!outq_.empty() || stream_.wants_write()) ev |= EPOLLOUT;
    if (watched_ && ev == watch_events_) return;
    const auto ec = watched_ ? loop_.rewatch(stream_.fd(), ev, this) : loop_.watch(stream_.fd(), ev, this);
    if (ec) return close();
    watched_ = true;
    watch_events_ = ev;
}

void TcpSession::handshake_timed_out() {
    if (closed_ || set_up()) return;
    const auto ms = owner_.service().options().handshake_timeout.count();
    owner_.admission().log(server::Admission::Kind::handshake_timeout,
                           "closed the connection from " + peer_ + ": no authentication within " + std::to_string(ms) +
                               " ms (ServerOptions::handshake_timeout)");
    close();
}

void TcpSession::fence(const server::Region* r, std::uint64_t term) {
    if (closed_ || closing_) return;
    const auto& grants = session_.grants;
    const auto it = std::find_if(grants.begin(), grants.end(),
                                 [&](const server::Grant& g) { return g.region == r && server::fenced(term, g.term); });
    if (it == grants.end()) return;
    say_fenced(server::fenced_detail(r->report.name, term, it->term));
    flush();
    if (outq_.empty()) return close();
    update_watch();
}

void TcpSession::close() noexcept {
    if (closed_) return;
    closed_ = true;
    // Closed before it authenticated: no longer counted as mid-handshake
    // (closed_ makes this run once).
    if (!set_up()) owner_.handshake_over(peer_);
    if (watched_) loop_.unwatch(stream_.fd());
    watched_ = false;
    stream_.shutdown();
    owner_.forget(session_.id);
}

} // namespace rpm::tcp
