// ClientConn's I/O thread: completions, control frames from the server,
// connection events, failure, and the callbacks, in posting order.
#include "transport/rdma/client.hpp"
#include "transport/rdma/frames.hpp"

#include <algorithm>
#include <array>
#include <cstring>

namespace rpm::rdma {

ClientConn::WaitPlan ClientConn::plan_locked() const {
    // Entries come back from other connections and the pool's thread, and
    // neither can wake this one: ask the pool again soon.
    // A posted op (a request stays so until its reply): a completion is
    // coming, and adaptive spins through its round trip. Ops that wait for
    // a bounce entry are not on the wire: those sleep between retries.
    return {ops_.starved() ? kBounceRetryMs : -1, ops_.posted() || direct_.active(), failed_};
}

void ClientConn::run() {
    enter_io_thread();
    Waiter waiter(opts_.completion);
    const auto drain = [this]() -> std::size_t {
        std::unique_lock drive(drive_.mu, std::try_to_lock);
        // A synchronous caller polls now: stop spinning and go to sleep.
        return drive ? poll_cq(false) : 1;
    };
    while (!io_.stop) {
        const std::optional<WaitPlan> plan = park_or_plan();
        if (!plan || spin_in_flight(*plan)) continue;
        const Ready r = plan->failed ? sleep_failed(*plan)
                                     : waiter.wait(link_.cq_fd(), link_.event_fd(), io_.wake, plan->timeout_ms, drain, plan->in_flight);
        if (r.wake) io_.wake.drain();
        // Held: a caller drives (it counted itself in first), and what woke
        // us (its completions on the channel) is its business: go park.
        std::unique_lock drive(drive_.mu, std::try_to_lock);
        if (drive) work(r, false);
    }
    std::lock_guard drive(drive_.mu);
    deliver();
    link_.await_closed();
}

// The I/O thread's wait while an operation is on the wire (a callback's
// next read or write at queue depth 1, mostly): the CQ polled, nothing
// else, before the Waiter's spin with its pacer, clock read and drain
// through a FunctionRef (as spin_own does for a synchronous caller: in the
// lab a call costs tens of nanoseconds, docs/benchmarks-history.md). It yields to a
// synchronous caller as the Waiter's drain does, and to any notify().
// RETURN VALUE: true when it handled completions (the loop plans again).
bool ClientConn::spin_in_flight(const WaitPlan& plan) {
    if (!plan.in_flight || plan.failed || plan.timeout_ms >= 0 || opts_.completion == CompletionMode::event) return false;
    io_.wake.set_spinning(true);
    for (unsigned spin = 0; spin < kOwnSpins; ++spin) {
        if (io_.wake.pending()) return false;
        const InlineLock drive(drive_.mu, std::try_to_lock);
        if (!drive) return false;
        switch (poll_own()) {
        case Own::none:
        case Own::on_wire: continue;
        case Own::failed: return false;  // the Waiter's drain meets it again, and fails the connection
        case Own::deliver: deliver(false); return true;
        case Own::over: return true;
        // The callback's next operation went direct: its completion is the
        // one to spin for, and the plan would say so (an operation on the
        // wire, nothing starved: a direct post needs an idle queue), so it
        // is not made again (a lock, the plan, a call out and back in per
        // operation). What changes it notifies: a synchronous caller, an
        // operation queued by another thread, close().
        case Own::next: spin = 0; continue;
        }
    }
    return false;
}

ClientConn::Own ClientConn::poll_own() {
    std::array<ibv_wc, 4> wcs;  // NOLINT(cppcoreguidelines-pro-type-member-init): filled by the provider
    int got = 0;
    const int ret = api_.cq_get_wc(link_.cq(), static_cast<int>(wcs.size()), wcs.data(), &got);
    if (ret == kErrNoCompletion) return Own::none;
    if (ret != 0) return Own::failed;
    return take_own(std::span(wcs.data(), static_cast<std::size_t>(got)));
}

ClientConn::Own ClientConn::take_own(std::span<const ibv_wc> wcs) {
    std::vector<Finished> finished = std::move(drive_.finished_scratch);
    std::uint64_t direct_before = 0;
    {
        const InlineLock lock(mu_);
        for (const ibv_wc& wc : wcs) on_wc_locked(wc);
        // Only the direct operation over, nothing else to hand out: its
        // outcome or callback is all there is, and nothing may run before
        // it. Otherwise a delivery round hands everything out in order.
        const bool alone = ops_.size() == 0 && !inbox_.has_ready();
        if (!direct_.finished() || !alone) {
            drive_.finished_scratch = std::move(finished);
            return direct_.active() && alone ? Own::on_wire : Own::deliver;
        }
        take_direct_locked(finished);
        direct_before = direct_.posts();
    }
    // Without the lock, under drive_.mu, as deliver_round runs them: a
    // callback may issue the next operation. What that one finishes at
    // once (a failed post) notifies the thread that polls.
    for (auto& f : finished)
        if (f.done) f.done(std::move(f.r));
    finished.clear();
    drive_.finished_scratch = std::move(finished);
    return direct_.posts() != direct_before ? Own::next : Own::over;
}

// A failed or closed connection has nothing to spin for: what still comes
// (the callback of an operation posted after close(), which fails at once
// and notifies; a flushed completion; the disconnect's event) wakes the
// thread. In busy mode, a closed connection's I/O thread spun until the
// connection object went away (rpm-bench's closed probe connection, whose
// region it keeps: a third spinning thread on the lab VM's two vCPUs).
Ready ClientConn::sleep_failed(const WaitPlan& plan) {
    // As the Waiter before it sleeps: from here a notify() writes the
    // eventfd, or this sees its flag.
    io_.wake.set_spinning(false);
    if (io_.wake.pending()) return Ready{.wake = true};
    io_.asleep_failed = true;
    const Ready r = wait_ready(link_.cq_fd(), link_.event_fd(), io_.wake.fd(), plan.timeout_ms);
    io_.asleep_failed = false;
    return r;
}

// While a synchronous caller drives, the I/O thread sleeps on its wakeup and
// the connection's events only: were it to watch the completion channel,
// every one of the caller's completions would wake it for nothing. It stays
// asleep after the call until someone needs it (notify_locked, end_drive).
std::optional<ClientConn::WaitPlan> ClientConn::park_or_plan() {
    {
        std::lock_guard lock(mu_);
        if (drive_.drivers == 0) return plan_locked();
        io_.parked = true;
        // Under mu_, where every notify_locked() runs: a notify from now on
        // writes the eventfd.
        io_.wake.set_spinning(false);
    }
    Ready r;
    if (!io_.wake.pending()) r = wait_ready(-1, link_.event_fd(), io_.wake.fd(), -1);
    io_.wake.drain();
    {
        std::lock_guard lock(mu_);
        io_.parked = false;
    }
    if (r.event) {
        // A connection event: the driver watches for it too; if none holds
        // the lock any more, it is ours.
        std::unique_lock drive(drive_.mu, std::try_to_lock);
        if (drive) work(r, false);
    }
    return std::nullopt;
}

// One round of work, by the I/O thread or a driving caller (holding drive_.mu).
void ClientConn::work(const Ready& r, bool by_driver) {
    // Progress from a spin: its drain just emptied the CQ, and polling it
    // again at once would find nothing (one poll per operation).
    if (r.progress && !r.cq && !r.event) {
        deliver(by_driver);
        return;
    }
    // Completions first: what the server sent before closing (a refusal,
    // a reply) must be seen before its disconnect fails everything.
    poll_cq(r.cq);
    if (r.event) on_event();
    deliver(by_driver);
}

std::size_t ClientConn::poll_cq(bool had_event) {
    // The completions wait in drive_.polled for the delivery round that follows
    // (deliver_round), which handles them under the lock it takes anyway:
    // one lock per round, not one more per completion.
    auto r = drain_cq(api_, link_.cq(), had_event, [this](const ibv_wc& wc) { drive_.polled.push_back(wc); });
    if (!r) {
        std::lock_guard lock(mu_);
        handle_polled_locked();
        fail_locked(errc::io_error, r.error().detail());
        return 1;  // something happened: the loop must look
    }
    return *r;
}

void ClientConn::handle_polled_locked() {
    for (const ibv_wc& wc : drive_.polled) on_wc_locked(wc);
    drive_.polled.clear();
}

void ClientConn::on_event() {
    // The parked I/O thread and a driving caller both watch the event
    // channel; whoever comes second must not block in conn_next_event.
    if (!wait_ready(-1, link_.event_fd(), -1, 0).event) return;
    ConnEvent ev = kConnUndefined;
    const int ret = api_.conn_next_event(link_.conn(), &ev);
    if (ret == kErrNoEvent || (ret == 0 && ev == kConnEstablished)) return;
    // A completion that raced the event is still the server's last word:
    // it, and any polled before, count before the failure.
    if (ret == 0) poll_cq(false);
    std::lock_guard lock(mu_);
    handle_polled_locked();
    if (ret != 0)
        return fail_locked(errc::io_error, call_failure(errc::io_error, link_.where(), "conn_next_event", ret).detail());
    link_.mark_closed();
    fail_locked(errc::io_error, link_.where() + ": connection " + event_name(ev));
}

void ClientConn::on_wc_locked(const ibv_wc& wc) {
    // Only wr_id and status are valid in a failed completion.
    if (wc.wr_id & kRecvTag) return on_recv_locked(static_cast<std::uint32_t>(wc.wr_id & ~kRecvTag), wc);
    if (wc.wr_id == kDirectTag || wc.wr_id == kDirectWriteTag) return on_direct_wc_locked(wc);
    on_op_wc_locked(wc.wr_id, wc);
}

void ClientConn::on_op_wc_locked(std::uint64_t seq, const ibv_wc& wc) {
    Op* op = ops_.find(seq);
    if (!op) return;  // an operation already failed with the connection
    ops_.retire_wr(*op);
    if (wc.status == IBV_WC_SUCCESS) ops_.retire_unsignaled_before(seq);
    if (wc.status != IBV_WC_SUCCESS) {
        // RC: one failed work request puts the queue pair in the error state.
        ops_.settle(*op, errc::io_error);
        return fail_locked(errc::io_error, link_.where() + ": work request failed: " + ibv_wc_status_str(wc.status));
    }
    // The device's word that a native atomic write went on the wire.
    if (wc.opcode == IBV_WC_ATOMIC_WRITE) native_atomics_.fetch_add(1, std::memory_order_relaxed);
    if (op->kind == OpKind::read && op->bounce) std::memcpy(op->out.data(), op->bounce->data(), op->out.size());
    ops_.settle(*op, {});
    if (!failed_) pump_locked();
}

void ClientConn::on_recv_locked(std::uint32_t slot, const ibv_wc& wc) {
    if (wc.status != IBV_WC_SUCCESS) {
        // Flushed receives after a disconnect are expected; anything else is a failure.
        return fail_locked(errc::io_error, link_.where() + ": receive failed: " + ibv_wc_status_str(wc.status));
    }
    if (slot >= link_.layout().recv_slots() || wc.byte_len > link_.layout().slot_size())
        return fail_locked(errc::io_error, link_.where() + ": a completion names no receive slot");
    const std::span<const std::byte> msg(link_.msgs().data() + link_.layout().recv_offset(slot), wc.byte_len);
    auto frame = parse_frame(msg, link_.layout().slot_size());
    if (!frame) return fail_locked(errc::io_error, link_.where() + ": bad frame from the server: " + frame.error().message());
    on_frame_locked(frame->first, frame->second);
    if (!failed_) repost_locked(slot);
}

void ClientConn::repost_locked(std::uint32_t slot) {
    const auto* ctx = reinterpret_cast<const void*>(kRecvTag | slot);
    const int ret = api_.recv(link_.conn(), link_.msgs().mr(), link_.layout().recv_offset(slot), link_.layout().slot_size(), ctx);
    if (ret != 0) fail_locked(errc::io_error, call_failure(errc::io_error, link_.where(), "recv", ret).detail());
}

void ClientConn::on_frame_locked(const proto::Header& h, std::span<const std::byte> body) {
    switch (h.type) {
    case proto::Type::hello: return on_hello_locked(body);
    case proto::Type::message: return on_message_locked(body);
    case proto::Type::goodbye: {
        // With a reason (errc::fenced), every request fails with it.
        auto g = proto::decode_goodbye(body);
        if (!g || g->status == 0) return fail_locked(errc::io_error, link_.where() + ": the server closed the connection");
        return fail_locked(std::error_code(static_cast<int>(g->status), rpm_category()),
                           link_.where() + ": the server closed the connection: " + g->message);
    }
    case proto::Type::welcome:
    case proto::Type::region:
    case proto::Type::response: break;
    default: return fail_locked(errc::io_error, link_.where() + ": unexpected " + std::string(proto::type_name(h.type)) + " frame");
    }
    if (h.type == proto::Type::response && on_direct_reply_locked(h, body)) return;
    const std::uint64_t seq = requests_.forget(h.request_id);
    if (seq == 0) return;  // the request already failed
    // The server had the frame: the writes in front of it were placed
    // (a persist's last one went unsignaled, and so may the request's send).
    ops_.retire_unsignaled_before(seq, /*completion=*/false);
    if (Op* op = ops_.find(seq)) {
        op->wr_pending = false;
        ops_.settle(*op, op->on_reply ? op->on_reply(h, body) : errc::io_error);
    }
}

void ClientConn::on_hello_locked(std::span<const std::byte> body) {
    bool protocol_error = false;
    auto auth = handshake_.on_hello(body, opts_, link_.where(), protocol_error);
    if (!auth && protocol_error) return fail_locked(errc::io_error, auth.error().detail());
    if (!auth) return handshake_.settle(auth.error());
    std::vector<std::byte> frame;
    const auto rid = requests_.next_id();
    proto::encode(frame, rid, *auth);
    auto on_reply = [this](const proto::Header& h, std::span<const std::byte> b) -> std::error_code {
        Result<void> r = handshake_.on_welcome(h, b, opts_);
        const std::error_code ec = r ? std::error_code{} : r.error().code();
        handshake_.settle(std::move(r));
        return ec;
    };
    submit_locked(request_op(std::move(frame), rid, std::move(on_reply), nullptr, link_.layout().slot_size()));
}

void ClientConn::on_message_locked(std::span<const std::byte> payload) {
    inbox_.on_message(payload, [this](std::error_code ec, std::size_t n) { return recv_outcome_locked(ec, n); });
}

namespace {
const char* op_name(OpKind k) noexcept {
    switch (k) {
    case OpKind::write: return "write";
    case OpKind::read: return "read";
    case OpKind::atomic_write: return "atomic_write";
    case OpKind::flush: return "flush";
    case OpKind::request: return "request";
    case OpKind::none: break;
    }
    return "operation";
}
} // namespace

// Built only for a failure: success carries no text. The connection's own
// failure says why it went; any other code is the server's answer or the
// operation's refusal (a too large send).
Error ClientConn::failure_locked(std::error_code ec, OpKind kind) const {
    const char* op = op_name(kind);
    if (failed_ && ec == fail_ec_) return client::connection_failed(ec, op, link_.where(), fail_why_);
    if (kind == OpKind::request && ec == errc::bad_size)
        return client::operation_error(ec, op, link_.where(), "larger than a message slot (" +
                                                           std::to_string(link_.layout().slot_size()) + " bytes): nothing was sent");
    if (kind == OpKind::request) return client::refused_by_server(ec, op, link_.where());
    return client::operation_error(ec, op, link_.where(), {});
}

Result<std::size_t> ClientConn::recv_outcome_locked(std::error_code ec, std::size_t size) const {
    if (!ec) return size;
    if (ec == errc::bad_size)
        return client::message_dropped(link_.where(), size, 0);
    return failure_locked(ec, OpKind::none);
}

void ClientConn::fail_locked(std::error_code ec, std::string why) {
    if (failed_) return;
    failed_ = true;
    fail_ec_ = ec;
    fail_why_ = why;
    ops_.fail_all(ec);
    direct_.fail(ops_, ec);
    requests_.clear();
    // Nothing is posted after a failure; the server learns it from the
    // disconnect (and conn_delete expects one after kConnClosed too).
    link_.disconnect();
    inbox_.fail(ec, [this](std::error_code e, std::size_t n) { return recv_outcome_locked(e, n); });
    handshake_.settle(Error(ec, std::move(why)));
    notify_all();
}

std::size_t ClientConn::deliver(bool by_driver) {
    std::size_t total = 0;
    for (;;) {
        bool more = false;
        const std::size_t n = deliver_round(more, by_driver);
        total += n;
        if (n == 0 || !more) return total;
    }
}

std::size_t ClientConn::deliver_round(bool& more, bool by_driver) {
    // Only under drive_.mu (whoever polls), so one caller uses the scratch
    // vectors at a time; taken out and put back, they keep their capacity
    // (no allocation per operation) and a nested deliver() would find them
    // empty, not in use.
    std::vector<Finished> finished = std::move(drive_.finished_scratch);
    std::vector<Inbox::ReadyRecv> recvs = std::move(drive_.recv_scratch);
    std::uint64_t pushed_before = 0, direct_before = 0;
    {
        std::lock_guard lock(mu_);
        handle_polled_locked();
        // A direct operation's callback runs in its place in posting order.
        if (direct_.pending()) take_direct_locked(finished);
        if (!direct_.active()) ops_.take_finished([this, &finished](Op& op) { take_locked(op, finished); });
        inbox_.take_ready(recvs);
        // Entries given back (here or by other connections) may let queued
        // operations go.
        if (!failed_) pump_locked();
        // A post that failed just now finished its op at once.
        more = ops_.front_finished();
        pushed_before = ops_.pushed();
        direct_before = direct_.posts();
        // A driver's next wait (drive_until) plans by this: it runs right
        // before, and whatever changes the plan meanwhile (another thread's
        // operation) notifies the driver, which delivers again.
        drive_.plan = plan_locked();
    }
    // Callbacks run without the lock: they may post more work.
    for (auto& f : finished)
        if (f.done) f.done(std::move(f.r));
    for (auto& r : recvs) r.done(std::move(r.r));
    const std::size_t n = finished.size() + recvs.size();
    // Another round only if a callback queued work here (which may have
    // finished at once): what other threads queue meanwhile notifies the
    // thread that polls (submit_locked, recv), which delivers again then.
    // A direct post needs one only for a driver, whose next wait plans by
    // drive_.plan (now stale: a completion is coming). The I/O thread plans
    // afresh (park_or_plan), and a direct post that failed notifies it
    // (direct_post_failed_locked): a round per operation saved.
    const bool queued = ops_.pushed() != pushed_before;
    const bool direct = direct_.posts() != direct_before;
    if (n > 0 && (queued || (by_driver && direct))) more = true;
    finished.clear();
    recvs.clear();
    drive_.finished_scratch = std::move(finished);
    drive_.recv_scratch = std::move(recvs);
    return n;
}

} // namespace rpm::rdma
