// ServerSession: one accepted connection's I/O thread. It sends Hello once
// the connection is established, then answers Auth, OpenRegion, Flush and
// application messages through server::Service. Replies leave through a small
// outbox so that Listener::send (other threads) and the handlers share the
// send slots.
#include "transport/rdma/frames.hpp"
#include "transport/rdma/server.hpp"

#include <algorithm>
#include <cstring>

namespace rpm::rdma {
namespace {

const void* recv_ctx(std::uint32_t slot) noexcept { return reinterpret_cast<const void*>(kServerRecvTag | slot); }
const void* send_ctx(std::uint32_t slot) noexcept { return reinterpret_cast<const void*>(kServerSendTag | slot); }

} // namespace

ServerSession::ServerSession(SessionEnv& env, server::Session s)
    : env_(env), api_(env.api), session_(std::move(s)),
      layout_(env.limits.recv_slots, env.limits.send_slots, env.limits.slot_size), conn_(env.api),
      slots_(env.limits.send_slots) {}

ServerSession::~ServerSession() { join(); }

Result<void> ServerSession::accept(ConnReqHandle req) {
    const std::string what = "rdma session " + std::to_string(session_.id);
    if (!wake_.ok()) return Error(errc::io_error, what + ": eventfd failed");
    auto msgs = MessageBuffer::take(env_.messages, api_, env_.peer, layout_.total_bytes(), what);
    if (!msgs) return msgs.error();
    msgs_.emplace(std::move(*msgs));
    for (std::uint32_t i = 0; i < layout_.recv_slots(); ++i) {
        // Posted before accepting, so the client's Auth always finds one.
        const int ret = api_.conn_req_recv(req.get(), msgs_->mr(), layout_.recv_offset(i), layout_.slot_size(), recv_ctx(i));
        if (ret != 0) return call_failure(errc::io_error, what, "conn_req_recv", ret);
    }
    if (int ret = api_.conn_req_connect(req.consume(), nullptr, conn_.out()); ret != 0)
        return call_failure(errc::io_error, what, "conn_req_connect", ret);
    int ret = api_.conn_get_event_fd(conn_.get(), &event_fd_);
    if (ret == 0) ret = api_.conn_get_cq(conn_.get(), &cq_);
    if (ret == 0) ret = api_.cq_get_fd(cq_, &cq_fd_);
    if (ret != 0) return call_failure(errc::io_error, what, "conn_get_*", ret);
    if (auto r = set_nonblocking(cq_fd_); !r) return r;
    accepted_at_ = std::chrono::steady_clock::now();
    return {};
}

void ServerSession::start() { thread_ = std::thread([this] { run(); }); }

// Until it is established, and then until it authenticates, a session has
// a deadline (ServerLimits::establish_timeout, ServerOptions::handshake_timeout
// from the accept): a peer that connects and says nothing does not keep a
// queue pair, its buffers and a thread.
// Completions: ServerOptions::completion once the client has
// authenticated; before that event mode, so a peer that never authenticates
// cannot make the server spin a CPU for it.
void ServerSession::run() {
    const auto handshake = env_.service.options().handshake_timeout;
    Waiter setting_up_waiter(CompletionMode::event), waiter(env_.service.options().completion);
    const auto drain = [this]() -> std::size_t {
        auto d = drain_cq(api_, cq_, false, [this](const ibv_wc& wc) { on_wc(wc); });
        if (!d) {
            close_session(d.error().detail());
            return 1;
        }
        return *d;
    };
    while (!stop_) {
        int timeout = -1;
        const bool setting_up = !established_ || !session_.authenticated;
        if (setting_up) {
            const auto limit = !established_ ? env_.limits.establish_timeout : handshake;
            const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                                      accepted_at_);
            timeout = std::max(0, to_ms(limit) - static_cast<int>(waited.count()));
        }
        Waiter& w = setting_up ? setting_up_waiter : waiter;
        const Ready r = w.wait(cq_fd_, event_fd_, wake_, timeout, drain);
        if (r.timeout && !established_) close_session("the connection was not established in time");
        else if (r.timeout && setting_up && !session_.authenticated) {
            env_.admission->log(server::Admission::Kind::handshake_timeout,
                                "closed an rdma:// connection that did not authenticate within " +
                                    std::to_string(handshake.count()) + " ms (ServerOptions::handshake_timeout)");
            close_session("no authentication within the handshake timeout");
        }
        if (r.wake) wake_.drain();
        // Requests that arrived before a disconnect are still answered in order.
        if (auto d = drain_cq(api_, cq_, r.cq, [this](const ibv_wc& wc) { on_wc(wc); }); !d)
            close_session(d.error().detail());
        if (r.event) on_event();
    }
    teardown();
}

void ServerSession::on_event() {
    ConnEvent ev = kConnUndefined;
    const int ret = api_.conn_next_event(conn_.get(), &ev);
    if (ret == kErrNoEvent) return;  // a spurious wake-up
    if (ret != 0)
        return close_session(call_failure(errc::io_error, "session", "conn_next_event", ret).detail());
    if (ev != kConnEstablished) {
        peer_closed_ = true;
        return close_session(std::string("connection ") + event_name(ev));
    }
    {
        std::lock_guard lock(mu_);
        established_ = true;
    }
    std::vector<std::byte> hello;
    proto::encode(hello, 0, env_.service.hello_for(session_));
    queue_frame(std::move(hello));
}

void ServerSession::on_wc(const ibv_wc& wc) {
    if (wc.wr_id & kServerRecvTag) return on_recv(static_cast<std::uint32_t>(wc.wr_id & ~kServerRecvTag), wc);
    const auto slot = static_cast<std::uint32_t>(wc.wr_id & ~kServerSendTag);
    std::lock_guard lock(mu_);
    if (slot < layout_.send_slots()) slots_.release(slot);
    if (wc.status != IBV_WC_SUCCESS) {
        stop_ = true;  // the queue pair is in the error state
        return;
    }
    pump_locked();
    // A refused Auth: close once the refusal has left.
    if (close_when_sent_ && outbox_.empty() && slots_.free_count() == layout_.send_slots()) stop_ = true;
}

void ServerSession::on_recv(std::uint32_t slot, const ibv_wc& wc) {
    if (wc.status != IBV_WC_SUCCESS) return close_session(std::string("receive failed: ") + ibv_wc_status_str(wc.status));
    if (slot >= layout_.recv_slots() || wc.byte_len > layout_.slot_size())
        return close_session("a completion names no receive slot");
    // Copy the frame out and give the slot back before handling it: a slow
    // handler (msync, deep flush) must not leave the client without receives.
    // Into a buffer the session keeps: no allocation per request.
    const std::byte* at = msgs_->data() + layout_.recv_offset(slot);
    std::vector<std::byte>& msg = request_copy_;
    msg.assign(at, at + wc.byte_len);
    repost(slot);
    auto frame = parse_frame(msg, layout_.slot_size());
    // A bad header or an oversized frame: the framing cannot be trusted.
    // docs/protocol.md: answer with request_id 0, then close.
    if (!frame) return refuse(0, frame.error());
    if (!stop_) on_frame(frame->first, frame->second);
}

void ServerSession::repost(std::uint32_t slot) {
    const int ret = api_.recv(conn_.get(), msgs_->mr(), layout_.recv_offset(slot), layout_.slot_size(), recv_ctx(slot));
    if (ret != 0) close_session(call_failure(errc::io_error, "session", "recv", ret).detail());
}

void ServerSession::queue_frame(std::vector<std::byte> frame) {
    std::lock_guard lock(mu_);
    if (closed_) return;
    outbox_.push_back(std::move(frame));
    pump_locked();
}

void ServerSession::send_frame(std::span<const std::byte> frame) {
    std::lock_guard lock(mu_);
    if (closed_) return;
    // Nothing queued before it: straight into a send slot, no copy kept.
    if (outbox_.empty() && established_ && post_locked(frame) != Post::no_slot) return;
    outbox_.emplace_back(frame.begin(), frame.end());
    pump_locked();
}

void ServerSession::pump_locked() {
    while (!closed_ && established_ && !outbox_.empty()) {
        const Post p = post_locked(outbox_.front());
        if (p == Post::no_slot) return;  // the next send completion pumps again
        outbox_.pop_front();
        if (p == Post::failed) return;
    }
}

ServerSession::Post ServerSession::post_locked(std::span<const std::byte> f) {
    const auto slot = slots_.acquire();
    if (!slot) return Post::no_slot;
    const std::size_t at = layout_.send_offset(*slot);
    std::memcpy(msgs_->data() + at, f.data(), f.size());
    // Signaled, every one: replies going unsignaled (one completion in
    // four) made send_flush persists slower in the lab VM, not faster
    // (docs/benchmarks-history.md, "Fewer allocations and completions per send_flush persist").
    const int ret = api_.send(conn_.get(), msgs_->mr(), at, f.size(), kCompletionAlways, send_ctx(*slot));
    if (ret != 0) {
        slots_.release(*slot);
        stop_ = true;
        wake_.notify();
        return Post::failed;
    }
    return Post::posted;
}

Result<void> ServerSession::send_message(std::span<const std::byte> payload) {
    if (proto::kHeaderSize + payload.size() > layout_.slot_size())
        return Error(errc::bad_size, "a message of " + std::to_string(payload.size()) +
                                         " bytes does not fit an rdma:// message (at most " +
                                         std::to_string(layout_.slot_size() - proto::kHeaderSize) + ")");
    std::vector<std::byte> frame;
    proto::encode_message(frame, 0, payload);
    {
        std::lock_guard lock(mu_);
        if (closed_ || stop_) return Error(errc::invalid_argument, "session " + std::to_string(session_.id) + " is closed");
    }
    queue_frame(std::move(frame));
    return {};
}

void ServerSession::fence(const server::Region* r, std::uint64_t term) {
    std::lock_guard lock(mu_);
    if (closed_) return;
    for (const auto& [region, t] : granted_)
        if (region == r && server::fenced(term, t))
            return say_fenced_locked(server::fenced_detail(r->report.name, term, t));
}

// Goodbye with errc::fenced, then close once it has left (the client fails
// every request with fenced from then on).
void ServerSession::say_fenced(std::string why) {
    std::lock_guard lock(mu_);
    say_fenced_locked(std::move(why));
}

void ServerSession::say_fenced_locked(std::string why) {
    if (closed_ || close_when_sent_) return;
    proto::Goodbye bye;
    bye.status = static_cast<std::uint32_t>(errc::fenced);
    bye.message = std::move(why);
    std::vector<std::byte> f;
    proto::encode(f, 0, bye);
    outbox_.push_back(std::move(f));
    pump_locked();
    close_when_sent_ = true;
    // Nothing in flight (not established yet, or the post failed): nothing
    // will complete to notice close_when_sent_.
    if (outbox_.empty() && slots_.free_count() == layout_.send_slots()) stop_ = true;
    wake_.notify();
}

void ServerSession::close_session(std::string why) {
    (void)why;  // the client learns it from the disconnect; nothing to log to yet
    stop_ = true;
}

void ServerSession::stop() noexcept {
    stop_ = true;
    wake_.notify();
}

void ServerSession::join() noexcept {
    if (thread_.joinable()) thread_.join();
}

void ServerSession::teardown() noexcept {
    {
        std::lock_guard lock(mu_);
        closed_ = true;
        outbox_.clear();
    }
    conn_.disconnect();
    // Wait (bounded) for kConnClosed unless the client already closed.
    if (conn_ && event_fd_ >= 0 && !peer_closed_)
        (void)wait_event(api_, conn_.get(), event_fd_, std::chrono::milliseconds(1000));
    conn_.reset();
    msgs_.reset();
    exited_ = true;
    if (env_.on_exit) env_.on_exit();
}

} // namespace rpm::rdma
