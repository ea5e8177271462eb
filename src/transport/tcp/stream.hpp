// A TCP byte stream, plain or TLS (OpenSSL), behind one small interface so
// the client and the server sessions are written once.
//
// Two ways to use it: non-blocking (an EventLoop said the socket is ready;
// would_block otherwise), and blocking with a deadline (the client's
// synchronous calls, which drive the socket from the caller's thread). A
// plain socket stays in blocking mode and the non-blocking calls pass
// MSG_DONTWAIT, so a blocking receive is one recv(), as in the plainest
// client; a TLS socket is non-blocking (OpenSSL reads it itself) and its
// blocking calls wait in poll().
#pragma once

#include <rpm/result.hpp>

#include <sys/uio.h>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>

using SSL_CTX = struct ssl_ctx_st;
using SSL = struct ssl_st;

namespace rpm::tcp {

using Deadline = std::chrono::steady_clock::time_point;

/// For rpm's own I/O threads, at their start: OpenSSL writes with write(2),
/// which raises SIGPIPE on a closed connection, so TLS I/O runs only on
/// threads that block it.
void block_sigpipe() noexcept;

/// An OpenSSL context (client: optional CA to verify the server; server:
/// certificate chain and key).
class TlsContext {
public:
    /// ERRORS: errc::io_error naming the CA file and OpenSSL's reason.
    static Result<TlsContext> client(const std::optional<std::filesystem::path>& ca);
    /// ERRORS: errc::bad_config naming the file and OpenSSL's reason.
    static Result<TlsContext> server(const std::filesystem::path& certificate, const std::filesystem::path& key);
    [[nodiscard]] SSL_CTX* get() const noexcept { return ctx_.get(); }

private:
    struct Free {
        void operator()(SSL_CTX* c) const noexcept;
    };
    std::unique_ptr<SSL_CTX, Free> ctx_;
};

struct IoResult {
    enum Status { ok, would_block, closed, timed_out, error };
    Status status = ok;
    std::size_t n = 0;   ///< bytes moved when ok
    std::string why;     ///< closed / error: for people
    static IoResult done(std::size_t n) { return {ok, n, {}}; }
};

class Stream {
public:
    Stream() = default;
    explicit Stream(int fd) noexcept : fd_(fd) {}
    ~Stream();
    Stream(Stream&& o) noexcept;
    Stream& operator=(Stream&& o) noexcept;

    /// Resolve, connect (TCP_NODELAY) by `deadline`.
    /// ERRORS: errc::io_error with the address and the reason.
    static Result<Stream> connect(const std::string& host, std::uint16_t port, Deadline deadline);

    [[nodiscard]] int fd() const noexcept { return fd_; }
    [[nodiscard]] bool is_tls() const noexcept { return ssl_ != nullptr; }

    /// Client side: wrap in TLS and handshake by `deadline`.
    /// ERRORS: errc::io_error "TLS handshake failed: ..." (an untrusted certificate among them).
    Result<void> start_tls_client(const TlsContext& ctx, Deadline deadline);
    /// Server side: wrap in TLS; then accept_tls_step() until done.
    Result<void> start_tls_server(const TlsContext& ctx);
    /// One non-blocking step of the server handshake: ok (done),
    /// would_block (call again when the socket is ready; wants_write() says
    /// for which), error.
    IoResult accept_tls_step();
    /// TLS only: the last would_block waits for the socket to be writable.
    [[nodiscard]] bool wants_write() const noexcept { return want_write_; }

    // Non-blocking.
    IoResult read_some(std::span<std::byte> buf);
    IoResult write_some(std::span<const iovec> bufs);
    // Blocking until `deadline` (timed_out when it passes).
    IoResult read_wait(std::span<std::byte> buf, Deadline deadline);
    IoResult write_all_wait(std::span<const iovec> bufs, Deadline deadline);

    /// Wake anyone blocked on the socket and refuse further I/O (the fd stays
    /// open until destruction, so no other thread's call hits a reused fd).
    void shutdown() noexcept;

private:
    IoResult tls_result(int ret, const char* what);
    bool wait_ready(bool for_write, Deadline deadline, IoResult& r) const;
    void reset() noexcept;

    int fd_ = -1;
    SSL* ssl_ = nullptr;
    bool want_write_ = false;
    std::chrono::milliseconds rcv_timeout_{0};  ///< SO_RCVTIMEO set on a plain socket, 0 = none
};

} // namespace rpm::tcp
