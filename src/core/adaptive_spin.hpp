// How long CompletionMode::adaptive spins before it sleeps: one definition
// for every waiter that honours the mode (an rdma:// connection's I/O
// thread and synchronous callers, src/transport/rdma/loop.hpp; the
// Replicator's committing thread, src/replication/poll_members.cpp, which
// keeps the short bound for now).
#pragma once

#include <chrono>

namespace rpm {

/// After the last piece of work, when nothing the waiter posted is
/// outstanding (a server waiting for requests, an idle connection).
inline constexpr std::chrono::microseconds kAdaptiveSpin{50};

/// While a completion of its own is expected: an operation it posted is on
/// the wire, so the wait is a round trip, not an idle gap. Spinning through
/// it saves the sleep, the channel's event and the re-arm, which in the lab
/// VM (a round trip of 35 to 60 µs, longer than kAdaptiveSpin) cost every
/// operation a wake-up (docs/benchmarks-history.md, "The floor, measured"). Past
/// this bound (a server's long persist) the waiter sleeps.
inline constexpr std::chrono::microseconds kAdaptiveSpinInFlight{1000};

} // namespace rpm
