// One WAL file: the base file system's file (written, never fsync'd) and
// its slot's log. Appends go to both, the local file first, so the file
// and the log hold the same bytes; Sync and Fsync are a commit of the log.
#pragma once

#include "pool.hpp"

namespace rpm_rocksdb {

class WalFile final : public rocksdb::FSWritableFileOwnerWrapper {
public:
    WalFile(std::unique_ptr<rocksdb::FSWritableFile> local, Pool& pool, Slot& slot)
        : FSWritableFileOwnerWrapper(std::move(local)), pool_(pool), slot_(slot) {}

    rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& o,
                             rocksdb::IODebugContext* dbg) override;
    // With checksum handoff RocksDB calls this form; the wrapper's would
    // reach the local file only.
    rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& o,
                             const rocksdb::DataVerificationInfo& info, rocksdb::IODebugContext* dbg) override;
    rocksdb::IOStatus PositionedAppend(const rocksdb::Slice&, uint64_t, const rocksdb::IOOptions&,
                                       rocksdb::IODebugContext*) override;
    rocksdb::IOStatus PositionedAppend(const rocksdb::Slice&, uint64_t, const rocksdb::IOOptions&,
                                       const rocksdb::DataVerificationInfo&, rocksdb::IODebugContext*) override;
    rocksdb::IOStatus Sync(const rocksdb::IOOptions& o, rocksdb::IODebugContext* dbg) override;
    rocksdb::IOStatus Fsync(const rocksdb::IOOptions& o, rocksdb::IODebugContext* dbg) override;
    rocksdb::IOStatus RangeSync(uint64_t, uint64_t, const rocksdb::IOOptions&, rocksdb::IODebugContext*) override;
    // A sync reads the slot's last LSN under its lock and commits, which
    // covers every append before it: safe beside an append of the same
    // file, so RocksDB's SyncWAL (and FlushWAL(true)) may call it from
    // another thread (it refuses when this says false).
    [[nodiscard]] bool IsSyncThreadSafe() const override { return true; }
    [[nodiscard]] bool use_direct_io() const override { return false; }

private:
    rocksdb::IOStatus append(const rocksdb::Slice& data);
    Pool& pool_;
    Slot& slot_;
};

} // namespace rpm_rocksdb
