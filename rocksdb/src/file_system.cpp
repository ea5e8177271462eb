#include "file_system.hpp"

#include "status.hpp"
#include "wal_file.hpp"

#include <algorithm>

namespace rpm_rocksdb {

bool is_wal(std::string_view path) noexcept {
    const auto slash = path.rfind('/');
    const auto name = slash == std::string_view::npos ? path : path.substr(slash + 1);
    constexpr std::string_view ext = ".log";
    if (name.size() <= ext.size() || !name.ends_with(ext)) return false;
    const auto digits = name.substr(0, name.size() - ext.size());
    return std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string wal_key(const std::string& path) {
    std::error_code ec;
    auto abs = std::filesystem::absolute(path, ec);
    return (ec ? std::filesystem::path(path) : abs).lexically_normal().string();
}

rocksdb::IOStatus RpmFileSystem::mirror(const std::string& f, std::unique_ptr<rocksdb::FSWritableFile>* r) {
    auto slot = pool_->take(wal_key(f));
    if (!slot) {
        r->reset();
        return to_io_status(slot.error());
    }
    *r = std::make_unique<WalFile>(std::move(*r), *pool_, **slot);
    return rocksdb::IOStatus::OK();
}

rocksdb::IOStatus RpmFileSystem::NewWritableFile(const std::string& f, const rocksdb::FileOptions& o,
                                                 std::unique_ptr<rocksdb::FSWritableFile>* r, rocksdb::IODebugContext* dbg) {
    auto s = target()->NewWritableFile(f, o, r, dbg);
    return s.ok() && is_wal(f) ? mirror(f, r) : s;
}

// A recycled WAL (recycle_log_file_num): the old file's slot is freed, the
// new name gets one of its own.
rocksdb::IOStatus RpmFileSystem::ReuseWritableFile(const std::string& f, const std::string& old, const rocksdb::FileOptions& o,
                                                   std::unique_ptr<rocksdb::FSWritableFile>* r, rocksdb::IODebugContext* dbg) {
    auto s = target()->ReuseWritableFile(f, old, o, r, dbg);
    if (!s.ok() || !is_wal(f)) return s;
    if (auto rel = pool_->release(wal_key(old)); !rel) return to_io_status(rel.error());
    return mirror(f, r);
}

rocksdb::IOStatus RpmFileSystem::DeleteFile(const std::string& f, const rocksdb::IOOptions& o, rocksdb::IODebugContext* dbg) {
    auto s = target()->DeleteFile(f, o, dbg);
    if (!s.ok() || !is_wal(f)) return s;
    auto rel = pool_->release(wal_key(f));
    return rel ? s : to_io_status(rel.error());
}

// Archived or moved to the trash: RocksDB no longer recovers from it.
rocksdb::IOStatus RpmFileSystem::RenameFile(const std::string& from, const std::string& to, const rocksdb::IOOptions& o,
                                            rocksdb::IODebugContext* dbg) {
    auto s = target()->RenameFile(from, to, o, dbg);
    if (!s.ok() || !is_wal(from)) return s;
    auto rel = pool_->release(wal_key(from));
    return rel ? s : to_io_status(rel.error());
}

rpm::Result<void> RpmFileSystem::restore() {
    for (const auto& m : pool_->mirrored())
        if (auto r = restore(m); !r) return r;
    return {};
}

rpm::Result<void> RpmFileSystem::restore(const Mirrored& m) {
    const rocksdb::IOOptions io;
    std::uint64_t size = 0;
    if (target()->GetFileSize(m.path, io, &size, nullptr).ok() && size >= m.bytes.size()) return {};
    auto fail = [&](const rocksdb::IOStatus& s) {
        return rpm::Error(rpm::errc::io_error, "rpm-rocksdb: restoring " + m.path + ": " + s.ToString());
    };
    // Its folder may be gone with the node's disk.
    const auto parent = std::filesystem::path(m.path).parent_path();
    for (auto dir = std::filesystem::path(); const auto& part : parent) {
        dir /= part;
        if (dir == "/") continue;
        if (auto s = target()->CreateDirIfMissing(dir.string(), io, nullptr); !s.ok()) return fail(s);
    }
    std::unique_ptr<rocksdb::FSWritableFile> out;
    auto s = target()->NewWritableFile(m.path, rocksdb::FileOptions(), &out, nullptr);
    if (s.ok())
        s = out->Append(rocksdb::Slice(reinterpret_cast<const char*>(m.bytes.data()), m.bytes.size()), io, nullptr);
    if (s.ok()) s = out->Sync(io, nullptr);
    if (s.ok()) s = out->Close(io, nullptr);
    if (!s.ok()) return fail(s);
    pool_->count_restored(m.bytes.size());
    return {};
}

rpm::Result<std::unique_ptr<RpmFileSystem>> make_file_system(const Options& options,
                                                             std::shared_ptr<rocksdb::FileSystem> base) {
    auto pool = Pool::open(options);
    if (!pool) return pool.error();
    auto fs = std::make_unique<RpmFileSystem>(base ? std::move(base) : rocksdb::FileSystem::Default(), std::move(*pool));
    if (auto r = fs->restore(); !r) return r.error();
    return fs;
}

rpm::Result<std::shared_ptr<rocksdb::FileSystem>> open(Options options, std::shared_ptr<rocksdb::FileSystem> base) {
    auto fs = make_file_system(options, std::move(base));
    if (!fs) return fs.error();
    return std::shared_ptr<rocksdb::FileSystem>(std::move(*fs));
}

std::optional<Stats> stats(const rocksdb::FileSystem& fs) {
    const auto* ours = dynamic_cast<const RpmFileSystem*>(&fs);
    if (!ours) return std::nullopt;
    return ours->pool().stats();
}

std::string describe(const rocksdb::FileSystem& fs) {
    const auto* ours = dynamic_cast<const RpmFileSystem*>(&fs);
    return ours ? ours->pool().describe() : std::string();
}

} // namespace rpm_rocksdb
