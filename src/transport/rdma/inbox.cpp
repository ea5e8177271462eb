#include "transport/rdma/inbox.hpp"

#include <cstring>

namespace rpm::rdma {

void Inbox::on_message(std::span<const std::byte> payload, Outcome outcome) {
    if (waiters_.empty()) {
        kept_.emplace_back(payload.begin(), payload.end());
        return;
    }
    RecvWaiter w = std::move(waiters_.front());
    waiters_.pop_front();
    if (payload.size() > w.out.size()) {
        ready_.push_back({std::move(w.done), outcome(errc::bad_size, payload.size())});
        return;
    }
    std::memcpy(w.out.data(), payload.data(), payload.size());
    ready_.push_back({std::move(w.done), payload.size()});
}

void Inbox::recv(std::span<std::byte> out, client::RecvDone done, std::error_code fail_ec, Outcome outcome) {
    if (kept_.empty()) {
        if (fail_ec)
            ready_.push_back({std::move(done), outcome(fail_ec, 0)});
        else
            waiters_.push_back({out, std::move(done)});
        return;
    }
    auto msg = std::move(kept_.front());
    kept_.pop_front();
    const bool fits = msg.size() <= out.size();
    if (fits) std::memcpy(out.data(), msg.data(), msg.size());
    ready_.push_back({std::move(done), fits ? Result<std::size_t>(msg.size()) : outcome(errc::bad_size, msg.size())});
}

void Inbox::fail(std::error_code ec, Outcome outcome) {
    for (auto& w : waiters_) ready_.push_back({std::move(w.done), outcome(ec, 0)});
    waiters_.clear();
}

} // namespace rpm::rdma
