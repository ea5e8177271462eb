// rpm::MrPool: pools of registered buffers (memory regions, MRs), after the
// "mobile MR" scheme of seed 002 (workload-driven MR registration).
//
// Registering memory with an RNIC is slow (the HCA is involved) and a
// device has a budget of MRs. Giving every connection a fixed share wastes
// the budget; registering on demand stalls the I/O path. A pool keeps
// registered entries in three levels:
//
//   L1      per connection (MrPoolUser), a few entries, no lock: the owner
//           calls get/put from one thread at a time (its own locking);
//   L2      4 to 8 shared buckets; a new user joins the least-used bucket;
//   global  one free list per pool, i.e. per device.
//
// get() never blocks and never registers: it returns an entry or nullptr
// ("none now") at once. A background thread registers more entries when the
// global free count falls below a threshold, moves L2 entries that stayed
// idle back to the global pool, and deregisters idle global entries while
// more than `floor` are registered. The pool never holds more than `budget`
// registrations.
//
// What "register" means is the registrar's business: ibv_reg_mr through
// rpm's verbs layer on RDMA (src/transport/rdma/verbs), mlock (pinned
// memory accounting) for the TCP transport, a fake in tests.
#pragma once

#include <rpm/export.hpp>
#include <rpm/result.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

RPM_API_BEGIN

namespace rpm {

/// How a pool registers memory with its device. Called from the pool's
/// background thread and from MrPool::create/add/grow, never from get/put.
class MrRegistrar {
public:
    /// Called when the pool ends, after every entry was deregistered.
    /// RETURN VALUE: none. ERRORS: none.
    virtual ~MrRegistrar() = default;
    /// Register `mem` (page-aligned). The handle is what the transport
    /// passes to the device (an rdma::LocalMr* on RDMA); it may be null.
    /// RETURN VALUE: the handle, given back to deregister_memory and
    /// MrBuffer::handle.
    /// ERRORS: any rpm::Error; the pool counts it and retries later.
    /// (create, grow and add return it to their caller; every failure
    /// counts in registration_failures.) rpm's RDMA registrar fails with
    /// errc::rdma_unavailable (ibv_reg_mr failed).
    virtual Result<void*> register_memory(std::span<std::byte> mem) = 0;
    /// Undo register_memory. Must not fail.
    /// RETURN VALUE: none. ERRORS: none (an error of the device's own is
    /// the registrar's to swallow).
    virtual void deregister_memory(void* handle, std::span<std::byte> mem) noexcept = 0;
    /// The device's name for messages and statistics ("rxe0", "pinned").
    /// RETURN VALUE: that name (MrPoolStats::device). ERRORS: none.
    [[nodiscard]] virtual std::string device() const = 0;
};

/// A registrar that pins memory with mlock(2): the TCP transport's
/// "registration", so pinned bytes are accounted like MRs are on RDMA.
/// ERRORS from register_memory: errc::permission_denied when RLIMIT_MEMLOCK
/// forbids it (detail: the limit), errc::io_error for any other failure.
/// (permission_denied is mlock's EPERM or ENOMEM.) Its handle is the
/// memory's address; deregister_memory is munlock(2); device() is "pinned".
/// RETURN VALUE: a new registrar. ERRORS (of this call): none.
std::unique_ptr<MrRegistrar> mr_registrar_pinned();

struct MrPoolOptions {
    std::size_t buffer_size = 64 * 1024;  ///< bytes per entry, rounded up to the page size
    std::uint32_t budget = 2048;          ///< hard limit of registered entries
    std::uint32_t initial = 64;           ///< registered by create(), before it returns
    std::uint32_t floor = 64;             ///< idle reclaim never goes below this many registered
    std::uint32_t low_water = 16;         ///< global free count below this: register more (and idle
                                          ///< reclaim leaves at least this many free, not to thrash)
    std::uint32_t replenish_batch = 16;   ///< entries registered (or deregistered) per round
    std::uint32_t l1_entries = 8;         ///< default L1 size of a user (create_user(0))
    std::uint32_t l2_buckets = 4;         ///< 4 to 8
    std::uint32_t l2_entries = 32;        ///< capacity of each L2 bucket
    std::chrono::milliseconds idle_time{100};        ///< unused this long: L2 -> global, global -> deregistered
                                                     ///< (L1 entries are never aged; add() entries never
                                                     ///< deregistered for idleness)
    std::chrono::microseconds monitor_interval{1000}; ///< the background thread's period (seed: 1 ms)
};

/// Counters since create() and current levels. Read without stopping the pool.
struct MrPoolStats {
    std::uint64_t l1_hits = 0;         ///< gets served from the user's L1
    std::uint64_t l2_hits = 0;         ///< ... from the user's L2 bucket
    std::uint64_t global_hits = 0;     ///< ... from the global pool
    std::uint64_t none_now = 0;        ///< gets that found nothing (the caller waits or falls back)
    std::uint64_t stalls_avoided = 0;  ///< gets served by an entry the background thread registered:
                                       ///< registration on demand would have stalled there
    std::uint64_t registrations = 0;   ///< successful register_memory calls
    std::uint64_t registration_failures = 0;
    std::uint64_t deregistrations = 0;
    std::uint64_t l2_reclaims = 0;     ///< idle L2 entries moved back to the global pool
    std::uint64_t l1_trims = 0;        ///< L1 entries given back when the pool ran short
                                       ///< (MrPoolUser::trim() is not counted)
    std::uint64_t idle_deregistered = 0; ///< idle global entries deregistered (above the floor)
    std::uint64_t monitor_rounds = 0;  ///< rounds of the background thread (fewer in a quiet pool:
                                       ///< it backs off up to 1 s until an entry moves or a get misses)
    std::uint32_t registered = 0;      ///< entries registered now
    std::uint32_t free_global = 0;     ///< free entries in the global pool now
    std::uint32_t free_l2 = 0;         ///< free entries in all L2 buckets now
    std::uint32_t in_use = 0;          ///< entries handed out by get() and not yet put back
    std::uint32_t users = 0;           ///< live MrPoolUsers
    std::uint32_t budget = 0;
    std::size_t buffer_size = 0;
    std::string device;
};

class MrPool;
class MrPoolUser;
namespace detail {
class RPM_INTERNAL MrPoolState;
struct RPM_INTERNAL MrEntry;
} // namespace detail

/// One registered entry, owned by the pool. Valid between get() and put().
class MrBuffer {
public:
    /// RETURN VALUE: the entry's memory (page-aligned). ERRORS: none.
    [[nodiscard]] std::byte* data() const noexcept;
    /// RETURN VALUE: the entry's size: MrPoolOptions::buffer_size rounded
    /// up to the page size. ERRORS: none.
    [[nodiscard]] std::size_t size() const noexcept;
    /// RETURN VALUE: {data(), size()}. ERRORS: none.
    [[nodiscard]] std::span<std::byte> bytes() const noexcept { return {data(), size()}; }
    /// The registrar's handle (an rdma::LocalMr* on RDMA).
    /// RETURN VALUE: that handle, as register_memory returned it (may be
    /// null). ERRORS: none.
    [[nodiscard]] void* handle() const noexcept;
    /// Stable while registered: what MrPool::remove takes.
    /// RETURN VALUE: the entry's id. ERRORS: none.
    [[nodiscard]] std::uint32_t id() const noexcept;

private:
    friend class detail::MrPoolState;
    MrBuffer() = default;
    detail::MrEntry* entry_ = nullptr;
};

/// One connection's handle on a pool: its L1 cache and its L2 bucket.
/// Not thread-safe: one thread at a time (the connection's own locking).
/// Put back every buffer before it is destroyed; its L1 entries then
/// return to the pool.
/// A moved-from user supports only assignment and destruction.
class MrPoolUser {
public:
    /// Take over `other`'s caches; `other` is left moved-from.
    /// RETURN VALUE: none (a constructor). ERRORS: none.
    MrPoolUser(MrPoolUser&&) noexcept;
    /// Leave the pool as the destructor does, then take over `other`'s
    /// caches. RETURN VALUE: *this. ERRORS: none.
    MrPoolUser& operator=(MrPoolUser&&) noexcept;
    /// Return the free L1 entries to the global pool and leave the bucket
    /// (entries still out are not returned). RETURN VALUE: none.
    /// ERRORS: none.
    ~MrPoolUser();

    /// An entry, or nullptr ("none now") at once: never blocks, never
    /// registers. Order: L1, the user's L2 bucket, the global pool, then the
    /// other L2 buckets (before calling it a miss). A miss wakes the
    /// background thread to register more (within the budget).
    /// Entries removed with MrPool::remove are skipped (and deregistered).
    /// RETURN VALUE: the entry, valid until put(); nullptr on a miss
    /// (counted as none_now). ERRORS: none.
    MrBuffer* get() noexcept;
    /// Give `b` back: to L1 if it came from L1, else to the user's L2 bucket
    /// if it has room, else to the global pool. The user's L1 entries, free
    /// or out, never number more than l1_size(): an entry from elsewhere
    /// joins the L1 only while there are fewer (an L1 that started short).
    /// An entry removed with MrPool::remove while out is deregistered here.
    /// When the pool has asked users to give back (it ran empty and gets
    /// missed), only entries that came from L1 return to L1, and L1 then
    /// keeps half its size, giving the rest to the global pool (l1_trims).
    /// A null `b` is ignored.
    /// `b` must have come from get() on a user of the same pool.
    /// RETURN VALUE: none. ERRORS: none.
    void put(MrBuffer* b) noexcept;
    /// Return every free L1 entry to the pool (an idle connection).
    /// They go to the global pool; the L1 refills from later puts.
    /// RETURN VALUE: none. ERRORS: none.
    void trim() noexcept;

    /// RETURN VALUE: the index of the user's L2 bucket (0 to l2_buckets - 1).
    /// ERRORS: none.
    [[nodiscard]] std::uint32_t bucket() const noexcept;
    /// RETURN VALUE: the L1 size create_user gave it. ERRORS: none.
    [[nodiscard]] std::uint32_t l1_size() const noexcept;   ///< configured
    /// RETURN VALUE: the free entries in L1 now (not those out). ERRORS: none.
    [[nodiscard]] std::uint32_t l1_free() const noexcept;   ///< entries in L1 now

private:
    friend class MrPool;
    struct RPM_INTERNAL State;
    explicit MrPoolUser(std::unique_ptr<State> s) noexcept;
    std::unique_ptr<State> s_;
};

/// A pool of registered entries for one device. Create with create(); the
/// pool lives while its MrPool or any of its users does. Its calls are
/// thread-safe (a moved-from MrPool supports only destruction and
/// assignment). When the pool ends (the last of the MrPool and its users is
/// gone) its thread stops and every entry is deregistered, even one still
/// out: put every buffer back before destroying its user.
class MrPool {
public:
    /// Registers `opts.initial` entries, then starts the background thread.
    /// RETURN VALUE: the pool.
    /// ERRORS: errc::invalid_argument when an option is out of range
    /// (buffer_size 0 or above 1 TiB, l2_buckets outside 4..8, initial or
    /// floor above budget, budget 0, l1_entries 0, l2_entries 0,
    /// monitor_interval not positive, idle_time negative; detail names the
    /// option) or the registrar is null; the registrar's error when an
    /// initial registration fails (none then stays registered).
    /// Also errc::io_error when an entry's memory cannot be allocated.
    /// low_water and replenish_batch are not checked.
    static Result<MrPool> create(std::unique_ptr<MrRegistrar> registrar, MrPoolOptions opts = {});

    /// Take over `other`'s pool; `other` is left moved-from.
    /// RETURN VALUE: none (a constructor). ERRORS: none.
    MrPool(MrPool&&) noexcept;
    /// Let go of this object's pool (as the destructor), then take over
    /// `other`'s. RETURN VALUE: *this. ERRORS: none.
    MrPool& operator=(MrPool&&) noexcept;
    /// Let go of the pool; it ends once no user of it remains either.
    /// RETURN VALUE: none. ERRORS: none.
    ~MrPool();

    /// A user (connection) with `l1_entries` in its L1 (0: options().l1_entries),
    /// filled from the global pool as far as it can be; it joins the L2
    /// bucket with the fewest users.
    /// RETURN VALUE: the user; its L1 may start short (or empty) when the
    /// global pool has too few free entries.
    /// ERRORS: errc::invalid_argument when l1_entries exceeds the budget.
    /// (0 takes options().l1_entries, at most the budget.)
    Result<MrPoolUser> create_user(std::uint32_t l1_entries = 0);

    /// Register `n` more entries now (blocking: not for the I/O path).
    /// All or nothing: after an error none of the `n` stays registered.
    /// RETURN VALUE: {} once all `n` are free in the global pool (n = 0:
    /// nothing to do).
    /// ERRORS: errc::mr_budget_exhausted when that would pass the budget;
    /// the registrar's error.
    /// Also errc::io_error when an entry's memory cannot be allocated.
    Result<void> grow(std::uint32_t n);
    /// Register caller-owned memory (size >= buffer_size is cut into entries
    /// of buffer_size; page-aligned) as entries of the global pool.
    /// RETURN VALUE: the id of the first entry; they are consecutive.
    /// The pool never frees this memory and never deregisters these entries
    /// for idleness: they stay until remove() or the pool's end.
    /// ERRORS: errc::invalid_argument (unaligned or smaller than one entry),
    /// errc::mr_budget_exhausted, the registrar's error (nothing added).
    /// Bytes past the last whole entry are not used. mr_budget_exhausted
    /// when the entries it makes would pass the budget.
    Result<std::uint32_t> add(std::span<std::byte> memory);
    /// Deregister entry `id`: now if it is free, when it is put back if it is
    /// out or cached in an L1 (an L1 never hands it out again). ERRORS:
    /// errc::invalid_argument for an unknown id or one already removed or
    /// deregistered (ids are never reused).
    /// RETURN VALUE: {} once the entry is marked (it may be deregistered
    /// later, as said). "Deregistered" includes one the idle reclaim took.
    Result<void> remove(std::uint32_t id);

    /// RETURN VALUE: the counters and current levels (MrPoolStats), read
    /// without stopping the pool: the fields are not one snapshot.
    /// ERRORS: none.
    [[nodiscard]] MrPoolStats stats() const;
    /// The options given to create(), buffer_size rounded up to the page size.
    /// RETURN VALUE: those options. ERRORS: none.
    [[nodiscard]] const MrPoolOptions& options() const noexcept;

private:
    RPM_INTERNAL explicit MrPool(std::shared_ptr<detail::MrPoolState> state) noexcept;
    std::shared_ptr<detail::MrPoolState> state_;
};

} // namespace rpm

RPM_API_END
