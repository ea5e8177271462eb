// The RDMA client transport (connect_rdma).
//
// Control frames (handshake, region grants, send_flush requests, messages)
// travel as protocol frames in RDMA send/receive messages; data moves
// one-sided: write / read / atomic_write against the
// region's registered memory, through entries of the device's bounce pool.
// One I/O thread per connection polls the completion queue and runs every
// callback, in posting order; a synchronous call polls it on the caller's
// thread instead (client_drive.cpp). docs/rdma.md describes the whole of it.
//
// ClientConn is the façade and the glue: the state lives in objects with a
// header each, and ClientConn's member functions (one client_*.cpp file per
// concern) move work between them.
//   ClientLink    client_link.hpp  set-up: device, buffers, connection, CQ (read-only once connected)
//   Handshake     handshake.hpp    Hello, Authenticate, Welcome; connect()'s outcome
//   OpQueue       op_queue.hpp     the operations in posting order and their resources
//   Requests      requests.hpp     request ids and the replies awaited
//   DirectOp      direct_op.hpp    the one operation outside the queue (client_direct.cpp)
//   RegionTable   regions.hpp      the granted regions, their flushers, registered memory
//   Flusher       flusher.hpp      how a region's flushes go on the wire, one per flush method
//   Inbox         inbox.hpp        the server's messages and the recv()s waiting
//   DriveState    driver.hpp       the polling's lock and a synchronous caller's wait
//   IoThread      io_thread.hpp    the I/O thread, its wakeup, parked or not
// Locks, unchanged by that split: drive_.mu (whoever polls) before mu_ (the
// rest), never after; Handshake, Inbox, DirectOp, RegionTable, OpQueue
// and Requests' replies are under mu_.
#pragma once

#include "client/transport.hpp"
#include "core/inline_mutex.hpp"
#include "transport/rdma/api.hpp"
#include "transport/rdma/buffers.hpp"
#include "transport/rdma/client_link.hpp"
#include "transport/rdma/device_pools.hpp"
#include "transport/rdma/direct_op.hpp"
#include "transport/rdma/driver.hpp"
#include "transport/rdma/flusher.hpp"
#include "transport/rdma/handles.hpp"
#include "transport/rdma/handshake.hpp"
#include "transport/rdma/inbox.hpp"
#include "transport/rdma/io_thread.hpp"
#include "transport/rdma/limits.hpp"
#include "transport/rdma/loop.hpp"
#include "transport/rdma/message_buffer.hpp"
#include "transport/rdma/op_queue.hpp"
#include "transport/rdma/regions.hpp"
#include "transport/rdma/requests.hpp"

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>

namespace rpm::rdma {

/// connect_rdma through `api` (the verbs layer, or a test's fake).
Result<std::unique_ptr<client::Transport>> connect_rdma_with(const Api& api, const std::string& host,
                                                             std::uint16_t port, const ClientOptions& opts,
                                                             const ClientLimits& limits = {});

/// One connection's state, shared by the Transport object and its I/O thread.
class ClientConn;

// Per-thread state of the synchronous calls (client_drive.cpp), read on
// every one: here so that can_drive() is inline. initial-exec: one load
// relative to the thread pointer, where a shared library's default model
// calls __tls_get_addr, and under the lab's emulation a call costs tens of
// nanoseconds (docs/benchmarks-history.md, "A call costs more than its
// instructions in the lab"). The price: a few bytes of the static TLS
// block, which glibc keeps spare for a library loaded by dlopen too.
namespace drive_tls {
/// The connection whose synchronous call this thread is driving: a
/// callback run by the driver that makes another call must not drive again.
[[gnu::tls_model("initial-exec")]] extern thread_local const ClientConn* t_driving;
/// The connection whose I/O thread this is (set first thing in run()).
[[gnu::tls_model("initial-exec")]] extern thread_local const ClientConn* t_io_thread_of;
/// This thread's mark, which a connection whose polling it holds keeps in
/// its drive_.holder (try_begin_hold).
[[gnu::tls_model("initial-exec")]] extern thread_local char t_mark;
} // namespace drive_tls

class ClientConn : public std::enable_shared_from_this<ClientConn> {
public:
    ClientConn(const Api& api, ClientOptions opts, ClientLimits limits);
    ~ClientConn();
    ClientConn(const ClientConn&) = delete;
    ClientConn& operator=(const ClientConn&) = delete;

    /// Device pools, connection, I/O thread, handshake.
    Result<void> connect(const std::string& host, std::uint16_t port);
    Result<proto::RegionGrant> open_region(const proto::OpenRegion& req);
    void write(const proto::RegionGrant& g, std::uint64_t offset, std::span<const std::byte> data, client::Done done);
    void read(const proto::RegionGrant& g, std::uint64_t offset, std::span<std::byte> out, client::Done done);
    void atomic_write(const proto::RegionGrant& g, std::uint64_t offset, std::uint64_t value, client::Done done);
    void flush(const proto::RegionGrant& g, std::span<const proto::Range> ranges, client::Done done);
    void persist(const proto::RegionGrant& g, std::span<const proto::Slice> slices, client::Done done);
    void send(std::span<const std::byte> payload, client::Done done);
    void recv(std::span<std::byte> out, client::RecvDone done);
    /// Register `mem` with the connection's device (mr_reg, for writes
    /// from it and reads into it). Writes and reads whose span lies wholly
    /// inside then skip the bounce entries, while the returned handle lives.
    /// ERRORS: errc::invalid_argument (empty, or the device refuses it);
    /// errc::io_error (the registration failed: memlock limit, device).
    Result<std::shared_ptr<void>> register_memory(std::span<std::byte> mem);
    /// Run the operation `start` posts and poll the completion queue on
    /// this thread until it finishes (the I/O thread stands aside). Every
    /// callback that finishes meanwhile runs here, in posting order.
    /// RETURN VALUE: the operation's status. ERRORS: errc::io_error after
    /// `timeout` (the connection is closed, as client::Transport::call says).
    Result<void> call(client::Start start, std::chrono::milliseconds timeout);
    /// A synchronous read (kind read, into `out`) or write (kind write,
    /// from `src`), as call() with a start that posts it, but without a
    /// callback when it goes direct: its completion sets the call's outcome
    /// (take_direct_locked). Queued (the connection is busy), it takes the
    /// call's callback as any operation. RETURN VALUE and ERRORS: as call().
    Result<void> transfer_now(OpKind kind, const proto::RegionGrant& g, std::uint64_t offset,
                                 std::span<const std::byte> src, std::span<std::byte> out,
                                 std::chrono::milliseconds timeout);
    /// False on the I/O thread, inside a synchronous call's callbacks and
    /// on a thread that holds the polling: a nested call there must not
    /// drive (it would wait for itself).
    [[nodiscard]] bool can_drive() const noexcept {
        return drive_tls::t_driving != this && drive_tls::t_io_thread_of != this &&
               drive_.holder.load(std::memory_order_relaxed) != &drive_tls::t_mark;
    }
    /// Marks the calling thread as this connection's I/O thread (run()).
    void enter_io_thread() const noexcept;
    /// True on this connection's I/O thread and inside the callbacks a
    /// synchronous call's driver runs: a synchronous call there would wait
    /// for completions that only this thread can run (errc::would_deadlock).
    [[nodiscard]] bool waits_for_itself() const noexcept {
        return drive_tls::t_driving == this || drive_tls::t_io_thread_of == this;
    }
    /// This thread drives this connection's synchronous call (call()).
    [[nodiscard]] bool driving_here() const noexcept { return drive_tls::t_driving == this; }
    /// Take over the completion work on this thread until end_hold(), as a
    /// synchronous call does for its own operation (client::PollHold).
    /// RETURN VALUE: false when another thread holds it, can_drive() is
    /// false, or the polling lock stays taken for over 1 ms (another
    /// thread's synchronous call, which may last up to its timeout).
    bool try_begin_hold();
    void end_hold() noexcept;
    /// One round of the I/O thread's work, without waiting. `events`: the
    /// completion channel's event and the connection's events too (after a
    /// poll() found a descriptor of hold_fds() readable).
    /// RETURN VALUE: completions and callbacks handled.
    std::size_t poll_round(bool events);
    /// The completion channel, the connection's events and the holder's wake-up.
    void hold_fds(std::vector<int>& out) const;
    /// The I/O thread sleeps without watching the CQ (tests, diagnostics).
    [[nodiscard]] bool io_thread_parked() const {
        std::lock_guard lock(mu_);
        return io_.parked;
    }
    /// The I/O thread of a failed or closed connection sleeps until
    /// something comes, in every completion mode (tests, diagnostics).
    [[nodiscard]] bool io_thread_asleep_failed() const noexcept { return io_.asleep_failed.load(); }
    [[nodiscard]] const std::string& profile() const noexcept { return handshake_.profile(); }
    [[nodiscard]] AtomicWriteStats atomic_write_stats() const noexcept {
        return {link_.atomic_kind(), native_atomics_.load()};
    }
    /// Fail everything pending and disconnect; the callbacks have run when
    /// this returns (on this thread, or on the one delivering a round
    /// meanwhile), except when called where this thread holds the polling
    /// lock (a callback): then they run right after that callback. Safe
    /// from any thread, including a callback.
    void close() noexcept;
    /// Stop and join the I/O thread (detach it when called on it).
    void finish() noexcept;

private:
    using RemoteRegion = rdma::RemoteRegion;
    using Finished = rdma::Finished;  // a callback deliver_round runs

    // client_connect.cpp: set-up (ClientLink), the I/O thread, tear-down
    void start_thread();
    void release_buffers() noexcept;

    // client_loop.cpp: the I/O thread
    void run();
    using WaitPlan = rdma::WaitPlan;
    /// Park while a caller drives (RETURN VALUE: empty, once woken), else
    /// the next wait's plan: one lock for both, on every turn of the loop.
    std::optional<WaitPlan> park_or_plan();
    /// `by_driver`: a synchronous caller's round, whose next wait plans by
    /// drive_.plan (deliver_round); the I/O thread's plans afresh (park_or_plan).
    void work(const Ready& r, bool by_driver);
    WaitPlan plan_locked() const;
    /// Poll the CQ into drive_.polled (RETURN VALUE: how many, or 1 when the
    /// verbs layer failed and the connection with it); the next delivery
    /// round handles them (handle_polled_locked). Under drive_.mu.
    std::size_t poll_cq(bool had_event);
    void handle_polled_locked();
    void on_event();
    void on_wc_locked(const ibv_wc& wc);
    void on_op_wc_locked(std::uint64_t seq, const ibv_wc& wc);
    void on_recv_locked(std::uint32_t slot, const ibv_wc& wc);
    void on_frame_locked(const proto::Header& h, std::span<const std::byte> body);
    void on_hello_locked(std::span<const std::byte> body);
    void on_message_locked(std::span<const std::byte> payload);
    void repost_locked(std::uint32_t slot);
    void fail_locked(std::error_code ec, std::string why);
    /// Run the callbacks of what finished, in posting order, and again for
    /// what those callbacks queued. RETURN VALUE: callbacks run.
    std::size_t deliver(bool by_driver = true);
    std::size_t deliver_round(bool& more, bool by_driver);
    /// A finished op's callback, with a persist's joined status, into `finished`.
    void take_locked(Op& op, std::vector<Finished>& finished) {
        // A persist's writes come before its flush and join its callback
        // (Op::joins_next), which gets the first error of them all.
        if (op.joins_next) {
            if (op.ec && !joined_ec_) joined_ec_ = op.ec;
            return;
        }
        const std::error_code ec = joined_ec_ ? std::exchange(joined_ec_, {}) : op.ec;
        finished.push_back({std::move(op.done), outcome_locked(ec, op.kind)});
    }
    /// An operation's result: success for an empty code, else the code with
    /// what failed: the connection (and why it went), or the server's answer.
    [[nodiscard]] Result<void> outcome_locked(std::error_code ec, OpKind kind) const {
        if (!ec) return {};
        return failure_locked(ec, kind);
    }
    [[nodiscard]] Error failure_locked(std::error_code ec, OpKind kind) const;
    [[nodiscard]] Result<std::size_t> recv_outcome_locked(std::error_code ec, std::size_t size) const;

    // client_drive.cpp: a synchronous caller polls
    /// The frame of every synchronous call around `post(gen)`, which posts
    /// its operation for call generation `gen` (client_drive.cpp).
    template <class Post>
    Result<void> sync_call(Post&& post, std::chrono::milliseconds timeout);
    /// The callback that reports to synchronous call `gen` (drive_.sync).
    client::Done sync_done(std::uint64_t gen);
    /// Until `done` or `timeout` from `began` (a coarse_now(); the default:
    /// from the first clock read here). RETURN VALUE: false on timeout.
    bool drive_until(const bool& done, std::chrono::steady_clock::time_point began, std::chrono::milliseconds timeout);
    /// Before drive_until, when the call's operation went direct with
    /// nothing else to hand out (drive_.fresh): poll the CQ alone, up to
    /// kOwnSpins times, for its completion. RETURN VALUE: true when the call
    /// is over; false: drive_until takes over (whatever this polled is
    /// handled already).
    bool spin_own();
    /// The same for the I/O thread (run()), while `plan` says an operation
    /// is on the wire. RETURN VALUE: true when it handled completions.
    bool spin_in_flight(const WaitPlan& plan);
    /// One poll of the CQ by spin_own or spin_in_flight, under drive_.mu:
    /// none (nothing there), failed (the verbs layer failed: the general
    /// wait's poll meets it again), or what take_own says of the
    /// completions polled: over (the direct operation's outcome or callback
    /// handed out here, nothing else being due), next (over, and a direct
    /// operation was posted since: a callback's next one, mostly, whose
    /// completion is the next to come), on_wire (it is still, nothing else
    /// due), deliver (a delivery round must hand out what is due).
    enum class Own { none, failed, over, next, on_wire, deliver };
    Own poll_own();
    Own take_own(std::span<const ibv_wc> wcs);
    /// The I/O thread's wait once the connection has failed or closed.
    Ready sleep_failed(const WaitPlan& plan);
    /// About one round trip of rxe's, more than enough for a hardware NIC's;
    /// drive_until, with its timeout and the connection's events, comes next.
    static constexpr unsigned kOwnSpins = 1024;
    void end_drive() noexcept;
    void notify_locked() noexcept;
    void notify_all() noexcept;

    // client_direct.cpp: an operation on an idle connection, outside the op queue
    /// Post a read or write at once, when the queue holds nothing
    /// unfinished and no other direct operation is pending.
    /// RETURN VALUE: true when it took the operation (and `done`): posted,
    /// or finished with the post's error; false: the queue must take it.
    /// `sync_gen`: not 0 for transfer_now's own operation, which has no
    /// `done` (null: no std::function made and destroyed per call): its
    /// outcome goes to that synchronous call (drive_.sync).
    bool try_direct(OpKind kind, std::uint32_t grant_id, std::uint64_t offset, std::span<const std::byte> src,
                    std::span<std::byte> out, client::Done* done, std::uint64_t sync_gen = 0);
    /// The same for a persist of one slice (not a commit word): its write
    /// and its flush (read_after_write's read, send_flush's Flush) under one
    /// doorbell. RETURN VALUE: as try_direct.
    bool try_direct_persist(const proto::RegionGrant& g, std::span<const proto::Slice> slices, client::Done& done);
    /// try_direct_persist's posting, once `hold` is taken: the write, the
    /// flusher's work request behind it, one doorbell.
    void post_direct_persist_locked(const RemoteRegion& r, const proto::Slice& s, OpQueue::DirectHold& hold,
                                    std::shared_ptr<UserMemory> user, client::Done& done);
    [[nodiscard]] bool direct_idle_locked() const noexcept;
    void begin_direct_locked(OpKind kind, OpQueue::DirectHold& hold, std::shared_ptr<UserMemory> user,
                             std::span<std::byte> out, client::Done* done, std::uint64_t sync_gen = 0);
    void direct_post_failed_locked(int ret);
    void on_direct_wc_locked(const ibv_wc& wc);
    /// A Response to the direct persist's Flush. RETURN VALUE: false when
    /// the frame answers something else.
    bool on_direct_reply_locked(const proto::Header& h, std::span<const std::byte> body);
    /// deliver_round's first callback: the direct operation's, once over.
    void take_direct_locked(std::vector<Finished>& finished);

    // client_ops.cpp: posting
    void submit_locked(Op&& op);
    void submit_error(client::Done done, std::error_code ec);
    std::error_code post_locked(Op& op);
    int post_request_locked(Op& op, const void* ctx);
    const RemoteRegion* region_locked(std::uint32_t grant_id) const { return regions_.find(grant_id); }
    // Ops and callbacks go down by reference and are moved once, into the
    // queue: an Op is some 250 bytes with two std::functions in it.
    void submit_transfer(Op&& op, std::uint32_t grant_id, std::uint64_t offset, std::size_t length,
                         client::Done&& done);
    void submit_transfer_locked(Op&& op, std::uint32_t grant_id, std::uint64_t offset, std::size_t length,
                                client::Done&& done);
    void submit_chunks_locked(Op&& tmpl, std::uint64_t offset, std::size_t length, client::Done&& done);
    /// Queue the flush of `ranges` by the region's flusher (flusher.hpp; an
    /// error op for an unknown grant).
    void submit_flush_locked(std::uint32_t grant_id, std::span<const proto::Range> ranges, client::Done&& done);

    // client_ops.cpp, too: what a persist's slices become
    Op atomic_op_locked(std::uint32_t grant_id, std::uint64_t offset, std::uint64_t wire_value,
                        client::Done done) const;
    /// A persist slice that goes as a native atomic write: a commit word
    /// (protocol/commit_word.hpp) on a device with atomic write.
    [[nodiscard]] bool commit_word(const proto::Slice& s) const noexcept;
    /// Post what the queue can, one chain under one doorbell. Inline: it
    /// runs after every completion and call, and most find nothing to post.
    void pump_locked() {
        if (ops_.has_unposted() || ring_error_ != 0) pump_queue_locked();
    }
    void pump_queue_locked();
    std::shared_ptr<UserMemory> user_memory_locked(const std::byte* p, std::size_t n) {
        return regions_.user_memory(p, n);
    }

    // client_region.cpp: grants
    struct GrantReply {
        Result<proto::RegionGrant> grant;
        bool native_refused = false;  ///< refused: a native_flush grant this side cannot post
    };
    /// One OpenRegion, its reply applied (open_region asks again once, for
    /// send_flush, when this side cannot post the native FLUSH granted).
    GrantReply request_grant(const proto::OpenRegion& req);
    Result<void> apply_grant_locked(const proto::RegionGrant& g);
    Result<void> apply_peer_cfg_locked(const proto::RegionGrant& g, RemoteMr* mr);
    /// A native_flush grant: this connection can post FLUSH, and the region is PM.
    Result<void> check_native_flush_locked(RemoteMr* mr) const;

    const Api& api_;
    ClientOptions opts_;
    ClientLimits lim_;
    ClientLink link_;  // set once by connect(), before the I/O thread starts
    RegionTable regions_;  // under mu_
    DirectOp direct_;      // under mu_

    // The polling's lock and state: its lock is taken before mu_, never after.
    DriveState drive_;
    // The lock of the rest: the queue, the direct operation, the regions,
    // the inbox, the handshake, failure.
    mutable InlineMutex mu_;
    OpQueue ops_;
    Requests requests_;  // ids: any thread; the replies awaited: under mu_
    std::error_code joined_ec_;  // the first error of a persist's writes, for its flush (deliver_round)
    Inbox inbox_;  // under mu_
    bool batching_ = false;  // persist() is queueing: post once it is done
    int ring_error_ = 0;     // a doorbell failed while pumping: pump_locked fails the connection
    bool failed_ = false;
    std::error_code fail_ec_;
    std::string fail_why_;
    bool closing_ = false;
    Handshake handshake_;  // under mu_ (client_loop.cpp handles its frames)
    // What the region's flusher works on (flusher.hpp), under mu_.
    FlushWork flush_work_{api_, link_, ops_, requests_, direct_};

    std::atomic<std::uint64_t> native_atomics_{0};  // IBV_WC_ATOMIC_WRITE completions
    IoThread io_;  // the I/O thread (io_thread.hpp)
};

/// A thread's hold on a connection's completions (ClientConn::try_begin_hold).
class RdmaPollHold final : public client::PollHold {
public:
    explicit RdmaPollHold(std::shared_ptr<ClientConn> c) noexcept : c_(std::move(c)) {}
    ~RdmaPollHold() override { c_->end_hold(); }
    RdmaPollHold(const RdmaPollHold&) = delete;
    RdmaPollHold& operator=(const RdmaPollHold&) = delete;
    std::size_t poll(bool events) override { return c_->poll_round(events); }
    void fds(std::vector<int>& out) override { c_->hold_fds(out); }

private:
    std::shared_ptr<ClientConn> c_;
};

/// The Transport handed to the client layer: a thin owner of a ClientConn.
class RdmaClient final : public client::Transport {
public:
    explicit RdmaClient(std::shared_ptr<ClientConn> c) noexcept : c_(std::move(c)) {}
    ~RdmaClient() override;
    Result<proto::RegionGrant> open_region(const proto::OpenRegion& req) override { return c_->open_region(req); }
    void write(const proto::RegionGrant& g, std::uint64_t offset, std::span<const std::byte> data,
               client::Done done) override {
        c_->write(g, offset, data, std::move(done));
    }
    void read(const proto::RegionGrant& g, std::uint64_t offset, std::span<std::byte> out,
              client::Done done) override {
        c_->read(g, offset, out, std::move(done));
    }
    void atomic_write(const proto::RegionGrant& g, std::uint64_t offset, std::uint64_t value,
                      client::Done done) override {
        c_->atomic_write(g, offset, value, std::move(done));
    }
    void flush(const proto::RegionGrant& g, std::span<const proto::Range> ranges, client::Done done) override {
        c_->flush(g, ranges, std::move(done));
    }
    void persist(const proto::RegionGrant& g, std::span<const proto::Slice> slices, client::Done done) override {
        c_->persist(g, slices, std::move(done));
    }
    void send(std::span<const std::byte> payload, client::Done done) override { c_->send(payload, std::move(done)); }
    void recv(std::span<std::byte> out, client::RecvDone done) override { c_->recv(out, std::move(done)); }
    Result<std::shared_ptr<void>> register_memory(std::span<std::byte> mem) override {
        return c_->register_memory(mem);
    }
    Result<void> call(client::Start start, std::chrono::milliseconds timeout) override {
        if (c_->can_drive()) return c_->call(start, timeout);
        if (c_->waits_for_itself()) return would_deadlock();
        return client::Transport::call(start, timeout);
    }
    Result<void> read_now(const proto::RegionGrant& g, std::uint64_t offset, std::span<std::byte> out,
                          std::chrono::milliseconds timeout) override {
        if (c_->can_drive()) return c_->transfer_now(OpKind::read, g, offset, {}, out, timeout);
        if (c_->waits_for_itself()) return would_deadlock();
        return client::Transport::read_now(g, offset, out, timeout);
    }
    Result<void> write_now(const proto::RegionGrant& g, std::uint64_t offset, std::span<const std::byte> data,
                           std::chrono::milliseconds timeout) override {
        if (c_->can_drive()) return c_->transfer_now(OpKind::write, g, offset, data, {}, timeout);
        if (c_->waits_for_itself()) return would_deadlock();
        return client::Transport::write_now(g, offset, data, timeout);
    }
    static Error would_deadlock() {
        return Error(errc::would_deadlock, "a synchronous call inside a callback of its own rdma:// connection: "
                                           "use the callback form there");
    }
    std::unique_ptr<client::PollHold> hold_polling() override;
    [[nodiscard]] const std::string& profile_json() const noexcept override { return c_->profile(); }
    [[nodiscard]] Scheme scheme() const noexcept override { return Scheme::rdma; }
    [[nodiscard]] AtomicWriteStats atomic_write_stats() const noexcept override { return c_->atomic_write_stats(); }
    void close() noexcept override { c_->close(); }
    [[nodiscard]] const ClientConn& conn() const noexcept { return *c_; }

private:
    std::shared_ptr<ClientConn> c_;
};

} // namespace rpm::rdma
