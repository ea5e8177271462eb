// rpm::IoGroup: an EventLoop and the thread that runs it. Every tcp://
// client connection runs on one: its own by default, or one shared with
// other connections (ClientOptions::io_group), so that answers arriving on
// several connections at once are handled in one wake-up.
//
// A thread that waits for answers on several of the group's connections
// (the Replicator's committing thread) may drive the group itself instead
// of sleeping until the group's thread hands it the answers: it takes the
// receive side of each connection it sends on while it drives (a "claim"),
// polls them and runs their completions on its own thread, as a plain
// fan-out over blocking sockets does. Without the drive, every answer woke
// the group's thread, which then woke the caller: measured in
// docs/benchmarks-history.md, "The committing thread reads the answers".
//
// Declared here, beside the client API that hands it out
// (ClientOptions::io_group, make_io_group), so that the replicator and the
// public API reach it without naming a transport; implemented by tcp://
// (transport/tcp/io_group*.cpp), which owns the loop.
#pragma once

#include <rpm/client.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

namespace rpm::tcp {
class EventLoop;
class TcpClient;
} // namespace rpm::tcp

namespace rpm {

class IoGroup {
public:
    using Deadline = std::chrono::steady_clock::time_point;

    /// Makes the loop and starts its thread (which blocks SIGPIPE: OpenSSL
    /// may raise it). loop().error() says when the loop could not be made.
    IoGroup();
    /// Stops the loop (tasks posted before still run) and joins the thread.
    /// Never runs on the group's own thread: a TcpClient let go of from one
    /// of its callbacks hands its reference to a helper thread.
    ~IoGroup();
    IoGroup(const IoGroup&) = delete;
    IoGroup& operator=(const IoGroup&) = delete;

    tcp::EventLoop& loop() noexcept { return *loop_; }

    /// The calling thread drives the group while this lives: each plain
    /// (not TLS) connection of the group that it sends a request on is
    /// claimed, and its answers are read and completed by run_until() on
    /// this thread. The end hands every claimed connection back to the
    /// group's thread (answers still owed included).
    class Drive {
    public:
        Drive(Drive&& o) noexcept : g_(std::exchange(o.g_, nullptr)) {}
        Drive& operator=(Drive&&) = delete;
        ~Drive();
        /// Poll the claimed connections and run their completions here until
        /// `done()` holds (checked first, after each batch and after
        /// wake_driver()).
        /// RETURN VALUE: true once done() held; false at `deadline`, or when
        /// poll(2) failed (the caller then waits some other way).
        bool run_until(const std::function<bool()>& done, Deadline deadline);

    private:
        friend class IoGroup;
        explicit Drive(IoGroup* g) noexcept : g_(g) {}
        IoGroup* g_;
    };
    /// RETURN VALUE: the drive, or nullopt when another thread drives the
    /// group, on the group's own thread, or when the loop could not be made.
    std::optional<Drive> try_drive();
    /// Wake a driver blocked in run_until() so it checks its condition
    /// again: for completions that run elsewhere (another transport, a
    /// failure detector). One atomic load when nothing is polling.
    void wake_driver() noexcept;

    // For TcpClient (client_drive.cpp).
    /// Whether the calling thread drives the group.
    [[nodiscard]] bool driven_here() const noexcept { return driver_.load() == std::this_thread::get_id(); }
    /// `c` was claimed by the driver (on the driver's thread).
    void add_claim(tcp::TcpClient* c);
    /// `c` is closing: the driver lets go of it (never touches it again once
    /// this returns). Never called with c's own lock held.
    void forget(tcp::TcpClient* c) noexcept;

private:
    void end_drive();

    std::unique_ptr<tcp::EventLoop> loop_;  ///< never null; its type is tcp://'s (event_loop.hpp)
    std::thread thread_;
    std::atomic<std::thread::id> driver_{};
    std::atomic<bool> polling_{false};  ///< the driver is (about to be) in poll()
    int wake_fd_ = -1;                  ///< an eventfd in the driver's poll set
    std::mutex claims_mu_;              ///< before a claimed connection's own lock
    std::vector<tcp::TcpClient*> claims_;
};

} // namespace rpm
