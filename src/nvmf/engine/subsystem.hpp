#pragma once
// One front-end subsystem of the software engine (the seed's NVMf SRQ):
// its attributes, staging buffer, namespace map and counters, and the
// execution of I/O commands against them.
//
// The namespace map is read by every I/O and changed by map/unmap while
// I/O runs: a shared_mutex guards the map, and an I/O takes a shared_ptr
// to its namespace (and so to the backend) before it starts, so an unmap
// during the I/O only ends the mapping for later commands.

#include "nvmf/engine/backend.hpp"
#include "nvmf/engine/staging.hpp"

#include <rpm/nvmf_offload.hpp>
#include <rpm/result.hpp>

#include <array>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <shared_mutex>
#include <span>
#include <vector>

namespace rpm::nvmf::detail {

/// A mapped front-end namespace: immutable once mapped.
struct Namespace {
    std::uint32_t nsid = 0;
    std::uint32_t block_size = 0;
    std::uint64_t blocks = 0;
    std::array<std::uint8_t, 16> nguid{};
    BackendHandle backend_handle = 0;
    std::shared_ptr<Backend> backend;
};

/// 16 bytes that depend only on the backend's path and the front-end nsid
/// (FNV-1a, so they survive restarts and rebuilds), never all zero.
std::array<std::uint8_t, 16> make_nguid(const std::filesystem::path& backend_path, std::uint32_t fe_nsid);

/// EngineStats as atomics: every connection's thread counts at once.
struct Counters {
    std::atomic<std::uint64_t> commands{0}, reads{0}, writes{0}, flushes{0}, write_zeroes{0}, deallocates{0};
    std::atomic<std::uint64_t> bytes_read{0}, bytes_written{0}, bytes_deallocated{0}, errors{0};
    std::atomic<std::uint64_t> enabled_queues{0}, refused_enables{0};

    [[nodiscard]] EngineStats snapshot() const noexcept;
};

class SubsystemState {
public:
    SubsystemState(SubsystemAttrs attrs, std::unique_ptr<Staging> staging);

    [[nodiscard]] const SubsystemAttrs& attrs() const noexcept { return attrs_; }
    [[nodiscard]] Staging& staging() noexcept { return *staging_; }
    [[nodiscard]] const Staging& staging() const noexcept { return *staging_; }
    [[nodiscard]] Counters& counters() noexcept { return counters_; }
    [[nodiscard]] const Counters& counters() const noexcept { return counters_; }

    /// Map fe_nsid to nsid `backend_nsid` of `backend` (handle `h`).
    /// ERRORS: errc::invalid_argument (nsid 0 or broadcast, mapped already,
    /// backend nsid not 1, lba size not 512/4096 or finer than the backend's
    /// logical block, backend smaller than one block), errc::unsupported
    /// (max_namespaces mapped already).
    Result<void> map(BackendHandle h, const std::shared_ptr<Backend>& backend, std::uint32_t fe_nsid,
                     std::uint32_t lba_data_size, std::uint32_t backend_nsid);
    /// ERRORS: errc::invalid_argument (not mapped, or mapped to another backend).
    Result<void> unmap(BackendHandle h, std::uint32_t fe_nsid);

    /// The namespace, or null when fe_nsid is not mapped.
    [[nodiscard]] std::shared_ptr<const Namespace> find(std::uint32_t fe_nsid) const;
    [[nodiscard]] std::vector<std::shared_ptr<const Namespace>> all() const;
    [[nodiscard]] std::vector<NamespaceView> views() const;

    /// Run one I/O command with its data in `data`. `offloaded`: through an
    /// enabled queue, which runs only the attrs' offload_types.
    /// RETURN VALUE: the NVMe status (wire::sc), as OffloadQueue::execute.
    std::uint16_t execute(std::span<const std::uint8_t, 64> sqe, std::span<std::byte> data, bool offloaded);
    /// OffloadQueue::execute_many over `staging` (subsystem_batch.cpp):
    /// Reads and Writes on ring backends go through this thread's ring
    /// together; any other command runs as execute() runs it.
    void execute_many(std::span<StagedCommand> cmds, std::span<std::byte> staging, bool offloaded);

private:
    std::uint16_t dispatch(std::span<const std::uint8_t, 64> sqe, std::span<std::byte> data, bool offloaded);
    std::uint16_t flush_all();

    const SubsystemAttrs attrs_;
    const std::unique_ptr<Staging> staging_;
    Counters counters_;
    mutable std::shared_mutex mu_;
    std::map<std::uint32_t, std::shared_ptr<const Namespace>> namespaces_;
};

} // namespace rpm::nvmf::detail
