// Blocking TCP for the peer benchmark's clients: each client is a closed
// loop with one put in flight on its own thread, so a blocking socket is
// the shortest path (no event loop to hand off to) for every system alike.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kvbench {

struct Address {
    std::string host;
    std::uint16_t port = 0;
    [[nodiscard]] std::string text() const { return host + ":" + std::to_string(port); }
};

/// "HOST:PORT" ("[v6]:PORT" too). False on anything else.
bool parse_address(std::string_view s, Address& out);

class Socket {
public:
    Socket() = default;
    ~Socket();
    Socket(Socket&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
    Socket& operator=(Socket&& o) noexcept;
    Socket(const Socket&) = delete;
    Socket& operator=(const Socket&) = delete;

    /// TCP_NODELAY on, and send/receive timeouts: a server that stops
    /// answering fails the put instead of hanging the run.
    static Socket connect(const Address& a, std::chrono::milliseconds timeout, std::string& error);
    [[nodiscard]] bool valid() const noexcept { return fd_ >= 0; }

    /// The whole buffer, or false with `error` set.
    bool send(std::string_view bytes, std::string& error);
    /// Appends at least one byte to `in`, or false with `error` set (peer
    /// closed, timeout, error).
    bool recv_some(std::string& in, std::string& error);

private:
    explicit Socket(int fd) : fd_(fd) {}
    int fd_ = -1;
};

} // namespace kvbench
