// Who may connect to a listener (tcp://, rdma://), under ServerOptions'
// connection limits: at most max_connections at once, and at most
// max_unauthenticated_per_address still in their handshake from one peer
// address (the handshake timeout itself is the transport's). Refusals and
// timeouts are told through ServerOptions::on_log, at most one line per
// second of each kind, so a flood cannot turn into a flood of log lines.
#pragma once

#include <rpm/server.hpp>

#include <array>
#include <chrono>
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace rpm::server {

class Admission {
public:
    enum class Kind { too_many, too_many_from_peer, handshake_timeout, accept_failed };

    explicit Admission(const ServerOptions& o);

    /// A connection from `peer` arrives while `connections` are open: nullopt
    /// when admitted (it now counts as in its handshake), else why not. An
    /// empty `peer` (a transport that cannot tell the address before it
    /// accepts: rdma://) is held to max_connections only.
    /// Not thread-safe: the listener calls it under its own lock.
    std::optional<std::pair<Kind, std::string>> admit(const std::string& peer, std::size_t connections);
    /// The connection from `peer` authenticated, or closed before it did.
    /// Not thread-safe (the listener's lock).
    void handshake_over(const std::string& peer) noexcept;

    /// Thread-safe; rate-limited per kind.
    void log(Kind kind, const std::string& line);

private:
    std::size_t max_connections_;
    std::size_t max_per_peer_;
    std::function<void(std::string_view)> sink_;
    std::unordered_map<std::string, std::size_t> handshaking_;
    std::mutex log_mu_;
    std::array<std::chrono::steady_clock::time_point, 4> last_line_{};
    std::array<std::size_t, 4> unsaid_{};
};

} // namespace rpm::server
