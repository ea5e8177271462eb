// rpm_rocksdb: RocksDB's write-ahead log made durable by rpm.
//
// A RocksDB FileSystem that hands every file to a base file system (the
// default one) and, for WAL files (NNNNNN.log), also appends their bytes to
// a replicated log of rpm: each WAL file gets a slot of a Replicator's data
// area, a ReplicatedLog whose first record names the file and whose later
// records are its bytes in order. Sync and Fsync return once those bytes
// are durable under the configured policy (a majority of the replicas by
// default) and never fsync the local file. Opening the file system restores
// every WAL the replicas hold whose local file is shorter or missing, so
// RocksDB's own recovery replays what a crash took from the local disk.
// Deleting or renaming a WAL frees its slot (ReplicatedLog::reset).
//
// Two ways in (docs/rocksdb.md): this header's open(), for a program that
// builds its rocksdb::Env itself (rocksdb::NewCompositeEnv), or the URI
// "rpm://..." that librpm_rocksdb.so registers with RocksDB's object
// registry when it is loaded, for tools that take --fs_uri (Debian's
// db_bench, with LD_PRELOAD).
#pragma once

#include <rpm/replication.hpp>

#include <rocksdb/file_system.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace rpm_rocksdb {

/// Bytes at the start of the data area before the first slot: the plug-in's
/// header (its commit counter, which ranks members at recovery).
inline constexpr std::uint64_t kPoolHeaderSize = 4096;

struct Options {
    /// The replicas, each a region of an rpm-server (tcp:// or rdma://),
    /// with the client id and secret to open it.
    std::vector<rpm::ReplicaSpec> replicas;
    /// The local copy of the replicated data (rpm::ReplicatorOptions::
    /// local_path): PM (devdax, a DAX file) or tmpfs. Created, pool_size()
    /// bytes, when missing. A file on a disk works but is msync'd per Sync.
    std::filesystem::path local_path;
    /// WAL files that can be open at once (each until RocksDB deletes it):
    /// at least max_write_buffer_number + 2.
    unsigned slots = 8;
    /// Bytes of one WAL file's log: at least twice write_buffer_size (a
    /// WAL holds about one memtable, plus 16 bytes per write group).
    std::uint64_t slot_size = 128ull << 20;
    /// When a Sync returns. Default: a majority of the replicas, the local
    /// copy not counted (the node may be the one lost).
    rpm::Durability durability = rpm::Durability::majority(false);
    /// The writer's fencing term (rpm::ReplicatorOptions::fencing_term).
    std::uint64_t fencing_term = 0;
    /// A replica that does not answer within this long leaves the group.
    std::chrono::milliseconds failure_timeout{1000};

    /// RETURN VALUE: the bytes every replica region (and the local copy)
    /// must have: the replica header, the plug-in's header and the slots.
    /// ERRORS: none.
    [[nodiscard]] std::uint64_t pool_size() const noexcept {
        return rpm::kReplicaHeaderSize + kPoolHeaderSize + std::uint64_t{slots} * slot_size;
    }
};

/// Parse the plug-in's URI:
///   rpm://HOST:PORT[/REGION][,HOST:PORT[/REGION]...]?local=PATH[&KEY=VALUE...]
/// keys: transport=tcp|rdma (tcp), slots=N (8), slot_size=SIZE (128M; K, M,
/// G suffixes), durability=majority|all|K[+local|-local] (majority-local),
/// client=ID (default), secret_file=PATH (the secret on its first line),
/// tls=0|1, tls_ca=PATH, fencing_term=N, failure_timeout_ms=N. The region
/// defaults to "default". No ';' or '{' (RocksDB's option parser would take
/// the URI apart).
/// RETURN VALUE: the options.
/// ERRORS: errc::invalid_argument, the detail naming the part that is wrong
/// (no replica, a bad host:port, an unknown key, a bad number or size, no
/// local=); errc::path_not_found or errc::io_error for an unreadable
/// secret_file; errc::bad_size for a slot_size not a multiple of 8 or
/// under 64 KiB, or slots of 0.
rpm::Result<Options> parse_uri(std::string_view uri);

/// Open the file system: the Replicator over options.local_path and the
/// replicas, every slot's log, and the restore of WAL files from them.
/// `base` is the file system everything goes to (nullptr: the default).
/// RETURN VALUE: the file system; RocksDB takes it through
/// rocksdb::NewCompositeEnv(fs) as Options::env.
/// ERRORS: errc::invalid_argument (no replica, no local path, slots or
/// slot_size as parse_uri says); the errors of rpm::Replicator::open
/// (errc::auth_failed for a refused secret, errc::quorum_lost when
/// too few replicas are reachable, errc::bad_size for a replica region
/// smaller than pool_size(), ...); the errors of rpm::ReplicatedLog::open;
/// errc::io_error when a WAL file cannot be restored (the detail names it
/// and carries RocksDB's status).
rpm::Result<std::shared_ptr<rocksdb::FileSystem>> open(Options options,
                                                       std::shared_ptr<rocksdb::FileSystem> base = nullptr);

/// What the file system did since open (for tests and tools).
struct Stats {
    std::uint64_t wal_files = 0;     ///< WAL files given a slot
    std::uint64_t restored = 0;      ///< WAL files rewritten at open
    std::uint64_t restored_bytes = 0;
    std::uint64_t syncs = 0;         ///< Sync/Fsync calls on WAL files
    std::uint64_t commits = 0;       ///< of which committed (the others were already covered)
    std::uint64_t freed = 0;         ///< slots freed by a delete or rename
};

/// RETURN VALUE: `fs`'s statistics when it is a file system open() made,
/// nullopt otherwise. ERRORS: none.
std::optional<Stats> stats(const rocksdb::FileSystem& fs);

/// RETURN VALUE: one line that says what `fs` replicates to and how (the
/// line the registered factory prints to stderr, without its prefix);
/// empty when `fs` is not one open() made. ERRORS: none.
std::string describe(const rocksdb::FileSystem& fs);

} // namespace rpm_rocksdb
