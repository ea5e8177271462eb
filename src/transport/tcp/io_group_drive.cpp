// IoGroup::Drive: a caller's thread reads the answers of the connections it
// sent on (see client/io_group.hpp). Locking: claims_mu_ guards the claimed list
// and is held while the driver touches a claimed connection (which takes
// its own lock after it); it is not held in poll() nor while completions
// run, so a completion may close or destroy a connection (forget()).
#include "client/io_group.hpp"
#include "transport/tcp/event_loop.hpp"

#include "transport/tcp/client.hpp"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace rpm {

std::optional<IoGroup::Drive> IoGroup::try_drive() {
    if (loop_->error() || wake_fd_ < 0 || loop_->in_loop()) return std::nullopt;
    std::thread::id none{};
    if (!driver_.compare_exchange_strong(none, std::this_thread::get_id())) return std::nullopt;
    return Drive(this);
}

void IoGroup::wake_driver() noexcept {
    // Seq-cst against the driver's store before its last check of done():
    // either it sees what changed, or this sees it polling and wakes it.
    if (!polling_.load() || driven_here()) return;
    const std::uint64_t one = 1;
    (void)!::write(wake_fd_, &one, sizeof one);
}

void IoGroup::add_claim(tcp::TcpClient* c) {
    std::lock_guard lock(claims_mu_);
    claims_.push_back(c);
}

void IoGroup::forget(tcp::TcpClient* c) noexcept {
    std::lock_guard lock(claims_mu_);
    claims_.erase(std::remove(claims_.begin(), claims_.end(), c), claims_.end());
}

IoGroup::Drive::~Drive() {
    if (g_) g_->end_drive();
}

// Answers still owed (a majority commit returns before the slowest member
// answers) go to the group's thread. One non-blocking read first: when the
// answer is already there, that costs a recv instead of an epoll_ctl and a
// wake-up of the group's thread.
void IoGroup::end_drive() {
    tcp::TcpClient::Completions done;
    {
        std::lock_guard lock(claims_mu_);
        for (auto* c : claims_) {
            if (c->owes_answers()) c->driver_io(POLLIN, done);
            c->release_claim();
        }
        claims_.clear();
        driver_.store(std::thread::id{});
    }
    tcp::TcpClient::run(done);
}

bool IoGroup::Drive::run_until(const std::function<bool()>& done, Deadline deadline) {
    IoGroup& g = *g_;
    std::vector<pollfd> fds;
    std::vector<tcp::TcpClient*> who;
    tcp::TcpClient::Completions completions;
    for (;;) {
        if (done()) return true;
        fds.clear();
        who.clear();
        {
            std::lock_guard lock(g.claims_mu_);
            for (auto* c : g.claims_) {
                const pollfd p = c->driver_poll();
                if (p.fd < 0) continue;
                fds.push_back(p);
                who.push_back(c);
            }
        }
        fds.push_back({g.wake_fd_, POLLIN, 0});
        g.polling_.store(true);
        if (done()) {
            g.polling_.store(false);
            return true;
        }
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            g.polling_.store(false);
            return false;
        }
        const int n = ::poll(fds.data(), fds.size(), static_cast<int>(std::min<long long>(left.count(), 1 << 30)));
        g.polling_.store(false);
        if (n < 0 && errno != EINTR) return false;
        if (n <= 0) continue;
        if (fds.back().revents & POLLIN) {
            std::uint64_t count = 0;
            (void)!::read(g.wake_fd_, &count, sizeof count);
        }
        {
            std::lock_guard lock(g.claims_mu_);
            for (std::size_t i = 0; i + 1 < fds.size(); ++i) {
                if (fds[i].revents == 0) continue;
                // Only this thread claims, and not while it polls: a pointer
                // still listed is the connection it polled (not a new one
                // at a freed address).
                if (std::find(g.claims_.begin(), g.claims_.end(), who[i]) == g.claims_.end()) continue;
                who[i]->driver_io(fds[i].revents, completions);
            }
        }
        tcp::TcpClient::run(completions);
    }
}

} // namespace rpm
