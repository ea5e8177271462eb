// The messages the server sends (send/recv, not replies): one kept until a
// recv() asks, or handed to the recv() that waits for it. Its own object so
// that a message meets exactly one recv, whichever comes first. The
// connection calls it under its mu_; the callbacks it makes ready run where
// the connection's callbacks run (deliver_round), without that lock.
#pragma once

#include "client/transport.hpp"
#include "core/function_ref.hpp"

#include <rpm/result.hpp>

#include <cstddef>
#include <deque>
#include <span>
#include <system_error>
#include <vector>

namespace rpm::rdma {

class Inbox {
public:
    /// A recv()'s callback and its outcome, ready to run.
    struct ReadyRecv {
        client::RecvDone done;
        Result<std::size_t> r;
    };
    /// The outcome of a recv() that failed with `ec` (`size`: the message's,
    /// for errc::bad_size): the connection words it (recv_outcome_locked).
    using Outcome = FunctionRef<Result<std::size_t>(std::error_code ec, std::size_t size)>;

    /// A message from the server: the first waiting recv() takes it (or
    /// errc::bad_size when it does not fit), else it waits for one.
    void on_message(std::span<const std::byte> payload, Outcome outcome);
    /// A recv(): takes the oldest message kept, or waits for the next;
    /// `fail_ec` set: the connection has failed, and so does the recv.
    void recv(std::span<std::byte> out, client::RecvDone done, std::error_code fail_ec, Outcome outcome);
    /// The connection failed: every waiting recv() fails with `ec`.
    void fail(std::error_code ec, Outcome outcome);
    [[nodiscard]] bool has_ready() const noexcept { return !ready_.empty(); }
    [[nodiscard]] bool has_waiters() const noexcept { return !waiters_.empty(); }
    /// Hand out the ready callbacks (`into` empty: it keeps its capacity).
    void take_ready(std::vector<ReadyRecv>& into) noexcept { into.swap(ready_); }

private:
    struct RecvWaiter {
        std::span<std::byte> out;
        client::RecvDone done;
    };
    std::deque<std::vector<std::byte>> kept_;
    std::deque<RecvWaiter> waiters_;
    std::vector<ReadyRecv> ready_;
};

} // namespace rpm::rdma
