// A level-triggered epoll loop for tcp:// (the client's I/O thread, each of
// the server's I/O threads). Asio's reactor was replaced because its
// per-operation costs sat on the critical path of every request: an extra
// speculative recv that fails with EAGAIN after each read, an epoll_wait
// with timeout 0 between handler batches, and a heap-allocated handler per
// operation. Here a watcher reads until the socket is drained and writes
// its answers once per batch: epoll_wait, recv, sendmsg per request.
#pragma once

#include <sys/epoll.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace rpm::tcp {

class EventLoop {
public:
    /// Something with a file descriptor: told which of EPOLLIN, EPOLLOUT,
    /// EPOLLERR, EPOLLHUP are set. Runs on the loop thread.
    class Watcher {
    public:
        virtual void on_events(std::uint32_t events) = 0;

    protected:
        ~Watcher() = default;
    };

    /// ERRORS (error()): the errno of epoll_create1 or eventfd.
    EventLoop();
    ~EventLoop();
    EventLoop(const EventLoop&) = delete;
    EventLoop& operator=(const EventLoop&) = delete;

    /// Non-zero when the loop could not be made.
    [[nodiscard]] std::error_code error() const noexcept { return error_; }

    /// Watch `fd` for `events` (EPOLLIN / EPOLLOUT). Thread-safe. A watcher
    /// must outlive its watch: unwatch() it on the loop thread, then free it
    /// from a task posted after that (events already taken from epoll for
    /// this batch may still name it until the batch ends).
    std::error_code watch(int fd, std::uint32_t events, Watcher* w) noexcept;
    std::error_code rewatch(int fd, std::uint32_t events, Watcher* w) noexcept;
    void unwatch(int fd) noexcept;
    /// On the loop thread, after unwatching `w`'s descriptor: events of the
    /// current batch that name `w` are skipped, so `w` may be destroyed now.
    void forget(Watcher* w);

    /// Run `task` on the loop thread, after the current batch of events.
    /// Thread-safe; from another thread it wakes the loop.
    void post(std::function<void()> task);

    /// Call `fn` on the loop thread about every `period` while it runs (one
    /// tick per loop; set before run()). Timeouts are checked there.
    void set_tick(std::chrono::milliseconds period, std::function<void()> fn);

    /// Runs until stop(); the calling thread is the loop thread meanwhile.
    /// Tasks posted before stop() run before run() returns.
    void run();
    /// Thread-safe. Idempotent.
    void stop() noexcept;
    [[nodiscard]] bool in_loop() const noexcept { return std::this_thread::get_id() == thread_id_.load(); }

private:
    bool run_tasks();
    void wake() noexcept;
    /// epoll_wait's timeout: until the next tick (-1 without one), 0 with tasks.
    int wait_ms(bool tasks_waiting) const;
    void maybe_tick();

    int epoll_ = -1;
    int wake_fd_ = -1;
    std::error_code error_;
    std::atomic<bool> stop_{false};
    std::atomic<std::thread::id> thread_id_{};
    std::mutex mu_;
    std::vector<std::function<void()>> tasks_;
    std::vector<std::function<void()>> running_;  ///< swapped with tasks_: no allocation per batch
    std::atomic<bool> wake_pending_{false};
    std::vector<Watcher*> forgotten_;  ///< this batch's; loop thread only
    std::chrono::milliseconds tick_period_{0};
    std::function<void()> tick_;
    std::chrono::steady_clock::time_point next_tick_{};
};

} // namespace rpm::tcp
