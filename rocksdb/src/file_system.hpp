// The FileSystem RocksDB sees: the base file system for everything, and a
// slot of the pool for every WAL file it creates.
#pragma once

#include "pool.hpp"

namespace rpm_rocksdb {

class RpmFileSystem final : public rocksdb::FileSystemWrapper {
public:
    RpmFileSystem(std::shared_ptr<rocksdb::FileSystem> base, std::unique_ptr<Pool> pool)
        : FileSystemWrapper(std::move(base)), pool_(std::move(pool)) {}

    static const char* kClassName() { return "RpmFileSystem"; }
    [[nodiscard]] const char* Name() const override { return kClassName(); }

    rocksdb::IOStatus NewWritableFile(const std::string& f, const rocksdb::FileOptions& o,
                                      std::unique_ptr<rocksdb::FSWritableFile>* r, rocksdb::IODebugContext* dbg) override;
    rocksdb::IOStatus ReuseWritableFile(const std::string& f, const std::string& old, const rocksdb::FileOptions& o,
                                        std::unique_ptr<rocksdb::FSWritableFile>* r, rocksdb::IODebugContext* dbg) override;
    rocksdb::IOStatus DeleteFile(const std::string& f, const rocksdb::IOOptions& o, rocksdb::IODebugContext* dbg) override;
    rocksdb::IOStatus RenameFile(const std::string& from, const std::string& to, const rocksdb::IOOptions& o,
                                 rocksdb::IODebugContext* dbg) override;

    /// Rewrite every WAL file the pool holds whose local copy is shorter or
    /// missing (before RocksDB lists its folder).
    rpm::Result<void> restore();
    [[nodiscard]] const Pool& pool() const { return *pool_; }

private:
    /// Wrap the base's new file `f` in a WalFile with a slot, when `f` is a WAL.
    rocksdb::IOStatus mirror(const std::string& f, std::unique_ptr<rocksdb::FSWritableFile>* r);
    rpm::Result<void> restore(const Mirrored& m);
    std::unique_ptr<Pool> pool_;
};

/// open() as RocksDB's registry wants it: solely owned.
rpm::Result<std::unique_ptr<RpmFileSystem>> make_file_system(const Options& options,
                                                             std::shared_ptr<rocksdb::FileSystem> base);

/// Whether `path` names a WAL file: a basename of digits and ".log", as
/// RocksDB names them (LogFileName; an archived one too). ERRORS: none.
bool is_wal(std::string_view path) noexcept;
/// The key a WAL file has in the pool: the absolute, normal path.
std::string wal_key(const std::string& path);

} // namespace rpm_rocksdb
