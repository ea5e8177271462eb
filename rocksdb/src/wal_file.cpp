#include "wal_file.hpp"

#include "status.hpp"

namespace rpm_rocksdb {

rocksdb::IOStatus WalFile::append(const rocksdb::Slice& data) {
    auto a = pool_.append(slot_, std::as_bytes(std::span(data.data(), data.size())));
    return a ? rocksdb::IOStatus::OK() : to_io_status(a.error());
}

rocksdb::IOStatus WalFile::Append(const rocksdb::Slice& data, const rocksdb::IOOptions& o, rocksdb::IODebugContext* dbg) {
    auto s = target()->Append(data, o, dbg);
    return s.ok() ? append(data) : s;
}

rocksdb::IOStatus WalFile::Append(const rocksdb::Slice& data, const rocksdb::IOOptions& o,
                                  const rocksdb::DataVerificationInfo& info, rocksdb::IODebugContext* dbg) {
    auto s = target()->Append(data, o, info, dbg);
    return s.ok() ? append(data) : s;
}

// Only direct I/O writes at an offset; the log mirrors appends in order.
rocksdb::IOStatus WalFile::PositionedAppend(const rocksdb::Slice&, uint64_t, const rocksdb::IOOptions&,
                                            rocksdb::IODebugContext*) {
    return rocksdb::IOStatus::NotSupported("rpm: a WAL file takes appends only (no direct I/O)");
}

rocksdb::IOStatus WalFile::PositionedAppend(const rocksdb::Slice& d, uint64_t off, const rocksdb::IOOptions& o,
                                            const rocksdb::DataVerificationInfo&, rocksdb::IODebugContext* dbg) {
    return PositionedAppend(d, off, o, dbg);
}

rocksdb::IOStatus WalFile::Sync(const rocksdb::IOOptions&, rocksdb::IODebugContext*) {
    auto s = pool_.sync(slot_);
    return s ? rocksdb::IOStatus::OK() : to_io_status(s.error());
}

rocksdb::IOStatus WalFile::Fsync(const rocksdb::IOOptions& o, rocksdb::IODebugContext* dbg) { return Sync(o, dbg); }

// The local file is never made durable: the replicas are.
rocksdb::IOStatus WalFile::RangeSync(uint64_t, uint64_t, const rocksdb::IOOptions&, rocksdb::IODebugContext*) {
    return rocksdb::IOStatus::OK();
}

} // namespace rpm_rocksdb
