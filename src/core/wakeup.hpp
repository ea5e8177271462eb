// Waking a thread that polls completions and sometimes sleeps in poll().
#pragma once

#include <atomic>

namespace rpm {

/// An eventfd another thread writes to wake a polling thread (an rdma://
/// connection's I/O thread or synchronous caller, a Replicator's committing
/// thread), and a flag a spinning poller reads instead (no system call on
/// either side).
class Wakeup {
public:
    /// `spinning`: the state set_spinning(on) sets, from the start (a
    /// poller that sleeps only now and then starts out not asleep).
    explicit Wakeup(bool spinning = false) noexcept;
    ~Wakeup();
    Wakeup(const Wakeup&) = delete;
    Wakeup& operator=(const Wakeup&) = delete;
    [[nodiscard]] int fd() const noexcept { return fd_; }
    [[nodiscard]] bool ok() const noexcept { return fd_ >= 0; }
    void notify() noexcept;
    void drain() noexcept;
    [[nodiscard]] bool pending() const noexcept { return pending_.load(); }
    /// Set by a Waiter while its thread spins or works between waits: a
    /// notify() then only sets the flag.
    void set_spinning(bool on) noexcept { spinning_.store(on); }

private:
    int fd_ = -1;
    std::atomic<bool> pending_{false};
    std::atomic<bool> spinning_{false};
};

} // namespace rpm
