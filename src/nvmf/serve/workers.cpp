// Workers: the epoll set of idle connections and the threads that serve
// them (see workers.hpp).
#include "nvmf/serve/workers.hpp"
#include "nvmf/serve/fabric.hpp"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace rpm::nvmf::target {
namespace {

// Workers idle this long exit, keeping a few for the next burst.
constexpr int kIdleExitMs = 2000;
constexpr std::size_t kKeepIdle = 2;
// The stop eventfd's tag (a connection's is its address).
char g_wake_tag;

std::error_code last_errno() { return {errno, std::generic_category()}; }

} // namespace

Workers::Workers(std::size_t max_threads) : max_(max_threads < 1 ? 1 : max_threads) {
    epoll_ = ::epoll_create1(EPOLL_CLOEXEC);
    if (epoll_ < 0) {
        error_ = last_errno();
        return;
    }
    wake_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (wake_ < 0) {
        error_ = last_errno();
        return;
    }
    // Level-triggered and never read: once written, every worker wakes.
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.ptr = &g_wake_tag;
    if (::epoll_ctl(epoll_, EPOLL_CTL_ADD, wake_, &ev) != 0) error_ = last_errno();
    std::lock_guard lock(mu_);
    if (!error_) spawn_locked();
}

Workers::~Workers() {
    stop();
    if (wake_ >= 0) ::close(wake_);
    if (epoll_ >= 0) ::close(epoll_);
}

std::error_code Workers::add(FabricQueue* c) {
    if (error_) return error_;
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP | EPOLLONESHOT;
    ev.data.ptr = c;
    std::lock_guard arm(arm_mu_);
    return ::epoll_ctl(epoll_, EPOLL_CTL_ADD, c->fd(), &ev) == 0 ? std::error_code{} : last_errno();
}

void Workers::stop() {
    {
        std::lock_guard lock(mu_);
        if (stopping_) return;
        stopping_ = true;
    }
    if (wake_ >= 0) {
        const std::uint64_t one = 1;
        (void)!::write(wake_, &one, sizeof one);
    }
    // No worker starts after stopping_ is set, and none exits on its own
    // afterwards: the list is final; join outside the lock (they take it).
    std::list<Worker> all;
    {
        std::lock_guard lock(mu_);
        all.swap(workers_);
    }
    for (auto& w : all)
        if (w.thread.joinable()) w.thread.join();
}

std::size_t Workers::threads() const {
    std::lock_guard lock(mu_);
    return live_;
}

void Workers::spawn_locked() {
    reap_locked();
    if (stopping_ || live_ >= max_) return;
    workers_.emplace_back();
    auto self = std::prev(workers_.end());
    ++live_;
    ++idle_;
    self->thread = std::thread([this, self] { run(self); });
}

// Join the workers that exited on their own (their thread has returned or
// is about to: done is their last write under mu_).
void Workers::reap_locked() {
    for (auto it = workers_.begin(); it != workers_.end();) {
        if (!it->done) {
            ++it;
            continue;
        }
        it->thread.join();
        it = workers_.erase(it);
    }
}

void Workers::run(std::list<Worker>::iterator self) {
    for (;;) {
        epoll_event ev{};
        const int n = ::epoll_wait(epoll_, &ev, 1, kIdleExitMs);
        FabricQueue* c = nullptr;
        {
            std::lock_guard lock(mu_);
            const bool idle_too_long = n == 0 && idle_ > kKeepIdle;
            if (stopping_ || idle_too_long || (n < 0 && errno != EINTR)) {
                --idle_;
                --live_;
                // The stopper joins it (the list moved out); otherwise the
                // next spawn does.
                self->done = true;
                return;
            }
            if (n <= 0 || ev.data.ptr == &g_wake_tag) continue;
            c = static_cast<FabricQueue*>(ev.data.ptr);
            // Someone must be waiting while this one serves: the next
            // connection to get bytes must not wait for this one's command.
            if (--idle_ == 0) spawn_locked();
        }
        { std::lock_guard arm(arm_mu_); }  // see arm_mu_
        const bool more = c->serve();
        if (more) {
            epoll_event again{};
            again.events = EPOLLIN | EPOLLRDHUP | EPOLLONESHOT;
            again.data.ptr = c;
            std::unique_lock arm(arm_mu_);
            const int armed = ::epoll_ctl(epoll_, EPOLL_CTL_MOD, c->fd(), &again);
            arm.unlock();
            if (armed != 0) {
                // Cannot wait for it any more: end it (its reads now fail).
                ::shutdown(c->fd(), SHUT_RDWR);
                (void)c->serve();
                (void)::epoll_ctl(epoll_, EPOLL_CTL_DEL, c->fd(), &again);
                c->retire();
            }
        } else {
            epoll_event none{};
            (void)::epoll_ctl(epoll_, EPOLL_CTL_DEL, c->fd(), &none);
            c->retire();
        }
        std::lock_guard lock(mu_);
        ++idle_;
    }
}

} // namespace rpm::nvmf::target
