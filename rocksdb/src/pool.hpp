// The replicated side of the plug-in: one Replicator whose data area holds
// the plug-in's header and a fixed number of slots, each a ReplicatedLog
// mirroring one WAL file. Record 1 of a slot names the file; records 2..
// are its bytes in order, so concatenating them gives the file. A slot
// whose log has no record is free.
#pragma once

#include "rpm_rocksdb/file_system.hpp"

#include <rpm/replicated_log.hpp>

#include <atomic>
#include <map>
#include <mutex>

namespace rpm_rocksdb {

/// One WAL file's log. `mu` orders its appends and syncs (RocksDB appends
/// from its writer and may sync from its flush thread).
struct Slot {
    explicit Slot(rpm::ReplicatedLog l) : log(std::move(l)) {}
    std::mutex mu;
    rpm::ReplicatedLog log;
    std::string path;        ///< the file it mirrors, absolute; empty = free
    rpm::Lsn last_lsn = 0;   ///< of its last append
};

/// A WAL file restored from a slot (or a slot's file found intact).
struct Mirrored {
    std::string path;
    std::vector<std::byte> bytes;
};

class Pool {
public:
    /// The Replicator, the header and every slot's log.
    static rpm::Result<std::unique_ptr<Pool>> open(const Options& o);

    /// A free slot for `path` (absolute); the one `path` already has, emptied,
    /// when it has one. errc::bad_size when every slot is taken.
    rpm::Result<Slot*> take(const std::string& path);
    /// Free `path`'s slot, if it has one (the file was deleted or renamed).
    rpm::Result<void> release(const std::string& path);
    /// Append `data` to `slot`'s log in records of at most kChunk bytes.
    rpm::Result<void> append(Slot& slot, std::span<const std::byte> data);
    /// Make `slot`'s appends durable per the policy: a commit, unless one
    /// already covered them. Counts in stats.
    rpm::Result<void> sync(Slot& slot);
    /// Every slot's file and bytes, as the replicated data holds them.
    std::vector<Mirrored> mirrored();

    [[nodiscard]] Stats stats() const;
    void count_restored(std::uint64_t bytes);
    [[nodiscard]] std::string describe() const;

    /// Payload bytes per record: an Append larger than this is split (a
    /// tcp:// replica takes at most about 1 MiB per request).
    static constexpr std::size_t kChunk = 256u << 10;

private:
    Pool(rpm::Replicator r, const Options& o) : r_(std::move(r)), options_(o) {}
    rpm::Result<void> open_slots();
    /// The commit counter goes up before every commit the plug-in makes, so
    /// a member holding a higher one holds every commit before it.
    rpm::Result<rpm::Lsn> commit();

    rpm::Replicator r_;
    Options options_;
    std::vector<std::unique_ptr<Slot>> slots_;
    std::mutex mu_;                      ///< slots_' paths; commit's counter
    std::map<std::string, Slot*> by_path_;
    std::uint64_t counter_ = 0;
    std::atomic<std::uint64_t> wal_files_{0}, restored_{0}, restored_bytes_{0}, syncs_{0}, commits_{0}, freed_{0};
};

/// The commit counter in a member's data area (rpm::ReplicatorOptions::
/// recovery_rank): 0 when the span is too short to hold it.
std::uint64_t counter_of(std::span<const std::byte> data_area) noexcept;

} // namespace rpm_rocksdb
