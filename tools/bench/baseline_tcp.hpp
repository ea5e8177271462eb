// The plain-TCP baselines every tcp:// figure is divided by, measured in the
// same run on the same kind of socket: blocking POSIX sockets with
// TCP_NODELAY, one thread per connection on each side (no Asio, no epoll),
// i.e. the cheapest way to move the same bytes over the same path.
//
// Wire format of the baseline (ours, not rpm's): each request is an 8-byte
// header {u32 request_bytes, u32 reply_bytes} followed by request_bytes of
// payload; the server reads it all and answers with reply_bytes bytes
// (nothing when 0). A stream starts with the header {0xffffffff, 0}; then
// the sender writes its messages back to back and shuts its side down, the
// sink reads in 1 MiB recv() calls until end of stream and answers one
// byte, which proves it has read everything.
#pragma once

#include "measure.hpp"
#include "progress.hpp"

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace rpmbench {

struct Endpoint {
    std::string host;
    std::uint16_t port = 0;
};

/// "HOST:PORT" (IPv6 as [addr]:port). False on junk.
bool parse_endpoint(const std::string& s, Endpoint& out);

/// The echo/sink server of the baselines; one thread per connection.
class TcpBaselineServer {
public:
    /// Bind HOST:PORT (port 0 = any) and start accepting.
    /// Returns nullptr and sets `error` when it cannot bind.
    static std::unique_ptr<TcpBaselineServer> start(const Endpoint& at, std::string& error);
    ~TcpBaselineServer();
    TcpBaselineServer(const TcpBaselineServer&) = delete;
    TcpBaselineServer& operator=(const TcpBaselineServer&) = delete;

    [[nodiscard]] std::uint16_t port() const noexcept { return port_; }
    void stop() noexcept;

private:
    explicit TcpBaselineServer(int fd, std::uint16_t port);
    void accept_loop();

    int listen_fd_ = -1;
    std::uint16_t port_ = 0;
    std::thread acceptor_;
    std::mutex mu_;
    std::vector<int> session_fds_;
    std::vector<std::thread> sessions_;
    bool stopped_ = false;
};

struct RoundTripSpec {
    std::size_t request_bytes = 64;  ///< payload the client sends per operation
    std::size_t reply_bytes = 16;    ///< bytes the server answers with (>= 1)
    unsigned qd = 1;                 ///< requests in flight per connection
    unsigned threads = 1;            ///< connections, one client thread each
    /// Fan-out: each operation sends the request on `fanout` connections of
    /// one client thread at once and is done when `quorum` of them answered
    /// (poll); the rest are read before they count for a later operation.
    /// The cheapest sockets doing what a replicated commit does.
    unsigned fanout = 1, quorum = 1;
};

/// Request/response round trips; latency per request from send to reply
/// (with spec.fanout > 1, from the first send to the quorum-th reply; qd 1).
/// Bandwidth counts the larger of request and reply payload.
Measurement tcp_round_trip(const Endpoint& server, const RoundTripSpec& spec, const StopRule& stop,
                           Progress& progress, const std::string& label);

/// One sender streaming `message_bytes` messages into the sink.
/// Time runs from the first send until the sink confirms it read the last.
Measurement tcp_stream(const Endpoint& server, std::size_t message_bytes, const StopRule& stop,
                       Progress& progress, const std::string& label);

} // namespace rpmbench
