// Blocking TCP (net.hpp); connecting reuses rpm-bench's helper.
#include "net.hpp"

#include "../socket_io.hpp"

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

namespace kvbench {

bool parse_address(std::string_view s, Address& out) {
    const auto colon = s.rfind(':');
    if (colon == std::string_view::npos || colon == 0) return false;
    const auto port = s.substr(colon + 1);
    unsigned v = 0;
    auto [p, ec] = std::from_chars(port.data(), port.data() + port.size(), v);
    if (ec != std::errc() || p != port.data() + port.size() || v == 0 || v > 65535) return false;
    out.host.assign(s.substr(0, colon));
    out.port = static_cast<std::uint16_t>(v);
    return true;
}

Socket::~Socket() {
    if (fd_ >= 0) ::close(fd_);
}

Socket& Socket::operator=(Socket&& o) noexcept {
    if (this != &o) {
        if (fd_ >= 0) ::close(fd_);
        fd_ = o.fd_;
        o.fd_ = -1;
    }
    return *this;
}

Socket Socket::connect(const Address& a, std::chrono::milliseconds timeout, std::string& error) {
    const int fd = rpmbench::sock::connect_to(a.host, a.port, error);  // TCP_NODELAY on
    if (fd < 0) return {};
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
    tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    return Socket(fd);
}

bool Socket::send(std::string_view bytes, std::string& error) {
    while (!bytes.empty()) {
        const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return error = std::string("send failed: ") + std::strerror(errno), false;
        bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

bool Socket::recv_some(std::string& in, std::string& error) {
    char buf[16384];
    for (;;) {
        const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
        if (n > 0) return in.append(buf, static_cast<std::size_t>(n)), true;
        if (n < 0 && errno == EINTR) continue;
        if (n == 0) error = "the server closed the connection";
        else if (errno == EAGAIN || errno == EWOULDBLOCK) error = "no reply within the timeout";
        else error = std::string("receive failed: ") + std::strerror(errno);
        return false;
    }
}

} // namespace kvbench
