// A synchronous call polls the completion queue on the caller's thread.
//
// Without this, every completion of a blocking persist went from the CQ to
// the I/O thread and from there, through a futex, to the waiting caller:
// two threads woken per operation, on a machine whose cores the RNIC (or
// rxe) needs too. The caller takes drive_.mu, the lock the I/O thread
// holds while it polls, and runs the I/O thread's own round of work (the
// same Waiter, by the connection's CompletionMode) until its operation's
// callback has run. The I/O thread, finding a driver, parks (park_or_plan)
// and is woken only when work outlives the call or arrives without one.
#include "transport/rdma/client.hpp"

#include <algorithm>
#include <utility>

namespace rpm::rdma {
namespace drive_tls {

// A load where a vector of held connections per thread was a lookup, and,
// a thread_local with a destructor, a call to __tls_get_addr per call; a
// load where std::this_thread::get_id() is a call into libc.
thread_local const ClientConn* t_driving = nullptr;
thread_local const ClientConn* t_io_thread_of = nullptr;
thread_local char t_mark = 0;

} // namespace drive_tls

using drive_tls::t_driving;
using drive_tls::t_io_thread_of;
using drive_tls::t_mark;

void ClientConn::enter_io_thread() const noexcept { t_io_thread_of = this; }

std::unique_ptr<client::PollHold> RdmaClient::hold_polling() {
    if (!c_->try_begin_hold()) return nullptr;
    return std::make_unique<RdmaPollHold>(c_);
}

bool ClientConn::try_begin_hold() {
    if (!can_drive() || drive_.held.exchange(true)) return false;
    {
        std::lock_guard lock(mu_);
        ++drive_.drivers;
        if (!io_.parked) io_.wake.notify();  // go park (see sync_call)
    }
    // The I/O thread lets go within its round; another thread's synchronous
    // call may keep the lock up to its timeout (a member that stopped
    // answering), and a committing thread must not wait for that: it waits
    // on its condition variable instead, and the failure detector decides.
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::milliseconds(1);
    while (!drive_.mu.try_lock()) {
        if (std::chrono::steady_clock::now() >= give_up) {
            end_drive();
            drive_.held = false;
            return false;
        }
        std::this_thread::yield();
    }
    // Notifies must reach the holder's poll() through the eventfd: a call's
    // Waiter may have left the flag that turns them into a flag write.
    drive_.wake.set_spinning(false);
    // Only this thread compares it with its own mark: it reads what it wrote.
    drive_.holder.store(&t_mark, std::memory_order_relaxed);
    // What finished before the hold (a refused call) runs here first.
    deliver();
    return true;
}

void ClientConn::end_hold() noexcept {
    drive_.holder.store(nullptr, std::memory_order_relaxed);
    drive_.mu.unlock();
    end_drive();
    drive_.held = false;
}

std::size_t ClientConn::poll_round(bool events) {
    std::size_t n = 0;
    if (events) {
        drive_.wake.drain();
        n += poll_cq(true);  // acknowledges the channel's event and re-arms
        on_event();
    } else {
        n += poll_cq(false);
    }
    n += deliver();
    return n;
}

void ClientConn::hold_fds(std::vector<int>& out) const {
    // The CQ is armed whenever its channel has no unacknowledged event:
    // at creation, and again by every cq_wait (poll_cq(true)).
    out.push_back(link_.cq_fd());
    out.push_back(link_.event_fd());
    out.push_back(drive_.wake.fd());
}

// Inline into its two callers: a call less per synchronous call.
template <class Post>
[[gnu::always_inline]] inline Result<void> ClientConn::sync_call(Post&& post, std::chrono::milliseconds timeout) {
    bool finished = false;
    Result<void> r;
    {
        std::lock_guard lock(mu_);
        ++drive_.drivers;
        // Send the I/O thread to park now, once: left watching the
        // completion channel, it would wake (and spin) for each of this and
        // later calls' completions. A parked one stays parked.
        if (!io_.parked) io_.wake.notify();
    }
    {
        // The timeout counts from the call's start. The clock (coarse: the
        // precise one may be a system call) is read here only when the lock
        // must be waited for; otherwise drive_until's first read, a few
        // microseconds on, stands for it: one read per call, not two.
        std::chrono::steady_clock::time_point began{};
        std::unique_lock drive(drive_.mu, std::try_to_lock);
        if (!drive) {
            began = coarse_now();
            drive.lock();
        }
        t_driving = this;
        // The outcome lives in drive_.sync, under drive_.mu (every callback runs
        // under it, and calls take turns on it); an outcome that comes after
        // its call timed out finds a newer generation.
        const std::uint64_t gen = ++drive_.sync.gen;
        drive_.sync.done = false;
        drive_.fresh = false;
        post(gen);
        finished = spin_own() || drive_until(drive_.sync.done, began, timeout);
        r = std::move(drive_.sync.r);
        t_driving = nullptr;
        end_drive();
    }
    if (finished) return r;
    close();
    return client::timed_out(Scheme::rdma, timeout);
}

client::Done ClientConn::sync_done(std::uint64_t gen) {
    // Two words, which std::function keeps inline: no allocation per call.
    return [this, gen](Result<void> r) {
        if (drive_.sync.gen != gen) return;
        drive_.sync.r = std::move(r);
        drive_.sync.done = true;
    };
}

Result<void> ClientConn::call(client::Start start, std::chrono::milliseconds timeout) {
    return sync_call([&](std::uint64_t gen) { start(sync_done(gen)); }, timeout);
}

// The public synchronous read and write come here (RemoteRegion, through
// Transport::read_now/write_now): the call's operation, direct, reports to
// the call itself, without the callback call() makes, moves into the
// operation, hands out and runs (a std::function per call, and the layers
// of a start: in the lab a call costs tens of nanoseconds,
// docs/benchmarks-history.md, "A call costs more than its instructions in the lab").
Result<void> ClientConn::transfer_now(OpKind kind, const proto::RegionGrant& g, std::uint64_t offset,
                                      std::span<const std::byte> src, std::span<std::byte> out,
                                      std::chrono::milliseconds timeout) {
    return sync_call(
        [&](std::uint64_t gen) {
            if (try_direct(kind, g.id, offset, src, out, nullptr, gen)) return;
            // Queued, with the call's callback (read() and write() try
            // direct once more: the connection may have gone idle since).
            if (kind == OpKind::write)
                write(g, offset, src, sync_done(gen));
            else
                read(g, offset, out, sync_done(gen));
        },
        timeout);
}

bool ClientConn::drive_until(const bool& done, std::chrono::steady_clock::time_point began,
                             std::chrono::milliseconds timeout) {
    using Clock = std::chrono::steady_clock;
    Waiter& waiter = drive_.waiter;  // under drive_.mu: one caller drives at a time
    const auto drain = [this] { return poll_cq(false); };
    // Whatever start() finished at once (a refused call) runs first; not
    // when it posted direct with nothing else to hand out, the common case:
    // that round (a lock, the queue's scan, the plan) would find nothing,
    // and the plan is known, a completion on its way.
    if (std::exchange(drive_.fresh, false))
        drive_.plan = {-1, true};
    else
        deliver();
    Clock::time_point deadline = began == Clock::time_point{} ? Clock::time_point{} : coarse_deadline(began, timeout);
    while (!done) {
        const auto now = coarse_now();
        if (deadline == Clock::time_point{}) deadline = coarse_deadline(now, timeout);
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - now);
        if (left.count() <= 0) return false;
        const WaitPlan plan = drive_.plan;  // deliver() just made it
        const int ms = to_ms(left);
        const Ready r = waiter.wait(link_.cq_fd(), link_.event_fd(), drive_.wake,
                                    plan.timeout_ms < 0 ? ms : std::min(plan.timeout_ms, ms), drain, plan.in_flight,
                                    now);
        if (r.wake) drive_.wake.drain();
        work(r, true);
    }
    return true;
}

// The wait of nearly every synchronous call: its own operation went direct
// (drive_.fresh) and its completion comes within a round trip. This polls
// the CQ and hands the completions to on_wc_locked, as a delivery round
// would, without drive_until's Waiter, its clock read, the FunctionRef
// drains and the round's plan: in the lab a call costs tens of nanoseconds
// (docs/benchmarks-history.md, "A call costs more than its instructions in the
// lab"), and those were half of a read's.
bool ClientConn::spin_own() {
    if (!drive_.fresh || opts_.completion == CompletionMode::event) return false;
    for (unsigned spin = 0; spin < kOwnSpins; ++spin) {
        // Another thread's operation or a close wants the general round.
        if (drive_.wake.pending()) return false;
        switch (poll_own()) {
        case Own::none:
        case Own::on_wire: continue;
        case Own::failed: return false;  // drive_until's poll meets it again, and fails the connection
        case Own::deliver: drive_.fresh = false; return false;
        case Own::over:
        case Own::next: drive_.fresh = false; return drive_.sync.done;
        }
    }
    return false;
}

void ClientConn::end_drive() noexcept {
    std::lock_guard lock(mu_);
    --drive_.drivers;
    // Operations other threads queued meanwhile, or a recv() waiting for a
    // message, need the CQ watched again (unless another caller drives on).
    if (drive_.drivers == 0 && io_.parked &&
        (ops_.size() > 0 || direct_.pending() || inbox_.has_waiters() || inbox_.has_ready() || failed_))
        io_.wake.notify();
}

void ClientConn::notify_locked() noexcept {
    (drive_.drivers > 0 ? drive_.wake : io_.wake).notify();
}

void ClientConn::notify_all() noexcept {
    io_.wake.notify();
    drive_.wake.notify();
}

} // namespace rpm::rdma
