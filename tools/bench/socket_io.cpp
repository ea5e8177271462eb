#include "socket_io.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace rpmbench::sock {
namespace {

struct AddrInfo {
    addrinfo* list = nullptr;
    ~AddrInfo() { if (list) freeaddrinfo(list); }
};

bool resolve(const std::string& host, std::uint16_t port, bool passive, AddrInfo& out, std::string& error) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = passive ? AI_PASSIVE : 0;
    const std::string h = host.size() > 1 && host.front() == '[' ? host.substr(1, host.size() - 2) : host;
    if (int rc = getaddrinfo(h.c_str(), std::to_string(port).c_str(), &hints, &out.list); rc != 0) {
        error = "cannot resolve " + host + ": " + gai_strerror(rc);
        return false;
    }
    return true;
}

} // namespace

void set_nodelay(int fd) noexcept {
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

int connect_to(const std::string& host, std::uint16_t port, std::string& error) {
    AddrInfo ai;
    if (!resolve(host, port, false, ai, error)) return -1;
    for (auto* a = ai.list; a; a = a->ai_next) {
        int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) continue;
        if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
            set_nodelay(fd);
            return fd;
        }
        error = "cannot connect to " + host + ":" + std::to_string(port) + ": " + std::strerror(errno);
        ::close(fd);
    }
    return -1;
}

int listen_on(const std::string& host, std::uint16_t port, std::uint16_t& bound, std::string& error) {
    AddrInfo ai;
    if (!resolve(host, port, true, ai, error)) return -1;
    for (auto* a = ai.list; a; a = a->ai_next) {
        int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) continue;
        int one = 1;
        ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        sockaddr_storage ss{};
        socklen_t len = sizeof ss;
        if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 64) == 0 &&
            ::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) == 0) {
            const auto* sin = reinterpret_cast<const sockaddr_in*>(&ss);  // port at the same offset for v6
            bound = ntohs(sin->sin_port);
            return fd;
        }
        error = "cannot listen on " + host + ":" + std::to_string(port) + ": " + std::strerror(errno);
        ::close(fd);
    }
    return -1;
}

bool send_all(int fd, std::span<const std::byte> buf) noexcept {
    while (!buf.empty()) {
        const ssize_t n = ::send(fd, buf.data(), buf.size(), MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        buf = buf.subspan(static_cast<std::size_t>(n));
    }
    return true;
}

bool recv_all(int fd, std::span<std::byte> buf) noexcept {
    while (!buf.empty()) {
        const ssize_t n = ::recv(fd, buf.data(), buf.size(), MSG_WAITALL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        buf = buf.subspan(static_cast<std::size_t>(n));
    }
    return true;
}

} // namespace rpmbench::sock
