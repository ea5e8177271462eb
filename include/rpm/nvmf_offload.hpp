// The NVMe-oF target offload model (seed 004: MLNX_OFED's NVMf offload
// verbs), as an interface an rpm::nvmf::Target drives, and a software
// engine that implements it.
//
// The model, verb by verb:
//   query()              ibv_query_device_ex().nvmf_caps: what the engine can offload
//   create_subsystem()   ibv_create_srq_ex(IBV_SRQT_NVMF): a front-end subsystem
//                        with its staging buffer
//   create_backend()     ibv_srq_create_nvme_ctrl(): a local back-end "controller"
//                        (here: a block device, file or PM region)
//   map_namespace()      ibv_map_nvmf_nsid(): front-end nsid -> (backend, nsid, LBA size)
//   unmap_namespace()    ibv_unmap_nvmf_nsid()
//   enable()             ibv_modify_qp_nvmf(ENABLE) after Connect completes: from
//                        then on the queue's I/O commands go to the engine
// Admin and Fabrics commands always stay with the target's software path, as
// non-offloaded commands stay with software in the seed.
#pragma once

#include <rpm/export.hpp>
#include <rpm/result.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

RPM_API_BEGIN

namespace rpm::nvmf {

/// What a namespace is backed by.
enum class BackendKind : std::uint8_t {
    block,  ///< a block device or a file, through io_uring with O_DIRECT
    pmem,   ///< a PM region (rpm::pmem::Region): writes persisted per its platform before completion
};

/// One front-end namespace of a subsystem.
struct NamespaceSpec {
    std::uint32_t nsid = 1;
    std::filesystem::path path;
    BackendKind kind = BackendKind::block;
    /// LBA data size: 512 or 4096. For block backends it must be a multiple
    /// of the device's logical block size (O_DIRECT).
    std::uint32_t block_size = 512;
    /// Create a file of `size` bytes if missing (files only).
    bool create = false;
    std::uint64_t size = 0;
};

/// Offload types (a bit mask).
enum OffloadType : std::uint32_t {
    offload_read_write_flush = 1u << 0,  ///< Read, Write, Flush
    offload_write_zeroes = 1u << 1,
    offload_dataset_management = 1u << 2,  ///< Dataset Management (deallocate)
};

/// ibv_nvmf_caps.
struct OffloadCaps {
    std::uint32_t offload_types = 0;
    std::uint32_t max_backend_ctrls_total = 0;
    std::uint32_t max_backend_ctrls = 0;       ///< per subsystem
    std::uint32_t max_namespaces = 0;          ///< per subsystem
    std::uint32_t min_staging_buf_pages = 0;   ///< 4 KiB pages
    std::uint32_t max_staging_buf_pages = 0;
    std::uint32_t max_io_size = 0;             ///< bytes
    std::uint16_t min_queue_size = 0;
    std::uint16_t max_queue_size = 0;
    std::uint32_t min_ioccsz = 0;              ///< 16-byte units
    std::uint32_t max_ioccsz = 0;
    std::uint16_t max_icdoff = 0;
};

/// ibv_nvmf_attrs: what the target asks of a subsystem.
struct SubsystemAttrs {
    std::uint32_t offload_types = offload_read_write_flush | offload_write_zeroes | offload_dataset_management;
    std::uint32_t max_namespaces = 32;
    std::uint32_t ioccsz = (64 + 8192) / 16;
    std::uint16_t icdoff = 0;
    std::uint32_t max_io_size = 128 * 1024;
    std::uint16_t queue_size = 128;
    /// Staging buffer bytes (a multiple of 4096, within the caps); one
    /// max_io_size slot per enabled queue.
    std::size_t staging_bytes = 4u << 20;
    /// Devices the staging buffer serves (the NIC, the drives), by name or
    /// BDF, for P2P placement; empty or unplaceable: host memory.
    std::vector<std::string> staging_clients;
    std::filesystem::path sysfs_root = "/";
};

/// Where a subsystem's staging buffer lives.
struct StagingReport {
    bool p2p = false;              ///< device memory (a P2P provider) rather than host memory
    std::string provider;          ///< its BDF when p2p
    std::size_t bytes = 0;
    std::size_t slots = 0;         ///< max_io_size slots
    std::string why;               ///< the placement's reason, or why host memory
};

/// What Identify Namespace reports of a mapped namespace.
struct NamespaceView {
    std::uint32_t nsid = 0;
    std::uint64_t blocks = 0;
    std::uint32_t block_size = 0;
    BackendKind kind = BackendKind::block;
    std::array<std::uint8_t, 16> nguid{};  ///< stable per backend path and nsid
    /// How the backend is driven, for logs: "file /x (io_uring, O_DIRECT,
    /// logical block 512)", "... buffered (page cache) ...", "pmem region ...".
    std::string backend;
    /// Deallocated blocks read as zeroes (Identify Namespace DLFEAT 001b):
    /// a file (its holes) and PM (zeroed) say so; a block device's discard
    /// promises nothing.
    bool deallocated_reads_zeroes = false;
};

/// An I/O queue enabled for offload: the engine runs its I/O commands.
/// One command of OffloadQueue::execute_many.
struct StagedCommand {
    std::span<const std::uint8_t, 64> sqe;
    /// Where its data is in staging(): a write's before, a read's after.
    std::size_t offset = 0;
    /// Out: its NVMe status, as execute() would return it.
    std::uint16_t status = 0;
};

class OffloadQueue {
public:
    /// Disable the queue (software engine: its staging slot goes back to
    /// the subsystem, for another enable()). ERRORS: none.
    virtual ~OffloadQueue() = default;
    /// A buffer of at least max_io_size bytes, 4096-aligned, that the
    /// transport fills with a write's data before execute() and reads a
    /// read's data from after it.
    /// RETURN VALUE: that buffer (software engine: the queue's own slot of
    /// exactly max_io_size bytes, the same on every call); never fails.
    virtual std::span<std::byte> staging() = 0;
    /// Run one I/O command (Read, Write, Flush, Write Zeroes, Dataset
    /// Management; its data, if any, in staging(): a Dataset Management's
    /// ranges, 16 bytes each). Writes are durable per the backend before it
    /// returns (PM: persisted; block: written with O_DIRECT, Flush syncs).
    /// Deallocate (Dataset Management with AD) punches holes in a file,
    /// discards on a block device, zeroes PM; without AD it does nothing.
    /// RETURN VALUE: the NVMe status (wire::sc): success, invalid_opcode,
    /// invalid_ns, lba_out_of_range (any range outside the namespace: then
    /// none is deallocated), invalid_field (transfer over max_io_size;
    /// Write Zeroes and deallocate move no data and are not limited),
    /// write_fault / unrecovered_read_error on backend failure. A command of
    /// a type outside the subsystem's offload_types: invalid_opcode.
    /// A Flush of nsid FFFFFFFFh flushes every namespace of the subsystem;
    /// other unmapped nsids: invalid_ns. Dataset Management may have
    /// deallocated earlier ranges when a later one fails (write_fault).
    /// ERRORS: none as a call: every failure is the returned status.
    virtual std::uint16_t execute(std::span<const std::uint8_t, 64> sqe) = 0;
    /// Whether execute_many() runs commands together (false: the caller
    /// runs them one by one through execute()).
    /// RETURN VALUE: false for this base class; true for the software
    /// engine's queues; never fails.
    [[nodiscard]] virtual bool runs_many() const noexcept { return false; }
    /// Run `cmds`, each with its data at its own offset in staging() (the
    /// ranges must not overlap), their backend I/O in flight at once: NVMe
    /// does not order the commands of a queue, so a drive sees them all.
    /// Each gets the status execute() would give it. Where runs_many() is
    /// false, only one command at offset 0 runs (through execute()); others
    /// get Invalid Field in Command.
    /// RETURN VALUE: none; each command's StagedCommand::status (as
    /// execute()). In this base version only a lone command at offset 0
    /// runs: given two or more, none runs and each gets Invalid Field in
    /// Command with DNR (0x4002). ERRORS: none as a call.
    virtual void execute_many(std::span<StagedCommand> cmds) {
        constexpr std::uint16_t invalid_field_dnr = 0x4002;
        for (auto& c : cmds) c.status = cmds.size() == 1 && c.offset == 0 ? execute(c.sqe) : invalid_field_dnr;
    }
};

/// Counters of one subsystem.
struct EngineStats {
    std::uint64_t commands = 0;
    std::uint64_t reads = 0, writes = 0, flushes = 0, write_zeroes = 0;
    std::uint64_t deallocates = 0;         ///< Dataset Management commands with AD
    std::uint64_t bytes_read = 0, bytes_written = 0;
    std::uint64_t bytes_deallocated = 0;
    std::uint64_t errors = 0;
    std::uint64_t enabled_queues = 0;      ///< live
    std::uint64_t refused_enables = 0;     ///< no staging slot left: queue stays in software
};

using SubsystemHandle = std::uint32_t;
using BackendHandle = std::uint32_t;

/// The verbs. Every call is thread-safe.
class Engine {
public:
    /// Destroy the engine (software engine: an enabled queue keeps its
    /// subsystem, and a mapped namespace its backend, alive until it goes).
    /// ERRORS: none.
    virtual ~Engine() = default;
    /// RETURN VALUE: what the engine can offload (the software engine:
    /// all three offload types, 1 MiB max_io_size, queues of 2 to 1024,
    /// 128 KiB to 256 MiB of staging, 1024 namespaces and backends per
    /// subsystem, 4096 backends in all, icdoff 0); never fails.
    virtual OffloadCaps query() const = 0;
    /// ERRORS: errc::unsupported (attrs outside the caps: detail says which).
    /// RETURN VALUE: the new subsystem's handle (software engine: 1, 2, ...
    /// in creation order; subsystems are never destroyed). Its staging
    /// buffer comes from a P2P provider when one suits every
    /// staging_clients entry, else from host memory (staging() says why).
    /// Software engine, in full: errc::unsupported (offload_types empty or
    /// outside the caps; max_namespaces, queue_size, ioccsz or icdoff out of
    /// range; max_io_size not a multiple of 4096 up to 1 MiB; staging_bytes
    /// not a multiple of 4096, out of range, or smaller than max_io_size);
    /// errc::io_error (the host-memory staging buffer cannot be mapped).
    virtual Result<SubsystemHandle> create_subsystem(const SubsystemAttrs& attrs) = 0;
    /// ERRORS: as pmem::Region::open / opening the device; errc::unsupported
    /// past max_backend_ctrls.
    /// RETURN VALUE: the new backend's handle (software engine: 1, 2, ...
    /// across all subsystems); it holds one namespace, nsid 1.
    /// Software engine, in full: errc::invalid_argument (no subsystem `s`);
    /// errc::unsupported (the subsystem has max_backend_ctrls backends, or
    /// the engine max_backend_ctrls_total). Block (file or device):
    /// errc::path_not_found (missing, create not set); errc::invalid_argument
    /// (create with size 0; neither a regular file nor a block device);
    /// errc::permission_denied (EACCES, EPERM, EROFS); errc::bad_size
    /// (empty); errc::io_error (any other OS failure). PM: the errors of
    /// pmem::Region::open; errc::bad_size (an empty region).
    virtual Result<BackendHandle> create_backend(SubsystemHandle s, const NamespaceSpec& spec) = 0;
    /// ERRORS: errc::invalid_argument (nsid 0, mapped twice, lba size not
    /// 512/4096 or finer than the backend's), errc::unsupported (past max_namespaces).
    /// RETURN VALUE: success: I/O to fe_nsid of the backend's subsystem
    /// goes to the backend from now on.
    /// Software engine, in full: errc::invalid_argument (no backend `b`;
    /// fe_nsid 0 or FFFFFFFFh; fe_nsid mapped already; backend_nsid not 1;
    /// lba_data_size not 512 or 4096, or not a multiple of the backend's
    /// logical block; a backend smaller than one block);
    /// errc::unsupported (the subsystem has max_namespaces mapped).
    virtual Result<void> map_namespace(BackendHandle b, std::uint32_t fe_nsid, std::uint32_t lba_data_size,
                                       std::uint32_t backend_nsid) = 0;
    /// End the mapping of fe_nsid; a command already running finishes on it.
    /// RETURN VALUE: success.
    /// ERRORS (software engine): errc::invalid_argument (no backend `b`;
    /// fe_nsid not mapped; fe_nsid mapped to another backend).
    virtual Result<void> unmap_namespace(BackendHandle b, std::uint32_t fe_nsid) = 0;
    /// ERRORS: errc::unsupported (no staging slot free: the caller keeps the
    /// queue in software and says so).
    /// RETURN VALUE: the enabled queue; it holds one staging slot until it
    /// is destroyed.
    /// Software engine, also: errc::invalid_argument (no subsystem `s`).
    /// errc::unsupported is counted in EngineStats::refused_enables.
    virtual Result<std::unique_ptr<OffloadQueue>> enable(SubsystemHandle s) = 0;
    /// The software path for queues that are not enabled: the same commands
    /// with the caller's own buffer (at least max_io_size, 4096-aligned).
    /// RETURN VALUE: as OffloadQueue::execute (every offload type runs
    /// here), or internal_error for an unknown subsystem or a buffer
    /// smaller than the transfer.
    /// ERRORS: none as a call: every failure is the returned status.
    virtual std::uint16_t execute_software(SubsystemHandle s, std::span<const std::uint8_t, 64> sqe,
                                           std::span<std::byte> buffer) = 0;
    /// RETURN VALUE: the subsystem's mapped namespaces, by nsid; empty for
    /// an unknown subsystem (software engine). ERRORS: none.
    virtual std::vector<NamespaceView> namespaces(SubsystemHandle s) const = 0;
    /// RETURN VALUE: where the subsystem's staging buffer is and why; a
    /// default StagingReport for an unknown subsystem (software engine).
    /// ERRORS: none.
    virtual StagingReport staging(SubsystemHandle s) const = 0;
    /// RETURN VALUE: the subsystem's counters now; all zero for an unknown
    /// subsystem (software engine). ERRORS: none.
    virtual EngineStats stats(SubsystemHandle s) const = 0;
};

/// The engine in software: backends are files and devices through io_uring
/// (O_DIRECT) and PM regions through rpm::pmem; staging buffers come from
/// rpm::p2p::Manager when a provider is close to every staging client, host
/// memory otherwise.
/// RETURN VALUE: a new engine with no subsystem; never fails.
std::shared_ptr<Engine> make_software_engine();

} // namespace rpm::nvmf

RPM_API_END
