// A client connection's request ids and the requests that await the
// server's reply, in posting order: the reply's id finds the operation it
// finishes. Its own object so that issuing ids and matching replies are
// written once. next_id() is safe from any thread; the rest runs under the
// connection's mu_.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <deque>
#include <utility>

namespace rpm::rdma {

class Requests {
public:
    /// A fresh request id. 0 is the Hello's; ids only need to be unique
    /// among requests in flight.
    std::uint32_t next_id() noexcept {
        std::uint32_t id = next_.fetch_add(1, std::memory_order_relaxed);
        return id != 0 ? id : next_.fetch_add(1, std::memory_order_relaxed);
    }
    /// Request `rid`, queued as operation `seq`, awaits its reply.
    void await(std::uint32_t rid, std::uint64_t seq) { awaiting_.emplace_back(rid, seq); }
    /// Stop awaiting the reply to `rid`. RETURN VALUE: its op's seq, 0 if none awaited it.
    std::uint64_t forget(std::uint32_t rid) {
        // Replies come in the order of their requests, mostly: the front.
        auto it = std::find_if(awaiting_.begin(), awaiting_.end(), [rid](const auto& a) { return a.first == rid; });
        if (it == awaiting_.end()) return 0;
        const std::uint64_t seq = it->second;
        awaiting_.erase(it);
        return seq;
    }
    /// The connection failed: no reply is awaited any more.
    void clear() noexcept { awaiting_.clear(); }

private:
    std::deque<std::pair<std::uint32_t, std::uint64_t>> awaiting_;  // (request id, op seq)
    std::atomic<std::uint32_t> next_{1};
};

} // namespace rpm::rdma
