// Blocking-socket helpers for the TCP baselines.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace rpmbench::sock {

/// Connect (TCP_NODELAY on). Returns -1 and sets `error` on failure.
int connect_to(const std::string& host, std::uint16_t port, std::string& error);
/// Bind and listen. Returns -1 and sets `error`; `bound` gets the port.
int listen_on(const std::string& host, std::uint16_t port, std::uint16_t& bound, std::string& error);
void set_nodelay(int fd) noexcept;
/// Whole buffer or false (peer gone, error).
bool send_all(int fd, std::span<const std::byte> buf) noexcept;
bool recv_all(int fd, std::span<std::byte> buf) noexcept;

} // namespace rpmbench::sock
