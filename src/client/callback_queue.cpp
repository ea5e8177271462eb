// CallbackQueue (include/rpm/callback_queue.hpp): a mutex-guarded queue
// and the eventfd of core/wakeup.hpp, written only when the queue turns
// non-empty, so a burst of completions costs one write and one wake-up.
#include <rpm/callback_queue.hpp>

#include "core/wakeup.hpp"

#include <cerrno>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>

namespace rpm {

namespace detail {

struct CallbackQueueState {
    Wakeup wake;
    mutable std::mutex mu;
    std::deque<std::function<void()>> ready;  // under mu

    void push(std::function<void()> f) {
        std::lock_guard lock(mu);
        ready.push_back(std::move(f));
        if (ready.size() == 1) wake.notify();
    }
};

} // namespace detail

CallbackQueue::CallbackQueue(std::shared_ptr<detail::CallbackQueueState> s) noexcept : s_(std::move(s)) {}

Result<CallbackQueue> CallbackQueue::create() {
    auto s = std::make_shared<detail::CallbackQueueState>();
    if (!s->wake.ok()) return Error(errc::io_error, std::string("CallbackQueue: eventfd: ") + std::strerror(errno));
    return CallbackQueue(std::move(s));
}

int CallbackQueue::fd() const noexcept { return s_->wake.fd(); }

Callback CallbackQueue::wrap(Callback done) const {
    return [s = s_, done = std::move(done)](Result<void> r) mutable {
        s->push([done = std::move(done), r = std::move(r)]() mutable { done(std::move(r)); });
    };
}

RecvCallback CallbackQueue::wrap_recv(RecvCallback done) const {
    return [s = s_, done = std::move(done)](Result<std::size_t> r) mutable {
        s->push([done = std::move(done), r = std::move(r)]() mutable { done(std::move(r)); });
    };
}

std::size_t CallbackQueue::run_ready() {
    std::deque<std::function<void()>> batch;
    {
        // Drained under the lock: a push after this finds the queue empty
        // and writes the eventfd again.
        std::lock_guard lock(s_->mu);
        s_->wake.drain();
        batch.swap(s_->ready);
    }
    std::size_t ran = 0;
    while (!batch.empty()) {
        auto f = std::move(batch.front());
        batch.pop_front();
        try {
            f();
        } catch (...) {
            // The rest go back in front of anything queued meanwhile.
            std::lock_guard lock(s_->mu);
            for (auto it = batch.rbegin(); it != batch.rend(); ++it) s_->ready.push_front(std::move(*it));
            if (!s_->ready.empty()) s_->wake.notify();
            throw;
        }
        ++ran;
    }
    return ran;
}

std::size_t CallbackQueue::pending() const noexcept {
    std::lock_guard lock(s_->mu);
    return s_->ready.size();
}

} // namespace rpm
