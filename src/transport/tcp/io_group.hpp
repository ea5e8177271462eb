// rpm::IoGroup: an EventLoop and the thread that runs it. Every tcp://
// client connection runs on one: its own by default, or one shared with
// other connections (ClientOptions::io_group), so that answers arriving on
// several connections at once are handled in one wake-up.
#pragma once

#include <rpm/client.hpp>

#include "transport/tcp/event_loop.hpp"

#include <thread>

namespace rpm {

class IoGroup {
public:
    /// Makes the loop and starts its thread (which blocks SIGPIPE: OpenSSL
    /// may raise it). loop().error() says when the loop could not be made.
    IoGroup();
    /// Stops the loop (tasks posted before still run) and joins the thread.
    /// Never runs on the group's own thread: a TcpClient let go of from one
    /// of its callbacks hands its reference to a helper thread.
    ~IoGroup();
    IoGroup(const IoGroup&) = delete;
    IoGroup& operator=(const IoGroup&) = delete;

    tcp::EventLoop& loop() noexcept { return loop_; }

private:
    tcp::EventLoop loop_;
    std::thread thread_;
};

} // namespace rpm
