// What a client connection's polling owns: the lock held by whoever polls
// the CQ and runs callbacks (the I/O thread for one round of work, a
// synchronous caller for its whole call), the completions polled and not
// handled yet, the delivery round's scratch vectors, and a synchronous
// caller's own wait: its wakeup, its Waiter, its call's outcome and plan.
// client_drive.cpp says how a caller drives (ClientConn::call).
//
// Lock order, as before the split: mu (this object's) before the
// connection's mu_, never after. Everything here but `drivers` (under the
// connection's mu_) and the atomics is under `mu`.
#pragma once

#include "client/transport.hpp"
#include "core/inline_mutex.hpp"
#include "core/wakeup.hpp"
#include "transport/rdma/inbox.hpp"
#include "transport/rdma/loop.hpp"

#include <rpm/result.hpp>

#include <atomic>
#include <cstdint>
#include <vector>

namespace rpm::rdma {

/// The next wait of whoever polls: its timeout (a retry for a bounce entry,
/// else -1), whether a completion is expected (Waiter::wait), and whether
/// the connection has failed or closed (ClientConn::sleep_failed).
struct WaitPlan {
    int timeout_ms;
    bool in_flight;
    bool failed = false;
};

/// A callback a delivery round runs, with its outcome.
struct Finished {
    client::Done done;
    Result<void> r;  ///< success: no text, no allocation
};

struct DriveState {
    explicit DriveState(CompletionMode mode) noexcept : waiter(mode) {}

    // Both this and the connection's mu_ are taken several times per
    // operation and are rarely contended: InlineMutex keeps an uncontended
    // lock and unlock inline, no call into libc (core/inline_mutex.hpp).
    InlineMutex mu;
    std::vector<ibv_wc> polled;  // polled, not handled yet (ClientConn::poll_cq)
    // deliver()'s: taken out and put back, they keep their capacity.
    std::vector<Finished> finished_scratch;
    std::vector<Inbox::ReadyRecv> recv_scratch;

    Wakeup wake;    // the synchronous caller's that drives
    Waiter waiter;  // its pace is learned across calls
    struct SyncCall {
        std::uint64_t gen = 0;  // which call's callback may set the rest
        bool done = false;
        Result<void> r;
    };
    SyncCall sync;                // the synchronous call's outcome (ClientConn::call)
    WaitPlan plan{-1, false};     // as of the last deliver()
    // The driver's start() posted its operation direct with nothing else to
    // hand out: its first round would find nothing (drive_until skips it).
    // Set on the driving thread (ClientConn::begin_direct_locked).
    bool fresh = false;

    // Synchronous callers driving or about to (each counts itself in before
    // it takes `mu`, so that an I/O thread failing to take the lock knows to
    // park rather than spin). Under the connection's mu_.
    unsigned drivers = 0;
    std::atomic<bool> held{false};            // a thread holds the polling (try_begin_hold)
    std::atomic<const char*> holder{nullptr};  // that thread's mark (client_drive.cpp)
};

} // namespace rpm::rdma
