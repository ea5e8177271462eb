// A TCP byte stream, plain or TLS, behind one small interface so the client
// and the server sessions are written once. Asio's handlers are type-erased
// into std::function here: the per-frame cost is noise next to a syscall.
#pragma once

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <vector>

namespace rpm::tcp {

namespace asio = boost::asio;
using asio::ip::tcp;
using IoHandler = std::function<void(const boost::system::error_code&, std::size_t)>;

class Stream {
public:
    explicit Stream(tcp::socket socket) : plain_(std::move(socket)) {}

    /// Switch to TLS (before any other I/O) and run its handshake.
    void start_tls(asio::ssl::context& ctx, asio::ssl::stream_base::handshake_type role,
                   std::function<void(const boost::system::error_code&)> done) {
        tls_ = std::make_unique<asio::ssl::stream<tcp::socket>>(std::move(plain_), ctx);
        tls_->async_handshake(role, std::move(done));
    }

    void read_some(std::span<std::byte> buf, IoHandler h) {
        auto b = asio::buffer(buf.data(), buf.size());
        if (tls_) tls_->async_read_some(b, std::move(h));
        else plain_.async_read_some(b, std::move(h));
    }

    void write_all(std::span<const std::byte> buf, IoHandler h) {
        auto b = asio::buffer(buf.data(), buf.size());
        if (tls_) asio::async_write(*tls_, b, std::move(h));
        else asio::async_write(plain_, b, std::move(h));
    }

    /// Gathered write: the buffer sequence is copied, the bytes it points to
    /// must live until the handler runs.
    void write_all(const std::vector<asio::const_buffer>& bufs, IoHandler h) {
        if (tls_) asio::async_write(*tls_, bufs, std::move(h));
        else asio::async_write(plain_, bufs, std::move(h));
    }

    tcp::socket& socket() noexcept { return tls_ ? tls_->next_layer() : plain_; }

    void close() noexcept {
        boost::system::error_code ec;
        socket().shutdown(tcp::socket::shutdown_both, ec);
        socket().close(ec);
    }

private:
    tcp::socket plain_;
    std::unique_ptr<asio::ssl::stream<tcp::socket>> tls_;
};

/// errc for a socket error, for callbacks that only carry an error_code.
std::error_code io_error_code() noexcept;

} // namespace rpm::tcp
