#include "transport/tcp/event_loop.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>

namespace rpm::tcp {
namespace {

std::error_code last_errno() noexcept { return {errno, std::generic_category()}; }

// The eventfd's epoll_event carries this instead of a Watcher.
constexpr std::uint64_t kWakeTag = 1;

} // namespace

EventLoop::EventLoop() {
    epoll_ = ::epoll_create1(EPOLL_CLOEXEC);
    if (epoll_ < 0) {
        error_ = last_errno();
        return;
    }
    wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (wake_fd_ < 0) {
        error_ = last_errno();
        return;
    }
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = kWakeTag;
    if (::epoll_ctl(epoll_, EPOLL_CTL_ADD, wake_fd_, &ev) != 0) error_ = last_errno();
}

EventLoop::~EventLoop() {
    if (wake_fd_ >= 0) ::close(wake_fd_);
    if (epoll_ >= 0) ::close(epoll_);
}

std::error_code EventLoop::watch(int fd, std::uint32_t events, Watcher* w) noexcept {
    epoll_event ev{};
    ev.events = events;
    ev.data.ptr = w;
    return ::epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &ev) == 0 ? std::error_code{} : last_errno();
}

std::error_code EventLoop::rewatch(int fd, std::uint32_t events, Watcher* w) noexcept {
    epoll_event ev{};
    ev.events = events;
    ev.data.ptr = w;
    return ::epoll_ctl(epoll_, EPOLL_CTL_MOD, fd, &ev) == 0 ? std::error_code{} : last_errno();
}

void EventLoop::unwatch(int fd) noexcept {
    epoll_event ev{};
    (void)::epoll_ctl(epoll_, EPOLL_CTL_DEL, fd, &ev);
}

void EventLoop::forget(Watcher* w) { forgotten_.push_back(w); }

void EventLoop::post(std::function<void()> task) {
    {
        std::lock_guard lock(mu_);
        tasks_.push_back(std::move(task));
    }
    // The loop thread runs its tasks before it sleeps again: no need to wake it.
    if (!in_loop()) wake();
}

void EventLoop::wake() noexcept {
    // One eventfd write per batch of posts, not per post.
    if (wake_pending_.exchange(true)) return;
    const std::uint64_t one = 1;
    (void)!::write(wake_fd_, &one, sizeof one);
}

void EventLoop::stop() noexcept {
    stop_ = true;
    wake_pending_ = false;  // a wake must get through even if one is pending
    wake();
}

bool EventLoop::run_tasks() {
    {
        std::lock_guard lock(mu_);
        if (tasks_.empty()) return false;
        running_.swap(tasks_);
    }
    for (auto& t : running_) t();
    running_.clear();
    return true;
}

void EventLoop::set_tick(std::chrono::milliseconds period, std::function<void()> fn) {
    tick_period_ = std::max(period, std::chrono::milliseconds(1));
    tick_ = std::move(fn);
}

int EventLoop::wait_ms(bool tasks_waiting) const {
    if (tasks_waiting) return 0;
    if (!tick_) return -1;
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(next_tick_ - std::chrono::steady_clock::now());
    return static_cast<int>(std::max<std::chrono::milliseconds::rep>(0, left.count()));
}

void EventLoop::maybe_tick() {
    if (!tick_) return;
    const auto now = std::chrono::steady_clock::now();
    if (now < next_tick_) return;
    next_tick_ = now + tick_period_;
    tick_();
}

void EventLoop::run() {
    thread_id_ = std::this_thread::get_id();
    std::array<epoll_event, 64> events{};
    next_tick_ = std::chrono::steady_clock::now() + tick_period_;
    while (!stop_.load(std::memory_order_relaxed)) {
        run_tasks();
        maybe_tick();
        bool more;
        {
            std::lock_guard lock(mu_);
            more = !tasks_.empty();
        }
        const int n = ::epoll_wait(epoll_, events.data(), static_cast<int>(events.size()), wait_ms(more));
        if (n < 0) {
            if (errno == EINTR) continue;
            break;  // EBADF/EINVAL: the loop is unusable; its owner sees the watchers fail
        }
        for (int i = 0; i < n; ++i) {
            if (events[i].data.u64 == kWakeTag) {
                std::uint64_t count = 0;
                (void)!::read(wake_fd_, &count, sizeof count);
                wake_pending_ = false;
                continue;
            }
            auto* w = static_cast<Watcher*>(events[i].data.ptr);
            if (!forgotten_.empty() && std::find(forgotten_.begin(), forgotten_.end(), w) != forgotten_.end()) continue;
            w->on_events(events[i].events);
        }
        forgotten_.clear();
    }
    while (run_tasks()) {
    }
    thread_id_ = std::thread::id{};
}

} // namespace rpm::tcp
