// The pieces of a connection's I/O thread: an eventfd to wake it, poll()
// over the completion channel, the rdma_cm event channel and the eventfd,
// and draining the completion queue.
//
// The thread sleeps in poll() rather than in rpma_cq_wait() so that close()
// and new work can wake it; the CQ's fd is made non-blocking, as librpma(7)
// describes, so rpma_cq_wait() only acknowledges an event that is there.
#pragma once

#include "transport/rdma/api.hpp"

#include <rpm/result.hpp>

#include <chrono>
#include <functional>

namespace rpm::rdma {

/// An eventfd another thread writes to wake the I/O thread.
class Wakeup {
public:
    Wakeup() noexcept;
    ~Wakeup();
    Wakeup(const Wakeup&) = delete;
    Wakeup& operator=(const Wakeup&) = delete;
    [[nodiscard]] int fd() const noexcept { return fd_; }
    [[nodiscard]] bool ok() const noexcept { return fd_ >= 0; }
    void notify() noexcept;
    void drain() noexcept;

private:
    int fd_ = -1;
};

struct Ready {
    bool cq = false;
    bool event = false;
    bool wake = false;
    bool timeout = false;
};

/// poll() the completion channel, the connection's event channel and the
/// wakeup (any may be -1). timeout_ms -1 waits forever.
Ready wait_ready(int cq_fd, int event_fd, int wake_fd, int timeout_ms) noexcept;

/// O_NONBLOCK on a librpma fd. ERRORS: errc::io_error.
Result<void> set_nonblocking(int fd);

/// Acknowledge the CQ's event (when `had_event`) and hand every available
/// completion to `fn`. ERRORS: errc::io_error when librpma fails.
Result<void> drain_cq(const Api& api, rpma_cq* cq, bool had_event, const std::function<void(const ibv_wc&)>& fn);

/// Wait up to `timeout` for the next connection event.
/// ERRORS: errc::io_error on timeout or failure.
Result<rpma_conn_event> wait_event(const Api& api, rpma_conn* conn, int event_fd, std::chrono::milliseconds timeout);

/// "connection lost" etc. for logs and error details.
const char* event_name(rpma_conn_event e) noexcept;

/// Milliseconds for librpma's int timeouts, clamped.
int to_ms(std::chrono::milliseconds t) noexcept;

} // namespace rpm::rdma
