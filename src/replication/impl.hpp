// Replicator::Impl: the members, their progress, and the threads that watch
// them.
//
// Locking: issue_mu serialises everything that sends to members (writes,
// commits' flushes, heartbeats, resync chunks), so each member sees writes in
// LSN order. mu guards the state completions touch. Order: issue_mu, then
// mu; nothing is sent to a transport while mu is held, because a transport
// may complete an operation inline (a range error) and the completion takes
// mu.
#pragma once

#include <rpm/pmem.hpp>
#include <rpm/replication.hpp>

#include "pmem/persist_step.hpp"
#include "replication/header.hpp"
#include "replication/intervals.hpp"
#include "replication/line_set.hpp"
#include "replication/round_trips.hpp"
#include "client/io_group.hpp"
#include "client/transport.hpp"
#include "core/wakeup.hpp"

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace rpm {

using Clock = std::chrono::steady_clock;

namespace replication {

/// Flush ranges closer than this are merged into one flush.
inline constexpr std::uint64_t kFlushMergeGap = 64 * 1024;
/// Resync copies and compares in chunks of this size.
inline constexpr std::size_t kResyncChunk = 256 * 1024;
/// Writes up to this size wait for the commit (Deferred); larger ones are
/// sent at once, so their transfer overlaps the caller's work.
inline constexpr std::size_t kDeferMaxWrite = 16 * 1024;
/// What waits at most: beyond it, the waiting writes are sent as writes.
inline constexpr std::size_t kDeferMaxBytes = 256 * 1024;
/// The most writes that wait, in persists of kMaxPersistSlices each: a
/// group commit of a node's pipelined puts (three writes each: 128 puts
/// from 8 clients at depth 16 make 384) must not send its first 256 at
/// once as 256 writes, each a request and an answer per member.
inline constexpr std::size_t kDeferMaxPieces = 4 * kMaxPersistSlices;

/// Small writes since the last commit, in issue order. The commit sends
/// them to every member as one vectored persist that also makes them
/// durable: one request and one answer per member, where each write was a
/// request (and an answer) and each range a flush. A member applies the
/// slices in order, so a later write to the same bytes wins, as it does
/// locally.
struct Deferred {
    struct Piece {
        std::uint64_t offset;  ///< in the region
        std::size_t at, length;  ///< in `bytes`
    };
    std::vector<std::byte> bytes;
    std::vector<Piece> pieces;
    std::vector<WriteSlice> slices;  ///< the pieces, made once taken (`bytes` no longer grows)
    [[nodiscard]] bool empty() const noexcept { return pieces.empty(); }
    /// The persists that carry `slices`, in order, kMaxPersistSlices each
    /// (a member applies one connection's requests in order, so a later
    /// write to the same bytes still wins).
    [[nodiscard]] std::size_t persists() const noexcept {
        return (slices.size() + kMaxPersistSlices - 1) / kMaxPersistSlices;
    }
    [[nodiscard]] std::span<const WriteSlice> persist(std::size_t i) const noexcept {
        const auto from = i * kMaxPersistSlices;
        return std::span<const WriteSlice>(slices).subspan(from, std::min(kMaxPersistSlices, slices.size() - from));
    }
};

struct PendingFlush {
    std::uint64_t id = 0;
    Lsn lsn = 0;           ///< the member holds every write up to here once it completes
    unsigned remaining = 0;
    IntervalSet ranges;    ///< what its flushes cover, for the missed set if the member fails
    /// The waiting writes its persists carry, shared by every member's
    /// flush of that commit: their ranges are added to `missed` only if the
    /// member fails (a std::map insert per write and member was 3 % of a
    /// primary's CPU under a pipelined load).
    std::shared_ptr<const Deferred> batch{};
    Clock::time_point sent = Clock::now();  ///< for its round trip (RoundTrips)
};

/// The committing thread's holds on its members' completions.
using Holds = std::vector<std::unique_ptr<client::PollHold>>;

struct Member {
    std::size_t index = 0;
    ReplicaSpec spec;
    std::optional<Connection> conn;
    std::optional<RemoteRegion> region;
    ReplicaState state = ReplicaState::failed;
    std::uint64_t epoch = 0;  ///< bumped whenever the member fails or reconnects
    Lsn frontier = 0;
    IntervalSet dirty{kFlushMergeGap};  ///< sent, in no flush yet (region offsets)
    std::deque<PendingFlush> flushes;
    LineSet missed;                     ///< what it must be sent when it returns
    bool full_resync = true;            ///< compare everything instead of copying `missed`
    unsigned outstanding = 0;
    Clock::time_point last_progress{};
    Clock::time_point last_heartbeat{};
    Clock::time_point last_attempt{};
    bool needs_close = false;
    /// Reconnect attempts, each on a thread of its own (a slot): one starts
    /// every reconnect_interval while the member is away, up to kMaxDials
    /// at once, and while one is in flight no sooner than dial_timeout /
    /// kMaxDials after the last. So neither another member's dial nor this
    /// member's own dial begun while its link was dead (a lost SYN waits
    /// for TCP's retransmission, 1 s and then more) delays its return by
    /// more than that once it is reachable (500 ms with the defaults); the
    /// first attempt to connect puts its connection in place, any later
    /// one lets its own go.
    static constexpr std::size_t kMaxDials = 4;
    std::array<std::thread, kMaxDials> dialers;
    std::array<bool, kMaxDials> dialing{};
    // Reported by replicas().
    Lsn position_at_open = 0;
    replication::DecodedHeader opened_header;  ///< as read at open
    std::uint64_t failures = 0, resyncs = 0, bytes_resynced = 0;
    std::uint64_t bytes_missed = 0;  ///< written while it was away, each write counted
    RoundTrips round_trips;          ///< answers while live
    bool degraded = false;           ///< live, its round trips past the bound (monitor)
    std::uint64_t degradations = 0;

    /// Bytes it does not yet hold durably: sent and not confirmed, or, while
    /// away, missed (ReplicaStatus::lag_bytes).
    [[nodiscard]] std::uint64_t behind_bytes() const {
        if (state == ReplicaState::failed) return missed.bytes();
        std::uint64_t n = dirty.bytes();
        for (const auto& f : flushes) n += f.ranges.bytes() + (f.batch ? f.batch->bytes.size() : 0);
        return n;
    }
    /// A write it did not get: sent again when it returns.
    void miss(std::uint64_t offset, std::uint64_t length) {
        missed.add(offset, length);
        bytes_missed += length;
    }
    Error last_error;
};

/// Slices' bytes copied back to back, for every member's request: the
/// caller may return (a quorum answered) while a slower member's request
/// still reads them.
struct Staged {
    std::vector<std::byte> bytes;
    std::vector<WriteSlice> slices;
};
std::shared_ptr<const Staged> stage(std::span<const WriteSlice> slices);

} // namespace replication

struct Replicator::Impl {
    ReplicatorOptions opts;
    // The replicas' tcp:// connections share one I/O thread, and a
    // committing thread drives that group while it waits: it reads the
    // answers itself, as a plain fan-out does, instead of being woken by
    // the group's thread (docs/benchmarks-history.md, "The committing thread reads
    // the answers"). Concurrent commits: one drives, the others wait on cv.
    std::shared_ptr<IoGroup> io_group = make_io_group();
    std::optional<pmem::Region> local;
    std::span<std::byte> data;     ///< local data area
    replication::Header header;    ///< the local header as last written
    unsigned members = 0, needed = 0;

    std::mutex issue_mu;
    mutable std::mutex mu;
    std::condition_variable cv;  ///< frontier advanced, member failed or joined
    // The monitor and syncer wait here, not on cv: every flush completion
    // notifies cv, and waking two idle threads per completion cost the
    // commit path half its context switches (rpm-bench, 3 replicas).
    std::condition_variable watch_cv;
    std::vector<replication::Member> replicas;
    std::atomic<Lsn> last_lsn{0};
    Lsn local_frontier = 0, quorum_frontier = 0, all_frontier = 0;
    std::uint64_t next_flush_id = 1;
    std::deque<ReplicaEvent> events;  ///< delivered by the monitor thread

    bool stopping = false;
    /// Set (under mu) once a replica refused this primary's fencing term: every
    /// later write, persist and commit fails with it.
    std::optional<Error> fenced;
    [[nodiscard]] std::optional<Error> fenced_error() const;
    std::thread monitor, syncer;
    /// RPM_FAULT=serial-dials (core/fault.hpp): the syncer dials failed
    /// members one after another on its own thread, as it used to.
    bool serial_dials = false;
    /// RPM_FAULT=one-dial: at most one attempt per member at a time, so a
    /// dial begun while its link was dead holds up its own return.
    bool one_dial = false;

    ~Impl();

    // open.cpp / recovery.cpp
    Result<void> open_local();
    Result<void> connect_all(std::string& unreachable);
    Result<void> recover(const std::string& unreachable);
    /// recover's last step: `h` (the next generation) becomes the local
    /// header, kept durably, and every member must be resynchronized from
    /// its position on.
    void start_generation(const replication::Header& h);
    Result<std::vector<std::byte>> fetch(std::size_t i, std::uint64_t length) const;
    Result<int> choose_best(std::uint64_t length, std::vector<std::byte>& best_data);
    // issue.cpp
    Result<Lsn> write_region(std::uint64_t region_offset, std::span<const std::byte> bytes, bool atomic);
    /// The writes waiting for the commit (issue_mu).
    replication::Deferred deferred;
    /// A local copy that is not PM (page granularity: every flush is an
    /// msync) is flushed at the commit, not at each write: the pages the
    /// writes touched since the last commit (issue_mu), each run of
    /// adjacent pages once (page_runs), no page that was not written. Three
    /// writes per put of rpm-kvstore made three msyncs, each a system call,
    /// on the thread that executes the puts. One entry per write (a vector
    /// append: a std::map insert per write cost more than the msyncs),
    /// merged in place whenever it has doubled, so it stays within twice
    /// the runs it holds.
    bool local_msync = false;
    std::vector<pmem::detail::Extent> local_dirty;
    std::size_t local_dirty_merge_at = 4096;
    /// Flushes local_dirty (issue_mu held).
    void flush_local_dirty();
    /// Keep a small write for the commit; false when it must go now.
    bool defer(std::uint64_t region_offset, std::span<const std::byte> bytes);
    /// The waiting writes, their slices pointing into the returned owner
    /// (null when none wait); `deferred` is empty after.
    std::shared_ptr<const replication::Deferred> take_deferred();
    /// Send the waiting writes now, as writes: before anything is sent
    /// that a member must apply after them.
    void spill_deferred();
    /// One write to every live member (a failed one records it as missed);
    /// `keep` owns `bytes` until every member is done with them.
    void send_writes(std::uint64_t region_offset, std::span<const std::byte> bytes, bool atomic,
                     std::shared_ptr<const void> keep);
    void extend_high_water(std::uint64_t end);
    Lsn issue_flushes();
    /// issue_flushes' steps: under mu, each live member's flush of what it
    /// was sent since its last one (and of the waiting writes, `batch`);
    /// then, mu released, the flushes (and the batch's persist) sent.
    struct MemberFlush;
    std::vector<MemberFlush> plan_flushes(Lsn target, const std::shared_ptr<const replication::Deferred>& batch,
                                          std::vector<std::pair<Frontier, Lsn>>& notes);
    void send_flushes(std::vector<MemberFlush>& flushes, const std::shared_ptr<const replication::Deferred>& batch);
    /// Replicator::persist when no member has unflushed writes: the slices
    /// (region offsets) and their flush as one persist request per member.
    Lsn persist_slices(std::span<const WriteSlice> slices);
    [[nodiscard]] bool nothing_unflushed() const;
    /// Wait until `target` is on a quorum, polling the rdma:// members'
    /// completions when `holds` has any, else driving the replicas' I/O
    /// group when `drive` is given (both taken before the requests were sent).
    Result<Lsn> wait_quorum(Lsn target, IoGroup::Drive* drive, replication::Holds* holds = nullptr);
    /// Wake everyone waiting for a frontier or a failure: cv, and a
    /// committing thread polling the I/O group or its members.
    void wake_waiters() noexcept;
    // poll_members.cpp: the committing thread polls its rdma:// members
    /// Holds on the members' completions (client::PollHold): empty when no
    /// member is rdma:// or another committing thread holds them.
    replication::Holds hold_members();
    /// Poll the holds' completions until `done` or `deadline` (then false),
    /// spinning and sleeping as the members' CompletionMode says.
    bool poll_until(replication::Holds& holds, const std::function<bool()>& done, Clock::time_point deadline);
    /// Wakes the committing thread asleep in poll() on its members'
    /// descriptors; "spinning" (a notify only sets the flag) whenever it is
    /// not asleep there, so wake_waiters costs no system call then.
    Wakeup poll_wake{true};
    void send_heartbeat(std::size_t i);
    // completion.cpp (mu held unless said otherwise)
    void on_write_done(std::size_t i, std::uint64_t epoch, Result<void> r);
    void on_flush_done(std::size_t i, std::uint64_t epoch, std::uint64_t flush_id, Result<void> r);
    /// A heartbeat's flush answered: a write's completion and a round trip.
    void on_heartbeat_done(std::size_t i, std::uint64_t epoch, Clock::time_point sent, Result<void> r);
    /// The monitor's check: a live member whose round trips' p90 passed
    /// degraded_round_trip() is degraded (an event), and healthy again once
    /// it is back under it.
    void check_degraded_locked(replication::Member& m);
    [[nodiscard]] std::chrono::microseconds degraded_round_trip() const;
    void fail_locked(replication::Member& m, Error why);
    void progress_locked(replication::Member& m);
    void recompute_locked(std::vector<std::pair<Frontier, Lsn>>& notes);
    void notify(const std::vector<std::pair<Frontier, Lsn>>& notes);  // mu not held
    [[nodiscard]] unsigned counted_live_locked() const;
    // resync.cpp: make member i equal to the local copy, then let it count.
    // With full, compare [0, high_water) chunk by chunk and write what
    // differs; else copy the `missed` lines (region offsets).
    Result<void> resync(std::size_t i, bool full, const replication::LineSet& missed, ReplicaEvent::Kind kind);
    /// A full resync's step: read the member's chunk, send ours if it differs.
    Result<void> compare_chunk(std::size_t i, std::uint64_t region_offset, std::size_t length);
    /// What the member missed, as vectored persists (resync_batch.cpp).
    Result<void> copy_missed(std::size_t i, std::uint64_t epoch, const replication::LineSet& missed);
    Result<void> write_member_header(std::size_t i);
    Result<void> flush_member(std::size_t i);
    // monitor.cpp
    /// Connect a replica, open its region, read its header.
    struct Dialed {
        Connection conn;
        RemoteRegion region;
        replication::DecodedHeader header;
    };
    Result<Dialed> dial(const ReplicaSpec& spec) const;
    /// Put a dialed connection in place as member i (state syncing), unless
    /// it is no longer away (another attempt connected first: nullopt, and
    /// `d` is left to the caller); else whether it needs a full compare,
    /// and the ranges it missed. Called with issue_mu held.
    std::optional<bool> install(std::size_t i, Dialed& d, replication::LineSet& missed);
    void start_threads();
    void monitor_loop();
    void syncer_loop();
    /// Start an attempt for member i in a free slot, if one is free (mu held
    /// by `lock`, released while the thread starts).
    void start_attempt(std::unique_lock<std::mutex>& lock, replication::Member& m);
    /// How long after its last attempt began member m's next may begin.
    [[nodiscard]] Clock::duration attempt_spacing(const replication::Member& m) const;
    /// One reconnect attempt of member i, in `slot`: dial, install, resync.
    void attempt(std::size_t i, std::size_t slot);
    /// An attempt's end (mu held): its slot freed, a failure recorded.
    void attempt_ended_locked(replication::Member& m, std::size_t slot, const Error& why, std::uint64_t epoch);
    /// ReplicatorOptions::dial_timeout, its default applied.
    [[nodiscard]] std::chrono::milliseconds dial_timeout() const;
};

} // namespace rpm
