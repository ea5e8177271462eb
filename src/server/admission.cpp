#include "server/admission.hpp"
#include "core/log.hpp"


namespace rpm::server {

Admission::Admission(const ServerOptions& o)
    : max_connections_(o.max_connections), max_per_peer_(o.max_unauthenticated_per_address), sink_(o.on_log) {}

std::optional<std::pair<Admission::Kind, std::string>> Admission::admit(const std::string& peer,
                                                                       std::size_t connections) {
    if (connections >= max_connections_)
        return std::pair{Kind::too_many, "refused a connection from " + peer + ": " + std::to_string(connections) +
                                             " are open, the limit is " + std::to_string(max_connections_) +
                                             " (ServerOptions::max_connections)"};
    if (peer.empty()) return std::nullopt;
    auto& n = handshaking_[peer];
    if (n >= max_per_peer_)
        return std::pair{Kind::too_many_from_peer,
                         "refused a connection from " + peer + ": " + std::to_string(n) +
                             " of its connections have not authenticated yet, the limit is " +
                             std::to_string(max_per_peer_) + " (ServerOptions::max_unauthenticated_per_address)"};
    ++n;
    return std::nullopt;
}

void Admission::handshake_over(const std::string& peer) noexcept {
    auto it = handshaking_.find(peer);
    if (it == handshaking_.end()) return;
    if (--it->second == 0) handshaking_.erase(it);  // the map holds only peers mid-handshake
}

void Admission::log(Kind kind, const std::string& line) {
    const auto k = static_cast<std::size_t>(kind);
    std::string out;
    {
        std::lock_guard lock(log_mu_);
        const auto now = std::chrono::steady_clock::now();
        if (last_line_[k] != std::chrono::steady_clock::time_point{} && now - last_line_[k] < std::chrono::seconds(1)) {
            ++unsaid_[k];
            return;
        }
        last_line_[k] = now;
        out = line;
        if (unsaid_[k] > 0) out += " (and " + std::to_string(unsaid_[k]) + " more like it in the last second)";
        unsaid_[k] = 0;
    }
    if (sink_) sink_(out);
    else rpm::detail::log(LogLevel::warning, "server", out);
}

} // namespace rpm::server
