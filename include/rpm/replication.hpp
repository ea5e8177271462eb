// rpm::Replicator: one primary writes a region to its local PM and to N
// remote replica regions (tcp:// and rdma://, mixed), and commit() returns
// once the configured durability holds.
//
// Semantics (docs/replication.md):
// - Every write and atomic_write gets a log sequence number (LSN), in the
//   order the calls were made. LSNs only increase; they are not dense (open()
//   takes one itself, so a fresh group's first write gets 2): compare them,
//   do not count writes with them. Writes go to the local copy at once and to
//   every live replica in parallel; none is durable until a commit covers it.
// - commit() covers every write issued before it. It returns the LSN it
//   covered once that LSN is persistent on as many members as the
//   durability asks for (a member = a replica, plus the local copy when
//   include_local is set). A success is never reported unless that many
//   members confirmed a flush covering the LSN.
// - A failed commit (errc::quorum_lost) promises nothing: the writes may be
//   durable on some members and may become durable later.
// - Members: a replica that fails (error, or no answer within
//   failure_timeout while something is outstanding; a heartbeat keeps
//   something outstanding) leaves with an event. The replicator reconnects
//   it every reconnect_interval, each failed replica on its own (one that
//   cannot be reached never delays another's return), copies what it
//   missed from the local copy and lets it count again only once that copy
//   is flushed there.
// - The local copy is always written and persisted before a commit returns,
//   whether or not it counts towards the durability; it is the source every
//   resync copies from.
// - Each region starts with a 4 KiB header (magic, group id, generation,
//   high water mark, position); offsets given to write() are relative to
//   the data area after it (data()). The generation counts opens: each
//   open() starts one more than the highest any member held. It is not
//   the fencing term (ReplicatorOptions::fencing_term), which the servers
//   keep.
#pragma once

#include <rpm/export.hpp>
#include <rpm/client.hpp>
#include <rpm/result.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

RPM_API_BEGIN

namespace rpm {

/// A log sequence number. 0 means "nothing".
using Lsn = std::uint64_t;

/// What a commit waits for.
struct Durability {
    enum class Kind { all, majority, k_of_n };
    Kind kind = Kind::majority;
    unsigned k = 0;             ///< for k_of_n: members that must hold the LSN (1..members)
    bool include_local = true;  ///< the local copy counts as one member

    /// RETURN VALUE: the policy "every member". ERRORS: none.
    static Durability all(bool include_local = true) { return {Kind::all, 0, include_local}; }
    /// RETURN VALUE: the policy "more than half of the members" (members / 2
    /// + 1). ERRORS: none.
    static Durability majority(bool include_local = true) { return {Kind::majority, 0, include_local}; }
    /// RETURN VALUE: the policy "k members". ERRORS: none here: k is checked
    /// against the members by needed_members and Replicator::open
    /// (errc::invalid_argument for 0 or more than there are).
    static Durability k_of_n(unsigned k, bool include_local = true) { return {Kind::k_of_n, k, include_local}; }
};

/// "all", "majority", "2-of-n"; with "+local" when include_local.
/// RETURN VALUE: that name, always with a suffix: "-local" when
/// include_local is not set (parse_durability reads it back).
/// ERRORS: none.
std::string to_string(const Durability& d);
/// Parse "all", "majority" or "K" (k of n), each optionally followed by
/// "+local" or "-local" (default +local).
/// "K-of-n" (as to_string writes it) is read as "K" too.
/// RETURN VALUE: the policy.
/// ERRORS: errc::invalid_argument for anything else (K must be a decimal
/// number from 1; the detail quotes the text).
Result<Durability> parse_durability(std::string_view s);

/// How many of `members` members a commit needs under `d` (what
/// Replicator::needed() reports once open).
/// RETURN VALUE: members for all, members / 2 + 1 for majority, k for
/// k_of_n.
/// ERRORS: errc::invalid_argument when the policy cannot be met even with
/// every member (k of 0, k above members, no members).
Result<unsigned> needed_members(const Durability& d, unsigned members);

/// Progress frontiers (compare Derecho's persistence callbacks).
enum class Frontier {
    local,   ///< the local copy holds every write up to here persistently
    quorum,  ///< the durability policy holds for every write up to here
    all,     ///< every member holds every write up to here persistently
};
/// RETURN VALUE: "local", "quorum" or "all" ("?" for a value outside the
/// enum). ERRORS: none.
std::string_view to_string(Frontier f) noexcept;

struct ReplicaSpec {
    std::string uri;              ///< tcp://host:port or rdma://host:port
    std::string region = "default";
    /// Client id, secret, TLS. Its timeout is replaced by
    /// ReplicatorOptions::dial_timeout.
    ClientOptions client;
    /// A forced flush method (benchmarks). Its fencing_term must stay 0:
    /// the group has one, ReplicatorOptions::fencing_term (Replicator::open
    /// refuses a replica that sets its own).
    RegionOptions region_options;
};

enum class ReplicaState {
    syncing,  ///< connected, being caught up; does not count yet
    live,     ///< counts towards durability
    failed,   ///< left; reconnect attempts continue
};
/// RETURN VALUE: "syncing", "live" or "failed" ("?" for a value outside
/// the enum). ERRORS: none.
std::string_view to_string(ReplicaState s) noexcept;

struct ReplicaEvent {
    enum class Kind {
        joined,       ///< synchronised at open, counts (told in open())
        left,         ///< failed, or unreachable at open; error says why
        catching_up,  ///< reconnected, resync started
        rejoined,     ///< resync flushed, counts again
        degraded,     ///< live, but its round trips passed degraded_round_trip; detail says by how much
        healthy,      ///< a degraded replica's round trips are back under the bound
    };
    Kind kind = Kind::joined;
    std::size_t replica = 0;  ///< index into ReplicatorOptions::replicas
    std::string uri;
    Error error;              ///< for left (and a failed resync)
    Lsn frontier = 0;         ///< the replica's persistent frontier at the event
    std::string detail;       ///< degraded, healthy: the round trips measured and the bound
};
/// RETURN VALUE: "joined", "left", "catching_up", "rejoined", "degraded"
/// or "healthy" ("?" for a value outside the enum). ERRORS: none.
std::string_view to_string(ReplicaEvent::Kind k) noexcept;

struct ReplicaStatus {
    std::string uri;
    ReplicaState state = ReplicaState::failed;
    Lsn frontier = 0;             ///< persistent up to here
    Lsn position_at_open = 0;     ///< what its header said when the primary opened
    /// The flush method its grant uses; nullopt while it has no grant (not
    /// reached yet, or failed and not yet reconnected).
    std::optional<flush::Method> method;
    /// How commit words (atomic_write) reach it: AtomicWriteStats::kind of
    /// its connection; nullopt while it has no connection (as `method`).
    /// And how many went over that connection as native atomic writes.
    std::optional<AtomicWriteKind> atomic_write;
    std::uint64_t native_atomic_writes = 0;
    std::uint64_t failures = 0;
    std::uint64_t resyncs = 0;
    /// Bytes copied to it to catch it up (every resync, from the start):
    /// what it missed, in 64-byte lines (coarser only when a bitmap of those
    /// would take over 8 MiB), or the differing chunks of a full compare.
    std::uint64_t bytes_resynced = 0;
    /// Bytes written while it was known to be away (each write counted),
    /// from the start. Writes it was sent but had not confirmed when it
    /// failed are sent again too, and count in bytes_resynced only.
    std::uint64_t bytes_missed = 0;
    /// Round trips of its last answers while live (flushes, vectored
    /// persists, heartbeats; at most RoundTrips' window of 64): how long
    /// each took from the request to its answer. 0 with no sample.
    std::chrono::microseconds round_trip_p50{0}, round_trip_p90{0}, round_trip_max{0};
    std::size_t round_trip_samples = 0;
    /// Live, with the p90 above past ReplicatorOptions::degraded_round_trip
    /// (a degraded event told it). It still counts towards durability: it
    /// answers, slowly; it is failed only past failure_timeout.
    bool degraded = false;
    std::uint64_t degradations = 0;  ///< times it became degraded, from the start
    /// How far behind it is: LSNs issued that it does not yet hold
    /// persistently (0 when it holds all), and bytes sent to it and not yet
    /// confirmed durable there, or, while it is away, bytes it must be sent
    /// when it returns (in 64-byte lines).
    Lsn lag = 0;
    std::uint64_t lag_bytes = 0;
    /// Why it left the last time (empty if it never failed). Kept after it
    /// rejoins, when `state` is live again and `failures` counts it: show it
    /// as current only while the replica is not live.
    Error last_error;
};

struct ReplicatorOptions {
    /// The primary's own region (devdax, DAX file, or a file as emulated PM).
    std::filesystem::path local_path;
    std::size_t local_size = 0;   ///< with create: size to create (header included)
    bool create = false;
    std::filesystem::path sysfs_root = "/";
    std::vector<ReplicaSpec> replicas;
    Durability durability;
    std::chrono::milliseconds heartbeat_interval{100};
    std::chrono::milliseconds failure_timeout{1000};
    std::chrono::milliseconds reconnect_interval{500};
    /// Each replica connection's ClientOptions::timeout, in place of its
    /// ReplicaSpec's: a dial (connect, handshake, region open, header read)
    /// and each synchronous read of recovery and resync waits at most this
    /// long. Every failed replica is dialled on a thread of its own (and at
    /// open all at once), so an unreachable one never holds up another's
    /// rejoin; this only bounds how long an attempt at an unreachable one
    /// lasts before the next. 0 (default): twice failure_timeout, at least
    /// 1 s.
    std::chrono::milliseconds dial_timeout{0};
    /// A live replica whose last round trips' p90 (ReplicaStatus) is above
    /// this is reported degraded: an event, ReplicaStatus::degraded. Over
    /// TCP a lossy link delays answers (each lost segment waits for its
    /// retransmission, 200 ms or more) rather than losing them, so such a
    /// replica keeps answering within failure_timeout and is never failed;
    /// this makes it visible. 0 (default): failure_timeout / 10, at least
    /// 1 ms.
    std::chrono::microseconds degraded_round_trip{0};
    /// Recovery at open: the member a later generation synchronised wins;
    /// among those, the highest rank of its data area (the local copy's
    /// included) wins, the local copy on a tie. The winner's data becomes
    /// the local copy, and every other member is made equal to it. A
    /// replicated log ranks by the length of its valid chain
    /// (ReplicatedLog::rank). Unset: the local copy wins within a
    /// generation.
    /// The span holds the data area only up to the group's high-water mark
    /// (what was ever written, in 1 MiB steps): it may be shorter than the
    /// data area, and a rank function must not read past its end.
    std::function<std::uint64_t(std::span<const std::byte>)> recovery_rank;
    /// Told of each member's changes. What open() finds (joined for each
    /// replica synchronised, left for each it could not reach, with why) is
    /// told in open(), on the caller's thread, before it returns; later
    /// events come on the replicator's monitor thread, one at a time. It
    /// must not call the replicator's commit, persist or wait (they may
    /// wait for that thread).
    std::function<void(const ReplicaEvent&)> on_event;
    /// Called when a frontier advances, on the replicas' I/O thread (one,
    /// shared by every tcp:// replica connection), the monitor's or the
    /// caller's; must not block or call back into the replicator: a blocked
    /// callback holds up every replica's answers. Calls from different threads may arrive out of order:
    /// a frontier is the largest LSN reported for it.
    std::function<void(Frontier, Lsn)> on_progress;
    /// A replica whose region holds another group's data is refused unless set.
    bool adopt_foreign = false;
    /// This primary's fencing term, the token that orders primaries
    /// (docs/replication.md, "Fencing"); 0 = none. Every replica region is
    /// opened with it (as RegionOptions::fencing_term; a ReplicaSpec may
    /// not set its own). A replica server that has accepted a newer one
    /// refuses it: open fails with errc::fenced, and a running replicator
    /// that learns it (a replica's goodbye, a refused reconnect) fails
    /// every later write, persist and commit with errc::fenced. Give each
    /// new primary a larger fencing term than any before it (a
    /// coordinator's revision: rpm::Coordinator, Leader::fencing_term).
    std::uint64_t fencing_term = 0;
};

/// Bytes at the start of every member's region reserved for the header.
inline constexpr std::size_t kReplicaHeaderSize = 4096;

/// One primary's replicated region. Every call below is for a Replicator
/// that open() returned; a moved-from one supports only assignment and
/// destruction.
class Replicator {
public:
    /// Open the local region, connect to every replica, recover, and make
    /// every reachable member equal to the most advanced one (see
    /// recovery_rank) over the bytes ever written.
    /// RETURN VALUE: a replicator whose members are all at the same LSN.
    /// A replica that could not be reached, or whose catch-up failed here
    /// (a left event), starts failed and is reconnected in the background.
    /// ERRORS: errc::invalid_argument (no local path, a replica without a
    /// uri or listed twice, a durability that cannot be met even with every
    /// member, k of 0); the errors of
    /// pmem::Region::open for the local region; errc::bad_size (a replica
    /// region smaller than the local one); errc::bad_config (a region that
    /// holds another group's data, without adopt_foreign); errc::quorum_lost
    /// (more than needed - 1 members unreachable, so committed data could be
    /// missing; detail lists each unreachable replica's error; a blank
    /// replica counts as reachable: a new member holding nothing).
    /// In more detail:
    /// - errc::invalid_argument: also heartbeat_interval, failure_timeout
    ///   or reconnect_interval not positive, dial_timeout or
    ///   degraded_round_trip negative; "listed twice" means the same
    ///   uri and region; and a replica's own refusal: a bad uri
    ///   (Client::connect), an unknown or not granted region, or a forced
    ///   method unsafe for it (Connection::open_region); a ReplicaSpec
    ///   whose region_options sets a fencing_term (the group's one is
    ///   ReplicatorOptions::fencing_term; nothing is opened)
    /// - errc::bad_size: also a local region under 8 KiB (the 4 KiB header
    ///   and at least 4 KiB of data)
    /// - errc::auth_failed: a replica refused authentication (an unknown
    ///   client id or a wrong secret); errc::permission_denied: it refused
    ///   this client a fencing term (ServerOptions::fencers)
    /// - errc::fenced: a replica has accepted a newer fencing term than
    ///   fencing_term (this primary must not serve)
    /// - errc::quorum_lost is checked only when the local copy or a
    ///   reachable replica already holds the group: a blank local copy
    ///   that reaches no replica starts a new group (replicas that hold the
    ///   old one are then refused with errc::bad_config when they return)
    /// - the errors of RemoteRegion::read (e.g. errc::io_error) while
    ///   reading a replica's data area for recovery (every replica's
    ///   with recovery_rank set; else the winner's, when a replica wins)
    /// Any other failure to reach a replica (errc::io_error,
    /// errc::rdma_unavailable, errc::unsupported, ...) only makes it
    /// unreachable.
    static Result<Replicator> open(ReplicatorOptions opts);

    /// Take over `other`'s replicator; `other` is left moved-from.
    /// RETURN VALUE: none (a constructor). ERRORS: none.
    Replicator(Replicator&&) noexcept;
    /// Let go of this object's replicator (as the destructor), then take
    /// over `other`'s. RETURN VALUE: *this. ERRORS: none.
    Replicator& operator=(Replicator&&) noexcept;
    /// Writes not covered by a successful commit may or may not be durable
    /// on any member. RETURN VALUE: none. ERRORS: none.
    ~Replicator();  ///< stops the monitor, closes connections; commits nothing

    /// Write into the data area at `offset`; the bytes are copied before
    /// the call returns. Up to 16 KiB they wait for the next commit, which
    /// sends them with their flush as one request per replica; larger ones
    /// are sent at once (docs/replication.md, "LSNs").
    /// RETURN VALUE: the write's LSN.
    /// The LSN is returned once the local copy holds the bytes, whatever the
    /// replicas make of them: a replica that fails the write leaves (a left
    /// event) and is caught up later, and the next commit reports
    /// errc::quorum_lost if too few members remain.
    /// ERRORS: errc::invalid_argument (range outside the data area);
    /// errc::fenced once a replica said a newer fencing term took over
    /// (checked after the range; nothing is written).
    Result<Lsn> write(std::uint64_t offset, std::span<const std::byte> data);
    /// An 8-byte aligned 8-byte store that no member ever shows torn.
    /// RETURN VALUE: the write's LSN, as for write.
    /// ERRORS: as write, and errc::invalid_argument when misaligned.
    Result<Lsn> atomic_write(std::uint64_t offset, std::uint64_t value);
    /// Make every write issued before the call durable per the policy.
    /// The local copy is persisted first (that step reports no errors). A
    /// member's failed flush is not returned: that member leaves.
    /// RETURN VALUE: the LSN covered (the last one issued).
    /// ERRORS: errc::quorum_lost when the members still live cannot meet
    /// the policy (detail: live/needed and the last member error);
    /// errc::fenced once a replica said a newer fencing term took over
    /// (fencing_term): this replicator may no longer change any replica.
    /// errc::quorum_lost also when no quorum of flushes has answered within
    /// 4 x (failure_timeout + heartbeat_interval). After either error the
    /// writes may be durable on some members (the file comment).
    Result<Lsn> commit();
    /// write + commit, sent as one persist request per member (one round
    /// trip each) unless some member holds writes that no commit flushed.
    /// RETURN VALUE: the LSN of the write, once it is durable per the policy.
    /// ERRORS: as persist(slices) with one slice: errc::invalid_argument
    /// (range outside the data area: nothing is written); errc::fenced;
    /// errc::quorum_lost.
    Result<Lsn> persist(std::uint64_t offset, std::span<const std::byte> data);
    /// Vectored: every slice written (data-area offsets), then all of them
    /// made durable under one LSN, as one persist request per member. An
    /// 8-byte slice at an 8-byte aligned offset is stored whole, as
    /// atomic_write does (a log record's commit word).
    /// RETURN VALUE: the one LSN of all the slices, once they are durable per
    /// the policy.
    /// ERRORS: errc::invalid_argument (no slice, more than
    /// kMaxPersistSlices, or one outside the data area: nothing is written);
    /// the errors of commit().
    /// errc::fenced is checked before anything is written.
    Result<Lsn> persist(std::span<const WriteSlice> slices);

    /// RETURN VALUE: the highest LSN frontier `f` has reached (at open: the
    /// LSN recovered); frontiers never move back. ERRORS: none.
    [[nodiscard]] Lsn frontier(Frontier f) const noexcept;
    /// RETURN VALUE: the last LSN issued (at open: the LSN recovered).
    /// ERRORS: none.
    [[nodiscard]] Lsn last_lsn() const noexcept;  ///< the last LSN issued
    /// Wait until frontier `f` reaches `lsn`, for at most `timeout` (over
    /// ten years counts as ten years, as for every interval and timeout of
    /// ReplicatorOptions).
    /// RETURN VALUE: {} once it has (at once when it already had).
    /// ERRORS: errc::quorum_lost (quorum/all can no longer advance);
    /// errc::fenced (quorum/all, once a newer primary fenced this one);
    /// errc::io_error on timeout.
    /// "Can no longer advance": quorum, fewer than needed() members live;
    /// all, any member not live. Frontier::local fails only with the
    /// timeout.
    Result<void> wait(Frontier f, Lsn lsn, std::chrono::milliseconds timeout);

    /// The local copy of the data area (reads never leave the machine).
    /// RETURN VALUE: the data area, size() bytes, as written (durable or
    /// not). ERRORS: none.
    [[nodiscard]] std::span<const std::byte> data() const noexcept;
    /// RETURN VALUE: the data area's size in bytes: the local region less
    /// its 4 KiB header. ERRORS: none.
    [[nodiscard]] std::size_t size() const noexcept;  ///< of the data area
    /// RETURN VALUE: the policy ReplicatorOptions::durability gave.
    /// ERRORS: none.
    [[nodiscard]] const Durability& durability() const noexcept;
    /// RETURN VALUE: the members the policy counts. ERRORS: none.
    [[nodiscard]] unsigned members() const noexcept;  ///< replicas (+1 with include_local)
    /// RETURN VALUE: needed_members(durability(), members()). ERRORS: none.
    [[nodiscard]] unsigned needed() const noexcept;   ///< members a commit needs
    /// RETURN VALUE: the group's generation, as this open wrote it in the
    /// replica header: one more than the highest any member held, so each
    /// open (a restart, a failover) has a larger one; recovery prefers the
    /// member a later generation synchronised. Not the fencing term
    /// (ReplicatorOptions::fencing_term), which this open only presents.
    /// ERRORS: none.
    [[nodiscard]] std::uint64_t generation() const noexcept;
    /// RETURN VALUE: each replica's status, in the order of
    /// ReplicatorOptions::replicas. ERRORS: none.
    [[nodiscard]] std::vector<ReplicaStatus> replicas() const;

    struct RPM_INTERNAL Impl;

private:
    friend class ReplicatedLog;  // a log shares the replicator's state (ReplicatedLog::open)
    explicit Replicator(std::shared_ptr<Impl> impl) noexcept;
    std::shared_ptr<Impl> impl_;
};

} // namespace rpm

RPM_API_END
