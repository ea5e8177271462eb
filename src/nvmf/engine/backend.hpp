#pragma once
// A back end of the software engine (the seed's "NVMe backend controller"):
// one block device, file or PM region, holding one namespace (nsid 1). The
// engine checks every command against the namespace before it reaches a
// backend, so offsets and lengths here are always inside bytes().

#include <rpm/nvmf_offload.hpp>
#include <rpm/result.hpp>

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>

namespace rpm::nvmf::detail {

/// What a backend is, fixed when it is opened.
struct BackendInfo {
    BackendKind kind = BackendKind::block;
    std::filesystem::path path;       ///< absolute
    std::uint64_t bytes = 0;
    std::uint32_t granule = 1;        ///< the finest LBA size it serves (O_DIRECT: logical block size)
    std::string description;          ///< how it is driven, for logs and NamespaceView::backend
    bool deallocated_reads_zeroes = false;  ///< deallocate() leaves zeroes (NamespaceView's)
};

class Backend {
public:
    explicit Backend(BackendInfo info) : info_(std::move(info)) {}
    virtual ~Backend() = default;
    Backend(const Backend&) = delete;
    Backend& operator=(const Backend&) = delete;

    [[nodiscard]] const BackendInfo& info() const noexcept { return info_; }

    /// Each call is thread-safe and synchronous. ERRORS: errc::io_error
    /// (detail: the operation, offset and the OS's reason), or for PM the
    /// errors of pmem::Region::deep_flush.
    virtual Result<void> read(std::uint64_t offset, std::span<std::byte> out) = 0;
    /// `fua`: durable before returning even where writes are otherwise
    /// volatile until flush() (a device's write cache, the page cache).
    virtual Result<void> write(std::uint64_t offset, std::span<const std::byte> in, bool fua) = 0;
    virtual Result<void> write_zeroes(std::uint64_t offset, std::uint64_t length) = 0;
    /// The range's blocks are no longer needed (Dataset Management,
    /// deallocate): a file's hole, a device's discard, PM's zeroes.
    virtual Result<void> deallocate(std::uint64_t offset, std::uint64_t length) = 0;
    /// Make every completed write durable.
    virtual Result<void> flush() = 0;
    /// The descriptor reads and writes may go to through this thread's
    /// io_uring directly (several at once: ThreadRing::run_many), or -1
    /// when they must go through read()/write().
    [[nodiscard]] virtual int ring_fd() const noexcept { return -1; }

private:
    BackendInfo info_;
};

/// open(2)'s shape: a seam so tests can make O_DIRECT fail as tmpfs once did.
using OpenFn = int (*)(const char* path, int flags, mode_t mode);

/// A block device or regular file through io_uring, O_DIRECT where the file
/// system takes it, the page cache otherwise (description says which).
/// ERRORS: errc::path_not_found (missing, create not set),
/// errc::invalid_argument (create with size 0; not a file or block device),
/// errc::permission_denied, errc::bad_size (empty), errc::io_error.
Result<std::shared_ptr<Backend>> open_block_backend(const NamespaceSpec& spec, OpenFn open_fn = nullptr);

/// A PM region (pmem::Region), persisted per its domain on every write.
/// ERRORS: those of pmem::Region::open.
Result<std::shared_ptr<Backend>> open_pmem_backend(const NamespaceSpec& spec,
                                                   const std::filesystem::path& sysfs_root);

} // namespace rpm::nvmf::detail
