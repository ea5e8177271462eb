// A client connection's I/O thread: the thread, its wakeup, and whether it
// is parked (a synchronous caller drives), asleep on a failed connection,
// or told to stop. client_loop.cpp is its loop (ClientConn::run).
//
// `parked` is under the connection's mu_, where every notify_locked() runs
// (so that a notify reaches a parked thread through the eventfd); the rest
// are atomics or set before the thread starts and joined after it stops.
#pragma once

#include "core/wakeup.hpp"

#include <atomic>
#include <thread>

namespace rpm::rdma {

struct IoThread {
    Wakeup wake;
    bool parked = false;                  // it sleeps, not watching the CQ (under the connection's mu_)
    std::atomic<bool> asleep_failed{false};  // in sleep_failed (tests, diagnostics)
    std::atomic<bool> stop{false};
    std::thread thread;
};

} // namespace rpm::rdma
