// kv::Store: a hash map in persistent memory, replicated with rpm.
//
// The Replicator's data area holds (offsets relative to Replicator::data()):
//   [0, 4096)                 KV header: "RPMKV001", slots, log offset, log length
//   [4096, 4096 + 8 * slots)  the index: open addressing, linear probing on
//                             FNV-1a(key); each entry is the log position of
//                             the key's latest record + 1 (0 = empty)
//   [log offset, +log length) an rpm::ReplicatedLog of records
//                             u8 op (1 put, 2 delete), u16 key length,
//                             u32 value length, key, value
// The log is the truth; the index is a cache of it that every open rebuilds
// from the log and repairs, so a stale or torn index (a crash between the
// append and the index store, or a failover to a replica that missed the
// index store) never shows. The layout depends on the data area's size
// alone, so a blank replica gets the same one (recovery ranks members by
// their log before any KV header is read).
#pragma once

#include <rpm/replicated_log.hpp>
#include <rpm/replication.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kv {

struct Layout {
    std::uint64_t slots = 0;
    std::uint64_t index_offset = 0;
    std::uint64_t log_offset = 0;
    std::uint64_t log_length = 0;
};

inline constexpr std::uint64_t kKvHeaderSize = 4096;
/// Smallest region (replicator header included) a store fits in.
inline constexpr std::uint64_t kMinRegionSize = 64 << 10;

/// The layout for a data area of `data_size` bytes; nullopt when too small.
std::optional<Layout> layout_for(std::uint64_t data_size) noexcept;

enum class Op : std::uint8_t { put = 1, del = 2 };

struct Record {
    Op op = Op::put;
    std::string_view key;
    std::string_view value;
};

std::vector<std::byte> encode(Op op, std::string_view key, std::string_view value);
/// nullopt when the payload is not a record of ours.
std::optional<Record> decode(std::span<const std::byte> payload) noexcept;

/// Keys and values are byte strings; a key is 1..65535 bytes.
rpm::Result<void> check_key(std::string_view key);

struct Stats {
    std::uint64_t records = 0;     ///< in the log (puts and deletes)
    std::uint64_t live_keys = 0;
    std::uint64_t slots = 0;
    std::uint64_t log_used = 0;    ///< bytes, log header included
    std::uint64_t log_capacity = 0;
    std::uint64_t generation = 0;  ///< Replicator::generation(): opens of the group so far
    rpm::Lsn local = 0, quorum = 0, all = 0;
    std::string durability;
    unsigned members = 0, needed = 0;
    std::vector<rpm::ReplicaStatus> replicas;
};

/// What open() found and fixed.
struct OpenReport {
    bool formatted = false;          ///< the region held no store: one was made
    std::uint64_t repaired_slots = 0;
    std::uint64_t malformed = 0;     ///< valid log records that are not ours (skipped)
};

class Store {
public:
    /// Open the replicator (its recovery_rank is set here, ranking members
    /// by their log), format a blank region, rebuild and repair the index.
    /// ERRORS: those of Replicator::open and ReplicatedLog::open;
    /// errc::bad_size (region too small); errc::bad_config (a KV header of
    /// another layout); errc::bad_size when the log holds more keys than slots.
    static rpm::Result<std::unique_ptr<Store>> open(rpm::ReplicatorOptions opts);

    /// Append, index, commit: success means durable per the durability.
    /// ERRORS: errc::invalid_argument (key); errc::bad_size (log or index
    /// full); errc::quorum_lost (nothing promised; the record may survive).
    rpm::Result<void> put(std::string_view key, std::string_view value);
    /// false when the key is not there (nothing written).
    rpm::Result<bool> remove(std::string_view key);
    /// Start loading the index slot where `key`'s probe begins, and return:
    /// a batch of commands hints every key first, so the cache and TLB
    /// misses of their random slots overlap instead of queueing one behind
    /// the other (at 8 clients x 16 pipelined SETs the probe's load was a
    /// quarter of the primary's CPU). Touches nothing; no error.
    void prefetch(std::string_view key) const noexcept;
    [[nodiscard]] std::optional<std::string> get(std::string_view key) const;
    /// Append and index without committing: for group commit (a node
    /// commits once for every client's puts), and for the planted bug of
    /// `load --fault` (which acknowledges before its commit()).
    rpm::Result<void> put_uncommitted(std::string_view key, std::string_view value);
    rpm::Result<bool> remove_uncommitted(std::string_view key);
    rpm::Result<rpm::Lsn> commit() { return r_.commit(); }

    /// Every live key with its value, in index order.
    void for_each_live(const std::function<void(std::string_view, std::string_view)>& fn) const;
    [[nodiscard]] Stats stats() const;
    /// Keys with a value now (stats().live_keys, without the rest).
    [[nodiscard]] std::uint64_t live_keys() const noexcept { return live_; }
    [[nodiscard]] const OpenReport& report() const noexcept { return report_; }
    [[nodiscard]] const Layout& layout() const noexcept { return layout_; }

    Store(const Store&) = delete;
    Store& operator=(const Store&) = delete;

private:
    Store(rpm::Replicator r, Layout l) : r_(std::move(r)), layout_(l) {}
    struct Slot {
        std::uint64_t slot = 0;
        std::uint64_t entry = 0;  ///< 0: empty slot, key absent
        bool found = false;       ///< false and entry != 0 never happens
        bool live = false;        ///< found, and its record a put (not a delete's tombstone)
    };
    rpm::Result<void> format_if_blank();
    rpm::Result<void> rebuild_index();
    rpm::Result<void> append_and_index(Op op, std::string_view key, std::string_view value);
    [[nodiscard]] std::optional<Slot> probe(std::string_view key,
                                            const std::function<std::uint64_t(std::uint64_t)>& entry_at) const;
    [[nodiscard]] std::optional<Slot> probe_local(std::string_view key) const;
    [[nodiscard]] std::uint64_t local_entry(std::uint64_t slot) const noexcept;
    [[nodiscard]] std::optional<Record> record_at(std::uint64_t entry) const noexcept;
    void count_live(Op op, bool was_live) noexcept {
        if (op == Op::put && !was_live) ++live_;
        if (op == Op::del && was_live) --live_;
    }

    rpm::Replicator r_;  // before log_: the log points at it
    Layout layout_;
    std::optional<rpm::ReplicatedLog> log_;
    std::uint64_t live_ = 0;
    OpenReport report_;
};

/// The key -> value map a region file's log holds, read with no replicator
/// and no network (a lost primary's replica, or a comparison of members).
/// `data` is the data area: the region minus rpm::kReplicaHeaderSize.
/// ERRORS: errc::bad_size (too small); errc::invalid_argument (no log there).
rpm::Result<std::map<std::string, std::string>> scan_region(std::span<const std::byte> data);

} // namespace kv
