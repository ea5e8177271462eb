// A synchronous call polls the completion queue on the caller's thread.
//
// Without this, every completion of a blocking persist went from the CQ to
// the I/O thread and from there, through a futex, to the waiting caller:
// two threads woken per operation, on a machine whose cores the RNIC (or
// rxe) needs too. The caller takes drive_mu_, the lock the I/O thread
// holds while it polls, and runs the I/O thread's own round of work (the
// same Waiter, by the connection's CompletionMode) until its operation's
// callback has run. The I/O thread, finding a driver, parks (ClientConn::park)
// and is woken only when work outlives the call or arrives without one.
#include "transport/rdma/client.hpp"

namespace rpm::rdma {
namespace {

// The connection whose synchronous call this thread is driving: a callback
// run by the driver that makes another call must not drive again.
thread_local const ClientConn* t_driving = nullptr;

} // namespace

bool ClientConn::can_drive() const noexcept {
    return t_driving != this && std::this_thread::get_id() != thread_.get_id();
}

std::error_code ClientConn::call(const std::function<void(client::Done)>& start, std::chrono::milliseconds timeout) {
    // Shared: after a timeout the callback still runs later, elsewhere.
    struct Outcome {
        bool done = false;
        std::error_code ec;
    };
    auto out = std::make_shared<Outcome>();
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    bool finished = false;
    {
        std::lock_guard lock(mu_);
        ++drivers_;
        // Send the I/O thread to park now, once: left watching the
        // completion channel, it would wake (and spin) for each of this and
        // later calls' completions. A parked one stays parked.
        if (!io_parked_) wake_.notify();
    }
    {
        std::unique_lock drive(drive_mu_);
        t_driving = this;
        start([out](std::error_code ec) {
            out->ec = ec;
            out->done = true;
        });
        finished = drive_until(out->done, deadline);
        t_driving = nullptr;
        end_drive();
    }
    if (finished) return out->ec;
    close();
    return errc::io_error;
}

bool ClientConn::drive_until(const bool& done, std::chrono::steady_clock::time_point deadline) {
    Waiter waiter(opts_.completion);
    const auto drain = [this] { return poll_cq(false); };
    // Whatever start() finished at once (a refused call) runs first.
    while (deliver()) {
    }
    while (!done) {
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) return false;
        const int retry = retry_timeout();
        const int ms = to_ms(left);
        const Ready r = waiter.wait(cq_fd_, event_fd_, drive_wake_, retry < 0 ? ms : std::min(retry, ms), drain);
        if (r.wake) drive_wake_.drain();
        work(r);
    }
    return true;
}

void ClientConn::end_drive() noexcept {
    std::lock_guard lock(mu_);
    --drivers_;
    // Operations other threads queued meanwhile, or a recv() waiting for a
    // message, need the CQ watched again (unless another caller drives on).
    if (drivers_ == 0 && io_parked_ && (ops_.size() > 0 || !waiters_.empty() || !ready_recvs_.empty() || failed_)) wake_.notify();
}

void ClientConn::notify_locked() noexcept {
    (drivers_ > 0 ? drive_wake_ : wake_).notify();
}

void ClientConn::notify_all() noexcept {
    wake_.notify();
    drive_wake_.notify();
}

} // namespace rpm::rdma
