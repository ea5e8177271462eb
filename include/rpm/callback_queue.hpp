// Completions on a thread the application chooses: a file descriptor for
// its own event loop (epoll, poll, an Asio posix::stream_descriptor, libuv).
//
// A connection runs an asynchronous call's callback on its I/O thread
// (client.hpp, "Where callbacks run"), where the callback must not block
// and a synchronous call of the same connection is refused
// (errc::would_deadlock). An application that has a loop of its own hands
// its callbacks to a CallbackQueue instead: the connection's thread only
// queues them and makes fd() readable; the loop, seeing fd() readable,
// calls run_ready() on its thread, which runs them there.
//
//   auto q = rpm::CallbackQueue::create();           // once
//   region.persist(off, data, q->wrap([&](rpm::Result<void> r) { ... }));
//   // in the loop, when q->fd() polls readable:
//   q->run_ready();
#pragma once

#include <rpm/export.hpp>
#include <rpm/client.hpp>
#include <rpm/result.hpp>

#include <cstddef>
#include <memory>

RPM_API_BEGIN

namespace rpm {

namespace detail {
struct RPM_INTERNAL CallbackQueueState;
}

/// Callbacks queued by any thread, run by the one that calls run_ready().
/// Copies share one queue. Thread-safe: wrap()'s callbacks may run on any
/// thread; run_ready() is for one thread at a time.
class CallbackQueue {
public:
    /// A queue and its eventfd.
    /// RETURN VALUE: the queue.
    /// ERRORS: errc::io_error (eventfd() failed; the detail gives why).
    static Result<CallbackQueue> create();

    /// RETURN VALUE: a file descriptor, owned by the queue, that polls
    /// readable (POLLIN) while callbacks wait to run; never fails. Watch
    /// it, never read it: run_ready() empties it.
    [[nodiscard]] int fd() const noexcept;

    /// RETURN VALUE: a Callback for any asynchronous call (RemoteRegion,
    /// Connection::send): where the connection completes the call, it
    /// queues `done` with the status and makes fd() readable; `done` runs
    /// in a later run_ready(), exactly once. ERRORS: none.
    [[nodiscard]] Callback wrap(Callback done) const;
    /// As wrap(), for Connection::recv's callback. ERRORS: none.
    [[nodiscard]] RecvCallback wrap_recv(RecvCallback done) const;

    /// Runs, on the calling thread and in the order they were queued, the
    /// callbacks queued before this call; fd() then stops polling readable
    /// unless more came meanwhile. The callbacks may make synchronous calls
    /// (this is not a connection's I/O thread) and wrap further ones.
    /// RETURN VALUE: how many ran. ERRORS: none; an exception from a
    /// callback propagates, and the callbacks behind it stay queued (fd()
    /// stays readable).
    std::size_t run_ready();

    /// RETURN VALUE: callbacks queued and not yet run; never fails.
    [[nodiscard]] std::size_t pending() const noexcept;

private:
    RPM_INTERNAL explicit CallbackQueue(std::shared_ptr<detail::CallbackQueueState> s) noexcept;
    // Shared with every wrapped callback: a connection that completes after
    // the last CallbackQueue is gone queues into a state nobody runs, and
    // the callback is dropped unrun.
    std::shared_ptr<detail::CallbackQueueState> s_;
};

} // namespace rpm

RPM_API_END
