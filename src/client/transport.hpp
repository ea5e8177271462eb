// The client side of a transport (eRPC style: every transport behind one
// interface). A Transport is created already connected and authenticated
// by its factory; Connection/RemoteRegion (src/client/) sit on top.
#pragma once

#include <rpm/client.hpp>
#include <rpm/result.hpp>

#include "core/function_ref.hpp"
#include "protocol/protocol.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace rpm::client {

/// An operation's completion: the public callback itself, so a caller's
/// callback reaches the transport without a wrapper (and an allocation).
using Done = Callback;
/// What a synchronous call runs to post its operation (Transport::call).
using Start = FunctionRef<void(Done)>;
using RecvDone = RecvCallback;

/// What an operation completes with: success for an empty code, else the
/// code with `detail` (built only then: success allocates nothing).
inline Result<void> status(std::error_code ec, std::string detail = {}) {
    if (!ec) return {};
    return Error(ec, std::move(detail));
}
/// `e` as an operation's result: success when its code is empty.
inline Result<void> status(Error e) {
    if (!e.code()) return {};
    return e;
}

/// The callbacks of one call made of several operations (a persist's
/// writes and flush, a large write's chunks): each part() records a failure,
/// the first wins; last() runs `done` with it, or with its own status. The
/// parts complete in posting order, so last() runs after the others.
class FirstError {
public:
    explicit FirstError(Done done) : s_(std::make_shared<State>(State{{}, std::move(done)})) {}
    [[nodiscard]] Done part() const {
        return [s = s_](Result<void> r) {
            if (!r && s->first) s->first = std::move(r);
        };
    }
    [[nodiscard]] Done last() const {
        return [s = s_](Result<void> r) { s->done(s->first ? std::move(r) : std::move(s->first)); };
    }

private:
    struct State {
        Result<void> first;  ///< success until a part fails
        Done done;
    };
    std::shared_ptr<State> s_;
};

/// A thread's hold on a transport's completions (Transport::hold_polling):
/// while it lives, the transport's own I/O thread stands aside and the
/// holder runs the completion work, and every callback, itself.
class PollHold {
public:
    virtual ~PollHold() = default;
    /// One round of completion work without waiting: the completions there
    /// are, their callbacks, and (when `events`) the connection's events.
    /// RETURN VALUE: how many completions and callbacks it handled.
    virtual std::size_t poll(bool events) = 0;
    /// Arm the completion channel and add the descriptors that become
    /// readable once there is work (completions, connection events, a
    /// wake-up for the holder) to `fds`, for the holder's poll().
    virtual void fds(std::vector<int>& out) = 0;
};

/// How every transport words a failed operation's detail, so that a program
/// reads one form whatever the scheme: "<op> over <where>: <what>", where
/// `where` is the connection's URI (tcp://host:port, rdma://host:port).
/// The connection failed (or was closed) for `why`; a reason that already
/// begins with `where` is not given it twice.
Error connection_failed(std::error_code ec, std::string_view op, std::string_view where, std::string_view why);
/// The server answered the operation with `ec`; `message` its text, if any.
Error refused_by_server(std::error_code ec, std::string_view op, std::string_view where, std::string_view message = {});
/// Anything else about the operation: "<op> over <where>: <what>".
Error operation_error(std::error_code ec, std::string_view op, std::string_view where, std::string_view what);

/// recv's errc::bad_size: a message of `size` bytes did not fit the buffer
/// of `room` bytes (0: not known here) and was dropped.
Error message_dropped(std::string_view where, std::size_t size, std::size_t room);

/// The error of a synchronous call that ran past ClientOptions::timeout
/// (its connection is then closed).
Error timed_out(Scheme scheme, std::chrono::milliseconds timeout);

class Transport {
public:
    virtual ~Transport() = default;
    /// Synchronous: ask for a region (see Connection::open_region).
    virtual Result<proto::RegionGrant> open_region(const proto::OpenRegion& req) = 0;
    // Asynchronous operations; `done` runs exactly once, on the I/O thread.
    // Ranges are checked by the caller against grant.size before posting.
    virtual void write(const proto::RegionGrant& g, std::uint64_t offset,
                       std::span<const std::byte> data, Done done) = 0;
    virtual void read(const proto::RegionGrant& g, std::uint64_t offset, std::span<std::byte> out,
                      Done done) = 0;
    virtual void atomic_write(const proto::RegionGrant& g, std::uint64_t offset, std::uint64_t value,
                              Done done) = 0;
    /// Make writes to `ranges` issued before this call durable, by g.method.
    virtual void flush(const proto::RegionGrant& g, std::span<const proto::Range> ranges, Done done) = 0;
    /// Store each slice, then make them durable by g.method; the caller
    /// hears the first error. tcp:// sends one persist request; rdma://
    /// posts a write per slice and one flush of their ranges, together
    /// (ClientConn::persist).
    virtual void persist(const proto::RegionGrant& g, std::span<const proto::Slice> slices, Done done) = 0;
    /// Run the one operation `start` posts and wait for it, up to `timeout`.
    /// A timeout closes the connection (the operation's state is unknown,
    /// and no late completion may touch the caller's buffers) and returns
    /// errc::io_error. The default waits for the completion from the I/O
    /// thread; a transport may run the operation on the calling thread.
    /// `start` is called once, during the call.
    virtual Result<void> call(Start start, std::chrono::milliseconds timeout);
    /// A synchronous read or write: as call() with a start that posts it
    /// (the default). A transport may run it without a callback
    /// (rdma://: ClientConn::transfer_now). Same RETURN VALUE and timeout.
    virtual Result<void> read_now(const proto::RegionGrant& g, std::uint64_t offset, std::span<std::byte> out,
                                  std::chrono::milliseconds timeout);
    virtual Result<void> write_now(const proto::RegionGrant& g, std::uint64_t offset,
                                   std::span<const std::byte> data, std::chrono::milliseconds timeout);
    /// Register application memory for zero-copy writes and reads (see
    /// Connection::register_memory). RETURN VALUE: a handle that keeps the
    /// registration; null when the transport has nothing to register (the
    /// default: tcp:// copies into its socket anyway).
    virtual Result<std::shared_ptr<void>> register_memory(std::span<std::byte> mem);
    virtual void send(std::span<const std::byte> payload, Done done) = 0;
    virtual void recv(std::span<std::byte> out, RecvDone done) = 0;
    [[nodiscard]] virtual const std::string& profile_json() const noexcept = 0;
    /// The scheme it speaks (Connection::transport).
    [[nodiscard]] virtual Scheme scheme() const noexcept = 0;
    /// Take over polling this transport's completions on the calling thread
    /// (the Replicator's committing thread does, for its rdma:// members).
    /// RETURN VALUE: the hold, or null when the transport has no such mode
    /// (tcp://: its I/O group does that) or another thread holds it.
    virtual std::unique_ptr<PollHold> hold_polling() { return nullptr; }
    /// How atomic writes travel (Connection::atomic_write_stats); the
    /// default is the server's store, tcp://'s way.
    [[nodiscard]] virtual AtomicWriteStats atomic_write_stats() const noexcept {
        return {AtomicWriteKind::server, 0};
    }
    /// Close; every pending operation completes with an error, and its
    /// callback has run when this returns, unless this is called from one
    /// of the connection's own callbacks: then they run as soon as that
    /// callback returns, on its thread.
    virtual void close() noexcept = 0;
};

/// Shared client half of the handshake: answer a Hello, check a Welcome.
struct HandshakeState {
    proto::Hello hello;
    std::array<std::uint8_t, proto::kNonceSize> client_nonce{};
};
/// ERRORS: errc::unsupported when no common protocol version exists.
Result<proto::Auth> answer_hello(const proto::Hello& hello, const ClientOptions& opts, HandshakeState& st);
/// ERRORS: errc::auth_failed when the server's proof is wrong.
Result<void> check_welcome(const proto::Welcome& w, const ClientOptions& opts, const HandshakeState& st);

Result<std::unique_ptr<Transport>> connect_tcp(const std::string& host, std::uint16_t port,
                                               const ClientOptions& opts);
Result<std::unique_ptr<Transport>> connect_rdma(const std::string& host, std::uint16_t port,
                                                const ClientOptions& opts);

} // namespace rpm::client
