// The client's side of an rdma:// connection's handshake: the server's
// Hello, this side's Authenticate, the server's Welcome, and the promise
// connect() waits on. Its own object so that the frames' order and the
// outcome being set once live in one place; the connection calls it under
// its mu_ (the I/O thread handles the frames, connect() waits).
#pragma once

#include "client/transport.hpp"
#include "protocol/protocol.hpp"

#include <rpm/result.hpp>

#include <chrono>
#include <future>
#include <span>
#include <string>

namespace rpm::rdma {

class Handshake {
public:
    /// The connection is established: the server's Hello comes next.
    void expect_hello() noexcept { stage_ = Stage::awaiting_hello; }
    /// The answer to the server's Hello. ERRORS: errc::io_error naming
    /// `where` (a second Hello, a bad one); answer_hello's errors.
    /// `failed`: true when the connection must fail with the error (a
    /// protocol violation), false when only the handshake does.
    Result<proto::Auth> on_hello(std::span<const std::byte> body, const ClientOptions& opts, const std::string& where,
                                 bool& failed);
    /// The reply to Authenticate: a Welcome whose proof checks out.
    Result<void> on_welcome(const proto::Header& h, std::span<const std::byte> body, const ClientOptions& opts);
    /// The handshake's outcome for connect(); only the first counts.
    void settle(Result<void> r);
    /// Wait for the outcome up to `timeout`. ERRORS: errc::io_error on
    /// timeout, or the handshake's error.
    Result<void> await(std::chrono::milliseconds timeout, const std::string& where);
    /// The server's profile (JSON), set by its Welcome before settle():
    /// read only after await() succeeded, so no lock.
    [[nodiscard]] const std::string& profile() const noexcept { return profile_; }

private:
    enum class Stage { connecting, awaiting_hello, awaiting_welcome, ready };
    Stage stage_ = Stage::connecting;
    client::HandshakeState state_;
    std::string profile_;
    std::promise<Result<void>> ready_;
    bool ready_set_ = false;
};

} // namespace rpm::rdma
