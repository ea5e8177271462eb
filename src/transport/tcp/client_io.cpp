// TcpClient: queueing requests, sending, receiving on the I/O thread, and
// the synchronous driver (see client.hpp for who touches the socket).
#include "transport/tcp/client.hpp"

namespace rpm::tcp {
namespace {

// Reads per readiness event on the I/O thread: bounded, so one flood of
// answers does not hold mu_ against the callers queueing requests.
constexpr int kReadsPerEvent = 16;

// The thread whose synchronous call is being started: its request is the
// driver's own (see TcpClient::call). initial-exec: read on every call, and
// so a load, not a call to __tls_get_addr (as rdma's t_driving).
[[gnu::tls_model("initial-exec")]] thread_local const void* t_direct_for = nullptr;

} // namespace

void TcpClient::submit(Pending p, Build build) {
    Completions done;
    bool claimed = false;
    {
        std::lock_guard lock(mu_);
        p.direct = t_direct_for == this && driver_ && !claimed_ && driver_thread_ == std::this_thread::get_id();
        if (state_ != State::ready) {
            const char* op = p.op;
            complete_locked(p, failed_locked(op), done);
        } else {
            p.id = next_id();
            build(p.id);
            pending_.push_back(std::move(p));
            claimed = claim_locked();
            // The group's driver reads the answers; whoever queues sends.
            // A synchronous driver sends its own request; the I/O thread
            // sends what completions queue once they have all run (one
            // gathered write) and then sets what it watches (no epoll_ctl
            // per request). TLS is sent only by the I/O thread (OpenSSL can
            // raise SIGPIPE, which an application's thread may not block):
            // EPOLLOUT it is.
            if (claimed_) {
                flush_locked();
                // A remainder leaves when the driver polls for room next.
                if (!outq_.empty()) io_->wake_driver();
            } else if (!driver_ && !dispatching_) {
                if (!stream_.is_tls() || loop_.in_loop()) flush_locked();
                update_watch_locked();
            }
        }
    }
    if (claimed) io_->add_claim(this);
    // A request refused before it was sent completes where completions
    // belong: on the I/O thread (inline for a driver, whose call waits).
    if (!done.empty()) {
        if (loop_.error() || loop_.in_loop()) run(done);
        else run_on_loop(std::move(done));
    }
}

void TcpClient::flush_locked() {
    while (!outq_.empty()) {
        IoResult r = stream_.write_some(outq_.iovecs());
        if (r.status == IoResult::would_block) return;  // EPOLLOUT (update_watch_locked) takes over
        if (r.status != IoResult::ok) {
            Completions done;
            // The server may have said why it closed (a goodbye with
            // errc::fenced) before the send found the socket shut: read
            // what arrived first, so the reason is the error.
            read_locked(done);
            fail_locked(errc::io_error, "send failed: " + r.why, done);
            run_on_loop(std::move(done));
            return;
        }
        outq_.consume(r.n);
    }
}

// Watch the socket while anything is expected from it: answers, messages
// for a recv(), or room to send. An idle connection stays watched (a
// server's goodbye is noticed); only a driver makes the loop let go.
void TcpClient::update_watch_locked() {
    if (state_ != State::ready || driver_) return;
    const bool wanted = !pending_.empty() || !recv_waiters_.empty() || !outq_.empty() || watched_;
    if (!wanted) return;
    std::uint32_t ev = EPOLLIN;
    if (!outq_.empty() || (stream_.is_tls() && stream_.wants_write())) ev |= EPOLLOUT;
    if (watched_ && ev == watch_events_) return;
    const auto ec = watched_ ? loop_.rewatch(stream_.fd(), ev, this) : loop_.watch(stream_.fd(), ev, this);
    if (!ec) watched_ = true, watch_events_ = ev;
}

void TcpClient::on_events(std::uint32_t events) {
    Completions done;
    {
        std::lock_guard lock(mu_);
        if (state_ != State::ready) return;
        if (driver_) {
            // A synchronous caller owns the socket; it hands it back when done.
            loop_.unwatch(stream_.fd());
            watched_ = false;
            return;
        }
        // A TLS read that had to write first waits for EPOLLOUT, not EPOLLIN.
        const bool tls_read_wants_write = stream_.is_tls() && stream_.wants_write();
        if (events & EPOLLOUT) flush_locked();
        if ((events & (EPOLLIN | EPOLLHUP | EPOLLERR)) || (tls_read_wants_write && (events & EPOLLOUT)))
            read_locked(done);
        dispatching_ = !done.empty();
    }
    finish_dispatch(done);
}

// On the I/O thread, after frames were parsed under mu_ with dispatching_
// set when they completed something: run the completions, then send in one
// write what they queued and set what the loop watches.
void TcpClient::finish_dispatch(Completions& done) {
    run(done);
    std::lock_guard lock(mu_);
    dispatching_ = false;
    if (state_ != State::ready) return;
    flush_locked();
    update_watch_locked();
}

// Receive what the socket has (until it would block, or a bounded number
// of reads) and parse the whole frames.
void TcpClient::read_locked(Completions& out) {
    for (int i = 0; i < kReadsPerEvent && state_ == State::ready; ++i) {
        auto room = reader_.space();
        IoResult r = stream_.read_some(room);
        if (r.status == IoResult::would_block) {
            // Idle: a large answer's buffer goes back (a connection keeps
            // only its pinned 64 KiB while nothing arrives).
            if (reader_.buffered() == 0) reader_.release_large();
            break;
        }
        if (r.status != IoResult::ok)
            return fail_locked(errc::io_error, r.status == IoResult::closed ? "the server closed the connection"
                                                                             : "connection lost: " + r.why, out);
        reader_.commit(r.n);
        drain_frames_locked(out);
        // A plain socket that filled less than the room has nothing more now.
        if (!stream_.is_tls() && r.n < room.size()) break;
    }
}

void TcpClient::drain_frames_locked(Completions& out) {
    while (state_ == State::ready) {
        auto frame = reader_.next();
        if (!frame) break;
        on_frame_locked(frame->first, frame->second, out);
    }
    if (reader_.error() && state_ == State::ready)
        fail_locked(errc::io_error, "bad frame from server: " + reader_.error()->message(), out);
}

void TcpClient::run(Completions& done) {  // static
    for (auto& c : done) {
        if (c.done) c.done(client::status(std::move(c.err)));
        else if (c.recv_done) c.recv_done(c.err.code() ? Result<std::size_t>(std::move(c.err)) : Result<std::size_t>(c.n));
        else if (c.region_done) c.region_done(std::move(*c.grant));
    }
    done.clear();
}

// A thread driving the group may wait for these (a claimed connection
// failed on another thread): it is woken once they have run.
void TcpClient::run_on_loop(Completions done) {
    if (done.empty()) return;
    loop_.post([this, d = std::make_shared<Completions>(std::move(done))] {
        run(*d);
        io_->wake_driver();
    });
}

// The synchronous form: drive the socket from this thread when nothing else
// is in flight, else wait for the I/O thread like any other caller.
Result<void> TcpClient::call(client::Start start, std::chrono::milliseconds timeout) {
    const Deadline deadline = std::chrono::steady_clock::now() + timeout;
    std::unique_lock lock(mu_);
    const bool can_drive = state_ == State::ready && !driver_ && !stream_.is_tls() && pending_.empty() &&
                           outq_.empty() && recv_waiters_.empty() && reader_.buffered() == 0 && !loop_.in_loop();
    if (!can_drive) {
        // On the loop's thread (inside a callback of this connection or of
        // another of its IoGroup), or inside a callback this thread's own
        // synchronous call runs: nothing else would answer the wait.
        const bool itself = loop_.in_loop() || (driver_ && driver_thread_ == std::this_thread::get_id());
        lock.unlock();
        if (itself)
            return Error(errc::would_deadlock, "a synchronous call inside a callback of its own tcp:// connection "
                                               "(or of its IoGroup): use the callback form there");
        return client::Transport::call(start, timeout);
    }
    driver_ = true;
    driver_thread_ = std::this_thread::get_id();
    lock.unlock();
    Result<void> result;
    bool finished = false;
    t_direct_for = this;
    start([&](Result<void> r) { result = std::move(r), finished = true; });
    t_direct_for = nullptr;
    lock.lock();
    if (!finished) drive(lock, deadline, finished);
    end_drive_locked();
    // Not finished: the connection failed before the answer (and is closed).
    if (finished) return result;
    return failed_locked("the call");
}

// Send the driver's request (and whatever was queued behind it), then
// receive until its answer is in. Other answers read on the way complete on
// the I/O thread. Called and returns with `lock` held.
void TcpClient::drive(std::unique_lock<std::mutex>& lock, Deadline deadline, bool& finished) {
    // The send holds mu_: others queue behind it and must not interleave.
    IoResult w = stream_.write_all_wait(outq_.iovecs(), deadline);
    while (w.status == IoResult::ok && (outq_.consume(w.n), !outq_.empty()))
        w = stream_.write_all_wait(outq_.iovecs(), deadline);
    Completions others;
    if (w.status != IoResult::ok) {
        fail_locked(errc::io_error, w.status == IoResult::timed_out ? "timed out" : "send failed: " + w.why, others);
    }
    while (!finished && state_ == State::ready) {
        auto room = reader_.space();
        lock.unlock();  // the socket's receive side is ours while driver_ is set
        IoResult r = stream_.read_wait(room, deadline);
        lock.lock();
        if (r.status != IoResult::ok) {
            const std::string why = r.status == IoResult::timed_out ? "timed out; the connection was closed"
                                    : r.status == IoResult::closed ? "the server closed the connection"
                                                                   : "connection lost: " + r.why;
            fail_locked(errc::io_error, why, others);
            break;
        }
        reader_.commit(r.n);
        drain_frames_locked(others);
    }
    // The driver's own completion ran inline (complete_locked); the others
    // read on the way belong to the I/O thread.
    run_on_loop(std::move(others));
}

void TcpClient::end_drive_locked() {
    driver_ = false;
    driver_thread_ = {};
    if (state_ != State::ready) return;
    // Requests others queued meanwhile, answers already read: the loop's now.
    flush_locked();
    update_watch_locked();
    if (reader_.buffered() > 0 || !pending_.empty()) {
        loop_.post([this] {
            Completions done;
            {
                std::lock_guard lock(mu_);
                if (state_ != State::ready || driver_) return;
                drain_frames_locked(done);
                dispatching_ = !done.empty();
            }
            finish_dispatch(done);
        });
    }
}

} // namespace rpm::tcp
