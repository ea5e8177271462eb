// rpm::Client, rpm::Connection and rpm::RemoteRegion: write into a server's
// persistent-memory region and know, when persist (or flush) returns, that
// the bytes are durable there.
//
// Semantics: write/atomic_write complete when the server (TCP) or the NIC
// (RDMA) has the bytes; they are NOT durable yet. flush(range) returns once
// every write to that range issued before it on this connection is durable,
// by the method the region needs. persist = write + flush (one request over
// tcp://; a vectored persist takes several slices at once). Many operations
// may be in flight; callbacks run on the connection's I/O thread and must
// not block. Buffers passed to an async call must stay valid until its
// callback runs.
#pragma once

#include <rpm/completion.hpp>
#include <rpm/flush.hpp>
#include <rpm/mr_pool.hpp>
#include <rpm/persistence.hpp>
#include <rpm/result.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace rpm {

using Callback = std::function<void(std::error_code)>;
using RecvCallback = std::function<void(std::error_code, std::size_t)>;

/// An I/O thread that several tcp:// connections share (make_io_group()).
class IoGroup;

/// A new I/O group. tcp:// connections made with it (ClientOptions::io_group)
/// handle their answers on its one thread, so a caller waiting for several
/// of them (a replicated commit) is woken once, not once per connection.
/// Their callbacks then all run on that thread: one must never wait for
/// another connection of the same group. rdma:// connections ignore it.
/// RETURN VALUE: the group; its thread ends once the last connection using
/// it and the last handle are gone. ERRORS: none here; a group whose event
/// loop could not be made fails each connect with errc::io_error.
std::shared_ptr<IoGroup> make_io_group();

struct ClientOptions {
    std::string client_id = "default";
    std::string secret;
    bool tls = false;                                  ///< tcp:// over TLS
    std::optional<std::filesystem::path> tls_ca;       ///< PEM CA to verify the server; none = no verification
    std::chrono::milliseconds timeout{10000};          ///< connect, handshake and synchronous calls
    /// tcp://: handle this connection's I/O on the group's shared thread;
    /// empty (default) = a thread of its own.
    std::shared_ptr<IoGroup> io_group;
    /// rdma://: how the connection's I/O thread waits for completions
    /// (include/rpm/completion.hpp; docs/rdma.md, "Completion modes").
    CompletionMode completion = CompletionMode::adaptive;
};

struct RegionOptions {
    /// Use this method instead of the server's decision (benchmarks, tests).
    std::optional<flush::Method> force_method;
    /// Allow a forced method that cannot guarantee durability for the region.
    bool unsafe = false;
    /// This opener's primary term, its fencing token (docs/replication.md,
    /// "Fencing"); 0 = none. The server keeps, durably, the highest term
    /// each region has accepted: an open with an older one fails with
    /// errc::fenced, and a newer one revokes every connection that opened
    /// the region with an older term (their operations fail with
    /// errc::fenced from then on).
    std::uint64_t term = 0;
};

/// One piece of a vectored persist: `data` is stored at `offset` of the region.
struct WriteSlice {
    std::uint64_t offset = 0;
    std::span<const std::byte> data;
};
/// The most slices one persist takes.
inline constexpr std::size_t kMaxPersistSlices = 256;

namespace detail {
class ConnectionState;
struct ConnectionAccess;
struct GrantedRegion;
}

/// A region the server granted. A cheap handle; valid while its Connection lives.
class RemoteRegion {
public:
    [[nodiscard]] const std::string& name() const noexcept;
    [[nodiscard]] std::uint64_t size() const noexcept;
    [[nodiscard]] flush::Method method() const noexcept;
    [[nodiscard]] flush::ServerPersist server_persist() const noexcept;
    [[nodiscard]] PersistenceDomain domain() const noexcept;
    [[nodiscard]] const std::string& reason() const noexcept;  ///< why this method

    // Synchronous forms: return once complete (or timed out: errc::io_error).
    std::error_code write(std::uint64_t offset, std::span<const std::byte> data);
    std::error_code read(std::uint64_t offset, std::span<std::byte> out);
    std::error_code atomic_write(std::uint64_t offset, std::uint64_t value);
    std::error_code flush(std::uint64_t offset, std::uint64_t length);
    std::error_code persist(std::uint64_t offset, std::span<const std::byte> data);
    /// Vectored persist: every slice stored, then all of them durable, as
    /// one request where the transport can (tcp://: one round trip for a
    /// log record and its commit word). Nothing is stored when a slice is
    /// out of range.
    /// RETURN VALUE: {} once every slice is durable.
    /// ERRORS: errc::invalid_argument (no slices, more than
    /// kMaxPersistSlices, a slice outside the region: nothing is sent);
    /// errc::bad_size (tcp://: the slices with their data exceed one
    /// frame, ServerOptions::max_payload by default 1 MiB + 4 KiB: nothing
    /// is sent; split it); errc::io_error (connection lost or timed out: durability unknown);
    /// the server's error otherwise.
    std::error_code persist(std::span<const WriteSlice> slices);

    // Asynchronous forms.
    void write(std::uint64_t offset, std::span<const std::byte> data, Callback done);
    void read(std::uint64_t offset, std::span<std::byte> out, Callback done);
    void atomic_write(std::uint64_t offset, std::uint64_t value, Callback done);
    void flush(std::uint64_t offset, std::uint64_t length, Callback done);
    void persist(std::uint64_t offset, std::span<const std::byte> data, Callback done);
    void persist(std::span<const WriteSlice> slices, Callback done);

    // Future forms.
    std::future<std::error_code> write_async(std::uint64_t offset, std::span<const std::byte> data);
    std::future<std::error_code> flush_async(std::uint64_t offset, std::uint64_t length);
    std::future<std::error_code> persist_async(std::uint64_t offset, std::span<const std::byte> data);
    std::future<std::error_code> persist_async(std::span<const WriteSlice> slices);

private:
    friend class Connection;
    RemoteRegion(std::shared_ptr<detail::ConnectionState> conn, const detail::GrantedRegion* g) noexcept
        : conn_(std::move(conn)), g_(g) {}
    std::shared_ptr<detail::ConnectionState> conn_;  ///< keeps g_ alive
    const detail::GrantedRegion* g_ = nullptr;
};

/// Application memory registered with a Connection for zero-copy transfers
/// (Connection::register_memory). A write, read or persist whose span lies
/// wholly inside it moves straight between it and the network: rdma://
/// posts the work requests on its memory registration instead of copying
/// through rpm's bounce buffers. tcp:// has nothing to register (the bytes
/// go through the socket either way) and simply works. The memory must stay
/// valid, and unchanged under a write, until the operation completes, as for
/// any span. The registration ends when the last handle goes and no
/// operation uses it any more.
class LocalMemory {
public:
    LocalMemory() = default;
    [[nodiscard]] std::span<std::byte> bytes() const noexcept { return mem_; }
    /// True when the transport registered it (rdma://), false for tcp://
    /// and for an empty handle.
    [[nodiscard]] bool registered() const noexcept { return handle_ != nullptr; }
    /// Let go of this handle (the registration ends once nothing uses it).
    void reset() noexcept {
        handle_.reset();
        mem_ = {};
    }

private:
    friend class Connection;
    LocalMemory(std::span<std::byte> mem, std::shared_ptr<void> handle) noexcept
        : mem_(mem), handle_(std::move(handle)) {}
    std::span<std::byte> mem_;
    std::shared_ptr<void> handle_;
};

/// How a connection's atomic writes (RemoteRegion::atomic_write) travel.
struct AtomicWriteStats {
    /// "native": IBTA ATOMIC WRITE work requests (rdma://, where the device
    /// reports the capability, e.g. rxe on Linux >= 6.2); "fenced_write": an
    /// 8-byte RDMA write, inline and fenced behind earlier reads (rdma://
    /// otherwise); "server": the server stores the 8 bytes (tcp://).
    std::string_view method;
    /// Atomic writes the device completed as IBV_WC_ATOMIC_WRITE: native
    /// ones that went on the wire (0 unless `method` is "native").
    std::uint64_t native_completed = 0;
};

/// One authenticated connection to a server.
class Connection {
public:
    /// Ask for a region by name.
    /// ERRORS: errc::invalid_argument (unknown region, or not granted to this
    /// client: the same answer, so names do not leak); errc::unsupported (a
    /// forced method the transport cannot do); errc::invalid_argument with
    /// detail "unsafe" when a forced method is unsafe and unsafe was not set;
    /// errc::fenced (opts.term is older than a term the region accepted);
    /// errc::unsupported (a term on a region the server has no place to
    /// keep a term for: ServerOptions::fence_dir).
    Result<RemoteRegion> open_region(std::string_view name, const RegionOptions& opts = {});

    /// Register `mem` for zero-copy writes and reads (LocalMemory).
    /// RETURN VALUE: the handle; spans inside `mem` skip rpm's copies while
    /// it lives (tcp://: a handle with registered() false).
    /// ERRORS: errc::invalid_argument (empty `mem`; rdma://: the device
    /// refuses it); rdma://: errc::io_error (the registration failed, e.g.
    /// RLIMIT_MEMLOCK, or the connection is closed).
    Result<LocalMemory> register_memory(std::span<std::byte> mem);

    std::error_code send(std::span<const std::byte> payload);
    void send(std::span<const std::byte> payload, Callback done);
    /// Receive one application message from the server into `out`.
    /// ERRORS: errc::bad_size when the message is larger than `out`.
    Result<std::size_t> recv(std::span<std::byte> out);
    void recv(std::span<std::byte> out, RecvCallback done);

    [[nodiscard]] const std::string& server_profile_json() const noexcept;
    [[nodiscard]] std::string_view transport() const noexcept;  ///< "tcp" or "rdma"
    /// RETURN VALUE: how this connection's atomic writes go, and how many
    /// went natively. ERRORS: none.
    [[nodiscard]] AtomicWriteStats atomic_write_stats() const noexcept;
    /// Close the connection: every pending operation fails with
    /// errc::io_error, and its callback has run when this returns (called
    /// from one of this connection's callbacks: as soon as that one
    /// returns, on the same thread). Operations issued later fail too.
    /// ERRORS: none.
    void close();

    Connection(Connection&&) noexcept;
    Connection& operator=(Connection&&) noexcept;
    ~Connection();

private:
    friend class Client;
    friend struct detail::ConnectionAccess;
    explicit Connection(std::shared_ptr<detail::ConnectionState> s) noexcept : s_(std::move(s)) {}
    std::shared_ptr<detail::ConnectionState> s_;
};

class Client {
public:
    explicit Client(ClientOptions opts = {}) : opts_(std::move(opts)) {}
    /// Connect and authenticate. uri: tcp://host:port or rdma://host:port.
    /// ERRORS: errc::invalid_argument (bad URI); errc::io_error (cannot
    /// connect, detail: the address); errc::permission_denied (authentication
    /// failed, either way round); errc::unsupported (version mismatch);
    /// errc::rdma_unavailable (rdma:// without a usable device).
    Result<Connection> connect(std::string_view uri) const;

private:
    ClientOptions opts_;
};

/// The process-wide pool of pinned (mlock'ed) socket read buffers that every
/// tcp:// connection of this process reads into, clients and server
/// sessions alike; made on first use (this call included) and kept until
/// exit. A connection that finds no free entry reads into a heap buffer,
/// counted as `none_now`. (rdma:// pools are per device: docs/rdma.md.)
/// RETURN VALUE: the pool's counters and levels; std::nullopt when the pool
/// could not be made (every connection then uses a heap buffer).
/// ERRORS: none.
std::optional<MrPoolStats> tcp_buffer_pool_stats();

} // namespace rpm
