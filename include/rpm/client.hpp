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
//
// Errors, as the calls below list them. Every call reports one type: a
// synchronous one returns rpm::Result<void> (or Result<T>), a callback gets
// one, a future holds one; a failure is an rpm::Error: its code an rpm::errc
// (include/rpm/error.hpp), its detail saying which operation, region and
// range, and for a failed connection why it failed. Success costs no
// allocation: an empty Result<void> carries no text.
//   - Arguments the client refuses (errc::out_of_range, errc::misaligned,
//     errc::invalid_argument, errc::bad_size) send nothing: the region is untouched and the connection goes on.
//   - The server's refusal or failure arrives as the errc it answered, the
//     detail naming the operation (open_region: with the server's own text).
//   - errc::io_error, mostly: the connection failed: lost, closed, a bad
//     frame or a failed work request, or a synchronous call ran past
//     ClientOptions::timeout (which closes the connection). Every pending
//     operation of the connection fails with it, and so does every later
//     one; whether the bytes of an unfinished write or persist are stored,
//     or durable, is unknown. A connection is never re-made: connect anew.
//     (The server too answers errc::io_error where its own I/O failed:
//     flush, persist and open_region say when; the connection goes on.)
//   - errc::fenced: a newer fencing term took over a region this connection
//     opened with an older one (RegionOptions::fencing_term). The server answers
//     a request that meets the fence with it, says goodbye with it and
//     closes: every pending and later operation of the connection, on any
//     of its regions, fails with errc::fenced (rdma://: the server also
//     revokes the region's memory key, after its goodbye).
//
// Where callbacks run: on the connection's I/O thread (tcp:// with
// ClientOptions::io_group: the group's one thread), in the order the
// operations were issued, with these exceptions:
//   - a call that RemoteRegion refuses (out_of_range, misaligned,
//     invalid_argument) runs its
//     callback on the calling thread, before the call returns;
//   - tcp://: a request refused before it is sent (the connection has
//     failed) has its callback posted to the I/O thread (run
//     at once when issued on it): a refused one may run ahead of the
//     callbacks of earlier operations still waiting for their answers;
//   - rdma://: a thread in a synchronous call on the connection, or in its
//     close() (or the destruction that closes it), runs the callbacks that
//     become due meanwhile, in order.
// A synchronous call made inside a callback of the same connection (tcp://:
// of any connection of the same IoGroup) would wait for itself, since that
// thread is the one that completes it: it returns errc::would_deadlock at
// once, sends nothing, and the connection goes on. Use the callback form
// there (or hand the work to another thread). Waiting there on a future of
// the connection never ends: the library cannot see that wait.
#pragma once

#include <rpm/export.hpp>
#include <rpm/completion.hpp>
#include <rpm/flush.hpp>
#include <rpm/mr_pool.hpp>
#include <rpm/persistence.hpp>
#include <rpm/result.hpp>
#include <rpm/transport.hpp>

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

RPM_API_BEGIN

namespace rpm {

/// An asynchronous operation's callback: runs exactly once, with success
/// or the error the synchronous form would return (but never a timeout of
/// its own).
using Callback = std::function<void(Result<void>)>;
/// Connection::recv's callback: the message's size, or the error.
using RecvCallback = std::function<void(Result<std::size_t>)>;

/// An I/O thread that several tcp:// connections share (make_io_group()).
class RPM_INTERNAL IoGroup;

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
    // A timeout over ten years counts as ten years (a wait "forever").
    // The timeout also bounds open_region and recv; a call that runs past
    // it closes the connection (errc::io_error). Callback and future forms
    // have none.
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
    /// This opener's fencing term, the token that orders primaries
    /// (docs/replication.md, "Fencing"); 0 = none. The server keeps,
    /// durably, the highest fencing term each region has accepted: an open
    /// with an older one fails with errc::fenced, and a newer one revokes
    /// every connection that opened the region with an older one (their
    /// operations fail with errc::fenced from then on). The server may
    /// limit who presents one (ServerOptions::fencers) and how far above
    /// the region's current one it may be
    /// (ServerOptions::max_fencing_term_step, 2^40 by default): see
    /// open_region's ERRORS. A Replicator sets it from
    /// ReplicatorOptions::fencing_term.
    std::uint64_t fencing_term = 0;
};

/// One piece of a vectored persist: `data` is stored at `offset` of the region.
struct WriteSlice {
    std::uint64_t offset = 0;
    std::span<const std::byte> data;
};
/// The most slices one persist takes.
inline constexpr std::size_t kMaxPersistSlices = 256;

namespace detail {
class RPM_INTERNAL ConnectionState;
struct RPM_INTERNAL ConnectionAccess;
struct RPM_INTERNAL GrantedRegion;
}

/// A region the server granted. A cheap, copyable handle that shares its
/// connection: the connection stays open until close() is called or its
/// Connection object and every RemoteRegion of it are gone.
/// Operations and their errors: see the file comment for what every
/// errc::io_error, errc::fenced and callback has in common.
class RemoteRegion {
public:
    /// RETURN VALUE: the name open_region was given. ERRORS: none.
    [[nodiscard]] const std::string& name() const noexcept;
    /// RETURN VALUE: the region's size in bytes; every operation must lie
    /// within [0, size()). ERRORS: none.
    [[nodiscard]] std::uint64_t size() const noexcept;
    /// RETURN VALUE: how flush and persist make writes durable here, as
    /// the server granted it (or as RegionOptions::force_method forced it).
    /// ERRORS: none.
    [[nodiscard]] flush::Method method() const noexcept;
    /// RETURN VALUE: the persist step the server runs for this grant.
    /// ERRORS: none.
    [[nodiscard]] flush::ServerPersist server_persist() const noexcept;
    /// RETURN VALUE: the region's persistence domain, as the server sees it.
    /// ERRORS: none.
    [[nodiscard]] PersistenceDomain domain() const noexcept;
    /// RETURN VALUE: the server's words for why method() (or that it was
    /// forced). ERRORS: none.
    [[nodiscard]] const std::string& reason() const noexcept;  ///< why this method

    // Synchronous forms: each returns once its operation is complete, or
    // fails with errc::io_error after ClientOptions::timeout (the
    // connection is then closed). Inside a callback of the same connection
    // each returns errc::would_deadlock at once (above), which the lists
    // below leave out.
    /// Store `data` at `offset`; NOT durable until a flush or persist that
    /// covers it returns. Returns once the server (tcp://) or the NIC
    /// (rdma://, which cuts large writes into work requests) has the bytes.
    /// An empty `data` stores nothing and succeeds.
    /// RETURN VALUE: success once stored.
    /// tcp:// sends more than a frame holds (1 MiB + 4 KiB less the 12-byte
    /// request head) as several consecutive writes.
    /// ERRORS: errc::out_of_range (offset + data.size() beyond size():
    /// nothing is sent); errc::io_error (connection failed or timed out:
    /// which bytes were stored is unknown); errc::fenced; the server's error
    /// otherwise (tcp://: the first of its parts').
    Result<void> write(std::uint64_t offset, std::span<const std::byte> data);
    /// write(offset, data) of `length` bytes at `data`. ERRORS: as write.
    Result<void> write(std::uint64_t offset, const void* data, std::size_t length) {
        return write(offset, std::span(static_cast<const std::byte*>(data), length));
    }
    /// write(offset, data) of the bytes of `text`. ERRORS: as write.
    Result<void> write(std::uint64_t offset, std::string_view text) {
        return write(offset, text.data(), text.size());
    }
    /// Read out.size() bytes at `offset` into `out`: what the region holds,
    /// durable or not.
    /// RETURN VALUE: success once `out` holds them.
    /// tcp:// asks for more than the server answers at once (1 MiB + 4 KiB
    /// less 1100 bytes) as several consecutive reads.
    /// ERRORS: errc::out_of_range (offset + out.size() beyond size():
    /// nothing is sent); errc::bad_size (tcp://: a server configured with a
    /// ServerOptions::max_payload below the client's 1 MiB + 4 KiB refuses
    /// the larger parts; the connection goes on); errc::io_error (connection
    /// failed or timed out); errc::fenced; the server's error otherwise
    /// (tcp://). On an error `out` may have been written in part.
    Result<void> read(std::uint64_t offset, std::span<std::byte> out);
    /// read(offset, out) into the `length` bytes at `out`. ERRORS: as read.
    Result<void> read(std::uint64_t offset, void* out, std::size_t length) {
        return read(offset, std::span(static_cast<std::byte*>(out), length));
    }
    /// Store the 8-byte `value` (little-endian in the region) at `offset` as
    /// one word, never torn (Connection::atomic_write_stats says how it
    /// travels); NOT durable until a flush or persist that covers it returns.
    /// RETURN VALUE: success once stored.
    /// ERRORS: errc::misaligned (offset not a multiple of 8) or
    /// errc::out_of_range (offset + 8 beyond size()): nothing is sent;
    /// errc::io_error
    /// (connection failed or timed out: whether it was stored is unknown);
    /// errc::fenced; the server's error otherwise (tcp://).
    Result<void> atomic_write(std::uint64_t offset, std::uint64_t value);
    /// Make durable every write, atomic write and persist to
    /// [offset, offset + length) issued on this connection before this
    /// call, by method(): send_flush (every tcp:// grant unless forced) asks
    /// the server to run its persist step over the range; read_after_write
    /// (rdma://) posts an RDMA read behind the writes. length 0 succeeds.
    /// RETURN VALUE: success once those bytes are durable.
    /// ERRORS: errc::out_of_range (offset + length beyond size():
    /// nothing is sent); errc::deep_flush_failed or errc::io_error from the
    /// server (its persist step failed: the deep flush, or the msync of a
    /// file region; the connection goes on, durability is not assured);
    /// errc::io_error (connection failed or timed out: durability unknown);
    /// errc::fenced.
    Result<void> flush(std::uint64_t offset, std::uint64_t length);
    /// write(offset, data) followed by a flush of that range, as one call:
    /// tcp:// sends one request, answered after the server's persist step
    /// (more than a frame holds, 1 MiB + 4 KiB less a 20-byte head: writes
    /// and then one flush); rdma:// posts the write and its flush together.
    /// RETURN VALUE: success once `data` is durable at `offset`.
    /// ERRORS: errc::out_of_range (offset + data.size() beyond size():
    /// nothing is sent); the server's persist-step errors, as for
    /// flush (the data is stored, durability not assured); errc::io_error
    /// (connection failed or timed out: durability unknown); errc::fenced.
    Result<void> persist(std::uint64_t offset, std::span<const std::byte> data);
    /// persist(offset, data) of `length` bytes at `data`. ERRORS: as persist.
    Result<void> persist(std::uint64_t offset, const void* data, std::size_t length) {
        return persist(offset, std::span(static_cast<const std::byte*>(data), length));
    }
    /// persist(offset, data) of the bytes of `text`. ERRORS: as persist.
    Result<void> persist(std::uint64_t offset, std::string_view text) {
        return persist(offset, text.data(), text.size());
    }
    /// Vectored persist: every slice stored, then all of them durable, as
    /// one request where the transport can (tcp://: one round trip for a
    /// log record and its commit word; rdma:// posts a write per slice and
    /// one flush of their ranges together; tcp:// sends slices over one
    /// frame, 1 MiB + 4 KiB with their data, as writes and then one flush
    /// of their ranges, and reports the first error of those). Nothing is
    /// stored when a slice is out of range.
    /// RETURN VALUE: success once every slice is durable.
    /// ERRORS: errc::invalid_argument (no slices, or more than
    /// kMaxPersistSlices) or errc::out_of_range (a slice outside the
    /// region): nothing is sent;
    /// errc::io_error (connection lost or timed out, or, tcp://, closed by
    /// a server configured with a ServerOptions::max_payload below the
    /// client's 1 MiB + 4 KiB: durability unknown); errc::fenced; the server's error otherwise
    /// (its persist-step errors as for flush). rdma://: the first error of
    /// the slices' writes and the flush.
    Result<void> persist(std::span<const WriteSlice> slices);

    // Asynchronous forms: each starts the operation of the synchronous form
    // of the same name and returns; done(r) runs exactly once with success or
    // one of that form's errors, except the timeout: these have none, and
    // wait for the answer or the connection's failure (or close()). Where
    // `done` runs: the file comment (a call RemoteRegion refuses runs it
    // before returning). The spans must stay valid, and unchanged under a
    // write, until `done` runs.
    /// As write(offset, data). ERRORS (to `done`): as write, no timeout.
    void write(std::uint64_t offset, std::span<const std::byte> data, Callback done);
    /// As read(offset, out); `out` is filled before `done` runs.
    /// ERRORS (to `done`): as read, no timeout.
    void read(std::uint64_t offset, std::span<std::byte> out, Callback done);
    /// As atomic_write(offset, value). ERRORS (to `done`): as atomic_write,
    /// no timeout.
    void atomic_write(std::uint64_t offset, std::uint64_t value, Callback done);
    /// As flush(offset, length): covers the writes issued before it.
    /// ERRORS (to `done`): as flush, no timeout.
    void flush(std::uint64_t offset, std::uint64_t length, Callback done);
    /// As persist(offset, data). ERRORS (to `done`): as persist, no timeout.
    void persist(std::uint64_t offset, std::span<const std::byte> data, Callback done);
    /// As persist(slices); the slices' spans stay valid until `done` runs.
    /// ERRORS (to `done`): as persist(slices), no timeout.
    void persist(std::span<const WriteSlice> slices, Callback done);

    // Future forms: the callback form, with `done` setting the future.
    // RETURN VALUE: a future that becomes ready with success or the error (at
    // once when the arguments are refused); it never holds an exception.
    // ERRORS: as the synchronous form, except the timeout: none, as for the
    // callback form. Never wait on one inside a callback of the same
    // connection: it would wait for itself.
    /// write(offset, data, done) with a future. ERRORS: as write.
    std::future<Result<void>> write_async(std::uint64_t offset, std::span<const std::byte> data);
    /// read(offset, out, done) with a future; `out` is filled once it is
    /// ready with success. ERRORS: as read.
    std::future<Result<void>> read_async(std::uint64_t offset, std::span<std::byte> out);
    /// atomic_write(offset, value, done) with a future. ERRORS: as
    /// atomic_write.
    std::future<Result<void>> atomic_write_async(std::uint64_t offset, std::uint64_t value);
    /// flush(offset, length, done) with a future. ERRORS: as flush.
    std::future<Result<void>> flush_async(std::uint64_t offset, std::uint64_t length);
    /// persist(offset, data, done) with a future. ERRORS: as persist.
    std::future<Result<void>> persist_async(std::uint64_t offset, std::span<const std::byte> data);
    /// persist(slices, done) with a future. ERRORS: as persist(slices).
    std::future<Result<void>> persist_async(std::span<const WriteSlice> slices);

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
    /// An empty handle (bytes() empty, registered() false).
    LocalMemory() = default;
    /// RETURN VALUE: the memory given to register_memory; empty for an
    /// empty or reset handle. ERRORS: none.
    [[nodiscard]] std::span<std::byte> bytes() const noexcept { return mem_; }
    /// True when the transport registered it (rdma://), false for tcp://
    /// and for an empty handle. ERRORS: none.
    [[nodiscard]] bool registered() const noexcept { return handle_ != nullptr; }
    /// Let go of this handle (the registration ends once nothing uses it).
    /// ERRORS: none.
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
    /// AtomicWriteKind::native (rdma://, where the device reports IBTA
    /// ATOMIC WRITE), fenced_write (rdma:// otherwise) or server (tcp://);
    /// include/rpm/transport.hpp says what each does. Fixed when the
    /// connection is made; nullopt only from a moved-from Connection.
    std::optional<AtomicWriteKind> kind;
    /// Atomic writes the device completed as IBV_WC_ATOMIC_WRITE: native
    /// ones that went on the wire (0 unless `kind` is native).
    std::uint64_t native_completed = 0;
};

/// One authenticated connection to a server. The calls below are for a
/// Connection that Client::connect returned; on a moved-from one only
/// open_region (errc::invalid_argument), transport() and
/// atomic_write_stats() (nullopt), close(), assigning to it and
/// destruction are valid.
class Connection {
public:
    /// Ask for a region by name; the server decides its flush method (see
    /// RemoteRegion::method, reason) unless opts forces one. Every call is
    /// a new grant, also for a region already open on this connection.
    /// Waits at most ClientOptions::timeout.
    /// RETURN VALUE: a handle to the granted region.
    /// ERRORS (the server's keep its detail): errc::invalid_argument (a
    /// name that is empty or over 255 bytes, or a moved-from Connection:
    /// nothing is sent; an unknown region, or one not granted to this
    /// client: the same answer, so names do not leak; a forced method that
    /// is unsafe for the region while opts.unsafe is not set: the detail
    /// says so; opts.fencing_term more than the server's
    /// ServerOptions::max_fencing_term_step above the region's current
    /// one: nothing is kept and no connection revoked, the detail gives the
    /// terms and the bound); errc::permission_denied (a nonzero
    /// opts.fencing_term from a client not in the server's
    /// ServerOptions::fencers, rpm-server --fencer; nothing kept);
    /// errc::unsupported (a forced native_flush: tcp:// cannot do it, nor
    /// can this build's rdma://; rdma://: read_after_write on a region that
    /// is not PM, or memory the server's RNIC cannot register; a fencing
    /// term on a region the server has no place to keep one for:
    /// ServerOptions::fence_dir); errc::fenced (opts.fencing_term is older
    /// than one the region accepted, or is 0 while the region has one, or
    /// a newer one came while it was opened);
    /// errc::bad_size (this connection made 1024 opens, the most one may:
    /// connect again); errc::io_error (the server could not keep the new
    /// fencing term durably; rdma://: the grant's memory descriptor or peer
    /// configuration could not be used; the connection failed; or the
    /// timeout passed, which closes the connection); errc::rdma_unavailable
    /// (rdma://: the server could not describe the region's registration).
    Result<RemoteRegion> open_region(std::string_view name, const RegionOptions& opts = {});

    /// Register `mem` for zero-copy writes and reads (LocalMemory).
    /// RETURN VALUE: the handle; spans inside `mem` skip rpm's copies while
    /// it lives (tcp://: a handle with registered() false; nothing is
    /// registered, and only an empty `mem` fails).
    /// ERRORS: errc::invalid_argument (empty `mem`; rdma://: the device
    /// refuses it); rdma://: errc::io_error (the registration failed, e.g.
    /// RLIMIT_MEMLOCK); the connection's error (errc::io_error, or
    /// errc::fenced) once it has failed or was closed.
    Result<LocalMemory> register_memory(std::span<std::byte> mem);

    /// Send one application message to the server, which hands it to its
    /// ServerOptions::on_message (when set) and then answers. Waits at most
    /// ClientOptions::timeout.
    /// RETURN VALUE: success once the server answered (on_message has returned).
    /// ERRORS: errc::bad_size (rdma://: a payload over 65520 bytes, one
    /// message slot less the frame header: nothing is sent); errc::io_error
    /// (the connection failed, or the timeout passed, which closes it;
    /// tcp://: also a payload over the server's ServerOptions::max_payload,
    /// by default 1 MiB + 4 KiB: the server closes the connection);
    /// errc::fenced (the connection was fenced).
    Result<void> send(std::span<const std::byte> payload);
    /// As send(payload); done(r) runs once the server answered, with the
    /// errors send(payload) returns, except the timeout: this has none.
    /// Where `done` runs: the file comment.
    void send(std::span<const std::byte> payload, Callback done);
    /// send(payload, done) with a future. ERRORS: as send, no timeout.
    std::future<Result<void>> send_async(std::span<const std::byte> payload);
    /// Receive one application message from the server (Server::send) into
    /// `out`. Messages wait, in order, until received. Waits at most
    /// ClientOptions::timeout.
    /// RETURN VALUE: the message's size in bytes.
    /// ERRORS: errc::bad_size when the message is larger than `out`: it is
    /// dropped (lost); errc::io_error (no message within the timeout: the
    /// connection is then closed; or the connection failed; tcp://: more
    /// than 4096 messages left unreceived fail it); errc::fenced (the
    /// connection was fenced).
    Result<std::size_t> recv(std::span<std::byte> out);
    /// As recv(out), with no timeout: done(r) runs once, r the message's
    /// size or the error (errc::bad_size: the message was dropped, and the
    /// detail gives its size). ERRORS (to `done`): as recv(out), but the
    /// timeout.
    /// tcp://: when a message is already waiting, or the connection has
    /// failed, `done` runs on the calling thread before this returns;
    /// otherwise on the I/O thread (rdma://: where callbacks run, file
    /// comment). `out` must stay valid until `done` runs.
    void recv(std::span<std::byte> out, RecvCallback done);
    /// recv(out, done) with a future. ERRORS: as recv, no timeout.
    std::future<Result<std::size_t>> recv_async(std::span<std::byte> out);

    /// RETURN VALUE: the server's platform profile (JSON), as it sent it in
    /// the handshake. ERRORS: none.
    [[nodiscard]] const std::string& server_profile_json() const noexcept;
    /// RETURN VALUE: the scheme of the URI it was connected with
    /// (to_string gives "tcp" or "rdma"); std::nullopt for a moved-from
    /// Connection. ERRORS: none.
    [[nodiscard]] std::optional<Scheme> transport() const noexcept;
    /// RETURN VALUE: how this connection's atomic writes go, and how many
    /// went natively (AtomicWriteStats::kind nullopt for a moved-from
    /// Connection). ERRORS: none.
    [[nodiscard]] AtomicWriteStats atomic_write_stats() const noexcept;
    /// Close the connection: every pending operation fails with
    /// errc::io_error (or with the error the connection already failed
    /// with, e.g. errc::fenced), and its callback has run when this returns.
    /// Called from one of this connection's callbacks, they run on that
    /// thread: tcp://, inside this call; rdma://, as soon as the calling
    /// callback returns. Operations issued later fail too, with the same
    /// error. Closing again does nothing.
    /// ERRORS: none.
    void close();

    /// Take over `other`'s connection; `other` is left moved-from.
    /// ERRORS: none.
    Connection(Connection&&) noexcept;
    /// Let go of this object's connection (closed if no RemoteRegion of it
    /// remains), then take over `other`'s. ERRORS: none.
    Connection& operator=(Connection&&) noexcept;
    /// Closes the connection (as close()) once no RemoteRegion of it
    /// remains either; until then it stays open. ERRORS: none.
    ~Connection();

private:
    friend class Client;
    friend struct detail::ConnectionAccess;
    explicit Connection(std::shared_ptr<detail::ConnectionState> s) noexcept : s_(std::move(s)) {}
    std::shared_ptr<detail::ConnectionState> s_;
};

class Client {
public:
    /// A client with these options; connects nothing yet. ERRORS: none.
    explicit Client(ClientOptions opts = {}) : opts_(std::move(opts)) {}
    /// Connect and authenticate, both ways: the server proves it knows the
    /// secret too. uri: tcp://host:port or rdma://host:port (an IPv6 host
    /// in brackets). Each set-up step waits at most ClientOptions::timeout.
    /// RETURN VALUE: the connection.
    /// ERRORS: errc::invalid_argument (bad URI: no or another scheme, no
    /// host, no port or one that is not 0 to 65535); errc::io_error (cannot
    /// resolve or connect, timed out, TLS failed (its CA file, handshake or
    /// the server's certificate), the server closed the connection during
    /// the handshake, e.g. past its connection limits; the detail says
    /// which); errc::auth_failed (authentication failed, either way round:
    /// unknown client id or wrong secret, or the server could not prove it
    /// knows the secret; the detail says which side refused);
    /// errc::unsupported (no common protocol version, or ClientOptions::tls
    /// with rdma://, which has no TLS); errc::rdma_unavailable (rdma://
    /// without an RDMA device that reaches the host, or its set-up or
    /// buffer registration failed).
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

RPM_API_END
