// A transport's server side: accepts connections, runs the handshake and
// the requests against Service. One per listen URI.
#pragma once

#include <rpm/result.hpp>

#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace rpm::server {

class Service;

class Listener {
public:
    virtual ~Listener() = default;
    [[nodiscard]] virtual std::uint16_t port() const noexcept = 0;
    /// Stop accepting and close every session; returns when no handler runs.
    virtual void stop() noexcept = 0;
    /// Send an application message to one of this listener's sessions.
    /// ERRORS: errc::invalid_argument when the session is not (or no longer) here.
    virtual Result<void> send(std::uint64_t session, std::span<const std::byte> payload) = 0;
};

/// ERRORS: errc::io_error when the address cannot be bound (detail: address, reason).
Result<std::unique_ptr<Listener>> listen_tcp(Service& service, const std::string& host, std::uint16_t port);
/// ERRORS: errc::rdma_unavailable (no device / rdma_cm cannot bind the address).
Result<std::unique_ptr<Listener>> listen_rdma(Service& service, const std::string& host, std::uint16_t port);

} // namespace rpm::server
