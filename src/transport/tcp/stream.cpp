// Stream: plain sockets with MSG_DONTWAIT / blocking calls, TLS through
// OpenSSL on a non-blocking socket. OpenSSL writes with write(2), which
// raises SIGPIPE on a closed connection: TLS I/O therefore runs only on
// rpm's own I/O threads, which block SIGPIPE (block_sigpipe()).
#include "transport/tcp/stream.hpp"

#include <rpm/error.hpp>

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <vector>
#include <cerrno>
#include <climits>
#include <cstring>

namespace rpm::tcp {
namespace {

using Clock = std::chrono::steady_clock;

std::string errno_text(int e) { return std::strerror(e); }

std::string openssl_text() {
    const unsigned long e = ERR_get_error();
    ERR_clear_error();
    if (e == 0) return "unknown reason";
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    return buf;
}

int ms_until(Deadline d) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(d - Clock::now()).count();
    if (left <= 0) return 0;
    return static_cast<int>(std::min<long long>(left + 1, INT_MAX));
}

void set_blocking(int fd, bool blocking) {
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags >= 0) (void)::fcntl(fd, F_SETFL, blocking ? flags & ~O_NONBLOCK : flags | O_NONBLOCK);
}

IoResult timed_out() { return {IoResult::timed_out, 0, "timed out"}; }

// Connect one address by `deadline`; the fd (blocking, TCP_NODELAY) or -1 with `why`.
int connect_one(const addrinfo& ai, Deadline deadline, std::string& why) {
    int fd = ::socket(ai.ai_family, ai.ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai.ai_protocol);
    if (fd < 0) return why = errno_text(errno), -1;
    int rc = ::connect(fd, ai.ai_addr, ai.ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
        pollfd p{fd, POLLOUT, 0};
        do rc = ::poll(&p, 1, ms_until(deadline));
        while (rc < 0 && errno == EINTR);
        if (rc == 0) return ::close(fd), why = "timed out", -1;
        int err = 0;
        socklen_t len = sizeof err;
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err != 0) return ::close(fd), why = errno_text(err), -1;
    } else if (rc != 0) {
        return why = errno_text(errno), ::close(fd), -1;
    }
    set_blocking(fd, true);
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

} // namespace

void block_sigpipe() noexcept {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

void TlsContext::Free::operator()(SSL_CTX* c) const noexcept { SSL_CTX_free(c); }

Result<TlsContext> TlsContext::client(const std::optional<std::filesystem::path>& ca) {
    TlsContext t;
    t.ctx_.reset(SSL_CTX_new(TLS_client_method()));
    if (!t.ctx_) return Error(errc::io_error, "TLS: " + openssl_text());
    if (ca) {
        if (SSL_CTX_load_verify_locations(t.get(), ca->c_str(), nullptr) != 1)
            return Error(errc::io_error, "TLS CA " + ca->string() + ": " + openssl_text());
        SSL_CTX_set_verify(t.get(), SSL_VERIFY_PEER, nullptr);
    } else {
        SSL_CTX_set_verify(t.get(), SSL_VERIFY_NONE, nullptr);
    }
    return t;
}

Result<TlsContext> TlsContext::server(const std::filesystem::path& certificate, const std::filesystem::path& key) {
    TlsContext t;
    t.ctx_.reset(SSL_CTX_new(TLS_server_method()));
    if (!t.ctx_) return Error(errc::bad_config, "TLS: " + openssl_text());
    if (SSL_CTX_use_certificate_chain_file(t.get(), certificate.c_str()) != 1)
        return Error(errc::bad_config, "TLS certificate " + certificate.string() + ": " + openssl_text());
    if (SSL_CTX_use_PrivateKey_file(t.get(), key.c_str(), SSL_FILETYPE_PEM) != 1)
        return Error(errc::bad_config, "TLS private key " + key.string() + ": " + openssl_text());
    return t;
}

Stream::~Stream() { reset(); }

Stream::Stream(Stream&& o) noexcept
    : fd_(std::exchange(o.fd_, -1)), ssl_(std::exchange(o.ssl_, nullptr)), want_write_(o.want_write_),
      rcv_timeout_(o.rcv_timeout_) {}

Stream& Stream::operator=(Stream&& o) noexcept {
    if (this != &o) {
        reset();
        fd_ = std::exchange(o.fd_, -1);
        ssl_ = std::exchange(o.ssl_, nullptr);
        want_write_ = o.want_write_;
        rcv_timeout_ = o.rcv_timeout_;
    }
    return *this;
}

void Stream::reset() noexcept {
    if (ssl_) SSL_free(ssl_);
    ssl_ = nullptr;
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
}

Result<Stream> Stream::connect(const std::string& host, std::uint16_t port, Deadline deadline) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    const std::string where = host + ":" + std::to_string(port);
    if (int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res); rc != 0)
        return Error(errc::io_error, "cannot resolve " + host + ": " + ::gai_strerror(rc));
    std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> hold(res, &::freeaddrinfo);
    std::string why = "no address";
    for (const addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
        if (int fd = connect_one(*ai, deadline, why); fd >= 0) return Stream(fd);
        if (why == "timed out") return Error(errc::io_error, "connecting to " + where + " timed out");
    }
    return Error(errc::io_error, "cannot connect to " + where + ": " + why);
}

Result<void> Stream::start_tls_client(const TlsContext& ctx, Deadline deadline) {
    set_blocking(fd_, false);
    ssl_ = SSL_new(ctx.get());
    if (!ssl_ || SSL_set_fd(ssl_, fd_) != 1) return Error(errc::io_error, "TLS: " + openssl_text());
    SSL_set_mode(ssl_, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    for (;;) {
        const int rc = SSL_connect(ssl_);
        if (rc == 1) return {};
        const int e = SSL_get_error(ssl_, rc);
        IoResult r;
        if ((e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) && wait_ready(e == SSL_ERROR_WANT_WRITE, deadline, r))
            continue;
        std::string why = r.why.empty() ? openssl_text() : r.why;
        if (const long v = SSL_get_verify_result(ssl_); v != X509_V_OK)
            why = std::string("certificate: ") + X509_verify_cert_error_string(v);
        return Error(errc::io_error, "TLS handshake failed: " + why);
    }
}

Result<void> Stream::start_tls_server(const TlsContext& ctx) {
    set_blocking(fd_, false);
    ssl_ = SSL_new(ctx.get());
    if (!ssl_ || SSL_set_fd(ssl_, fd_) != 1) return Error(errc::io_error, "TLS: " + openssl_text());
    SSL_set_mode(ssl_, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    SSL_set_accept_state(ssl_);
    return {};
}

IoResult Stream::accept_tls_step() {
    const int rc = SSL_do_handshake(ssl_);
    if (rc == 1) return IoResult::done(0);
    return tls_result(rc, "TLS handshake");
}

IoResult Stream::tls_result(int ret, const char* what) {
    const int e = SSL_get_error(ssl_, ret);
    want_write_ = false;
    switch (e) {
    case SSL_ERROR_WANT_READ: return {IoResult::would_block, 0, {}};
    case SSL_ERROR_WANT_WRITE: want_write_ = true; return {IoResult::would_block, 0, {}};
    case SSL_ERROR_ZERO_RETURN: return {IoResult::closed, 0, "the peer closed the connection"};
    case SSL_ERROR_SYSCALL:
        if (errno == 0 || errno == ECONNRESET || errno == EPIPE) {
            ERR_clear_error();
            return {IoResult::closed, 0, "the peer closed the connection"};
        }
        return {IoResult::error, 0, std::string(what) + ": " + errno_text(errno)};
    default: return {IoResult::error, 0, std::string(what) + ": " + openssl_text()};
    }
}

IoResult Stream::read_some(std::span<std::byte> buf) {
    if (ssl_) {
        std::size_t n = 0;
        errno = 0;
        const int rc = SSL_read_ex(ssl_, buf.data(), buf.size(), &n);
        return rc == 1 ? IoResult::done(n) : tls_result(rc, "TLS read");
    }
    for (;;) {
        const ssize_t n = ::recv(fd_, buf.data(), buf.size(), MSG_DONTWAIT);
        if (n > 0) return IoResult::done(static_cast<std::size_t>(n));
        if (n == 0) return {IoResult::closed, 0, "the peer closed the connection"};
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return {IoResult::would_block, 0, {}};
        return {IoResult::error, 0, errno_text(errno)};
    }
}

IoResult Stream::write_some(std::span<const iovec> bufs) {
    if (ssl_) {
        // OpenSSL has no gathered write; one buffer per call (the caller loops).
        std::size_t n = 0;
        errno = 0;
        const int rc = SSL_write_ex(ssl_, bufs[0].iov_base, bufs[0].iov_len, &n);
        return rc == 1 ? IoResult::done(n) : tls_result(rc, "TLS write");
    }
    msghdr m{};
    m.msg_iov = const_cast<iovec*>(bufs.data());
    m.msg_iovlen = std::min<std::size_t>(bufs.size(), IOV_MAX);
    for (;;) {
        const ssize_t n = ::sendmsg(fd_, &m, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n >= 0) return IoResult::done(static_cast<std::size_t>(n));
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return {IoResult::would_block, 0, {}};
        if (errno == EPIPE || errno == ECONNRESET) return {IoResult::closed, 0, "the peer closed the connection"};
        return {IoResult::error, 0, errno_text(errno)};
    }
}

bool Stream::wait_ready(bool for_write, Deadline deadline, IoResult& r) const {
    pollfd p{fd_, static_cast<short>(for_write ? POLLOUT : POLLIN), 0};
    for (;;) {
        const int ms = ms_until(deadline);
        if (ms == 0) return r = timed_out(), false;
        const int rc = ::poll(&p, 1, ms);
        if (rc > 0) return true;
        if (rc == 0) return r = timed_out(), false;
        if (errno != EINTR) return r = {IoResult::error, 0, errno_text(errno)}, false;
    }
}

IoResult Stream::read_wait(std::span<std::byte> buf, Deadline deadline) {
    if (!ssl_) {
        // One blocking recv, as the plainest client makes, while the socket's
        // receive timeout is within the time left; poll + recv after that.
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
        if (rcv_timeout_.count() == 0 && left.count() >= 2) {
            rcv_timeout_ = left / 2;
            timeval tv{static_cast<time_t>(rcv_timeout_.count() / 1000),
                       static_cast<suseconds_t>(rcv_timeout_.count() % 1000 * 1000)};
            ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        }
        while (rcv_timeout_.count() > 0 && deadline - Clock::now() >= rcv_timeout_) {
            const ssize_t n = ::recv(fd_, buf.data(), buf.size(), 0);
            if (n > 0) return IoResult::done(static_cast<std::size_t>(n));
            if (n == 0) return {IoResult::closed, 0, "the peer closed the connection"};
            if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK) return {IoResult::error, 0, errno_text(errno)};
        }
    }
    for (;;) {
        IoResult r = read_some(buf);
        if (r.status != IoResult::would_block) return r;
        if (!wait_ready(want_write_, deadline, r)) return r;
    }
}

IoResult Stream::write_all_wait(std::span<const iovec> bufs, Deadline deadline) {
    // A copy to advance over what was sent; a synchronous call has a few
    // buffers (a frame head and the caller's data), so no allocation then.
    std::array<iovec, 8> small{};
    std::vector<iovec> large;
    std::span<iovec> rest;
    if (bufs.size() <= small.size()) {
        std::copy(bufs.begin(), bufs.end(), small.begin());
        rest = std::span<iovec>(small).first(bufs.size());
    } else {
        large.assign(bufs.begin(), bufs.end());
        rest = large;
    }
    std::size_t total = 0, i = 0;
    while (i < rest.size()) {
        IoResult r = write_some(rest.subspan(i));
        if (r.status == IoResult::would_block) {
            if (!wait_ready(!ssl_ || want_write_, deadline, r)) return r;
            continue;
        }
        if (r.status != IoResult::ok) return r;
        total += r.n;
        std::size_t n = r.n;
        while (i < rest.size() && n >= rest[i].iov_len) n -= rest[i].iov_len, ++i;
        if (i < rest.size()) {
            rest[i].iov_base = static_cast<std::byte*>(rest[i].iov_base) + n;
            rest[i].iov_len -= n;
        }
    }
    return IoResult::done(total);
}

void Stream::shutdown() noexcept {
    if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
}

} // namespace rpm::tcp
