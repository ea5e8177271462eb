// SubsystemState: the namespace map of one subsystem and the execution of
// its I/O commands.
#include "nvmf/engine/io.hpp"
#include "nvmf/engine/subsystem.hpp"
#include "nvmf/wire.hpp"

#include <mutex>
#include <string>
#include <utility>

namespace rpm::nvmf::detail {
namespace {

constexpr std::uint32_t broadcast_nsid = 0xFFFFFFFF;

Error bad(std::string detail) { return {errc::invalid_argument, std::move(detail)}; }

Result<void> check_mapping(const Backend& b, std::uint32_t fe_nsid, std::uint32_t lba, std::uint32_t backend_nsid) {
    const std::string ns = "nsid " + std::to_string(fe_nsid);
    if (fe_nsid == 0 || fe_nsid == broadcast_nsid) return bad(ns + " is not a valid namespace id");
    if (backend_nsid != 1)
        return bad(ns + ": backend nsid " + std::to_string(backend_nsid) + " does not exist (" +
                   b.info().path.string() + " has one namespace, nsid 1)");
    if (lba != 512 && lba != 4096) return bad(ns + ": LBA data size " + std::to_string(lba) + " is not 512 or 4096");
    if (lba % b.info().granule != 0)
        return bad(ns + ": LBA data size " + std::to_string(lba) + " is finer than the logical block size " +
                   std::to_string(b.info().granule) + " of " + b.info().path.string());
    if (b.info().bytes < lba)
        return bad(ns + ": " + b.info().path.string() + " is smaller than one block of " + std::to_string(lba));
    return {};
}

} // namespace

EngineStats Counters::snapshot() const noexcept {
    EngineStats s;
    s.commands = commands.load(std::memory_order_relaxed);
    s.reads = reads.load(std::memory_order_relaxed);
    s.writes = writes.load(std::memory_order_relaxed);
    s.flushes = flushes.load(std::memory_order_relaxed);
    s.write_zeroes = write_zeroes.load(std::memory_order_relaxed);
    s.deallocates = deallocates.load(std::memory_order_relaxed);
    s.bytes_read = bytes_read.load(std::memory_order_relaxed);
    s.bytes_written = bytes_written.load(std::memory_order_relaxed);
    s.bytes_deallocated = bytes_deallocated.load(std::memory_order_relaxed);
    s.errors = errors.load(std::memory_order_relaxed);
    s.enabled_queues = enabled_queues.load(std::memory_order_relaxed);
    s.refused_enables = refused_enables.load(std::memory_order_relaxed);
    return s;
}

SubsystemState::SubsystemState(SubsystemAttrs attrs, std::unique_ptr<Staging> staging)
    : attrs_(std::move(attrs)), staging_(std::move(staging)) {}

Result<void> SubsystemState::map(BackendHandle h, const std::shared_ptr<Backend>& backend, std::uint32_t fe_nsid,
                                 std::uint32_t lba_data_size, std::uint32_t backend_nsid) {
    if (auto ok = check_mapping(*backend, fe_nsid, lba_data_size, backend_nsid); !ok) return ok;
    auto ns = std::make_shared<Namespace>();
    ns->nsid = fe_nsid;
    ns->block_size = lba_data_size;
    ns->blocks = backend->info().bytes / lba_data_size;
    ns->nguid = make_nguid(backend->info().path, fe_nsid);
    ns->backend_handle = h;
    ns->backend = backend;
    std::unique_lock lock(mu_);
    if (namespaces_.count(fe_nsid) != 0) return bad("nsid " + std::to_string(fe_nsid) + " is mapped already");
    if (namespaces_.size() >= attrs_.max_namespaces)
        return Error(errc::unsupported, "nsid " + std::to_string(fe_nsid) + ": the subsystem has its max_namespaces (" +
                                            std::to_string(attrs_.max_namespaces) + ") mapped already");
    namespaces_.emplace(fe_nsid, std::move(ns));
    return {};
}

Result<void> SubsystemState::unmap(BackendHandle h, std::uint32_t fe_nsid) {
    std::unique_lock lock(mu_);
    auto it = namespaces_.find(fe_nsid);
    if (it == namespaces_.end()) return bad("nsid " + std::to_string(fe_nsid) + " is not mapped");
    if (it->second->backend_handle != h)
        return bad("nsid " + std::to_string(fe_nsid) + " is mapped to backend " +
                   std::to_string(it->second->backend_handle) + ", not " + std::to_string(h));
    namespaces_.erase(it);
    return {};
}

std::shared_ptr<const Namespace> SubsystemState::find(std::uint32_t fe_nsid) const {
    std::shared_lock lock(mu_);
    auto it = namespaces_.find(fe_nsid);
    return it == namespaces_.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<const Namespace>> SubsystemState::all() const {
    std::shared_lock lock(mu_);
    std::vector<std::shared_ptr<const Namespace>> out;
    out.reserve(namespaces_.size());
    for (const auto& [nsid, ns] : namespaces_) out.push_back(ns);
    return out;
}

std::vector<NamespaceView> SubsystemState::views() const {
    std::vector<NamespaceView> out;
    for (const auto& ns : all())
        out.push_back({ns->nsid, ns->blocks, ns->block_size, ns->backend->info().kind, ns->nguid,
                       ns->backend->info().description, ns->backend->info().deallocated_reads_zeroes});
    return out;
}

std::uint16_t SubsystemState::execute(std::span<const std::uint8_t, 64> sqe, std::span<std::byte> data,
                                      bool offloaded) {
    counters_.commands.fetch_add(1, std::memory_order_relaxed);
    const auto status = dispatch(sqe, data, offloaded);
    if (status != wire::sc::success) counters_.errors.fetch_add(1, std::memory_order_relaxed);
    return status;
}

std::uint16_t SubsystemState::dispatch(std::span<const std::uint8_t, 64> sqe, std::span<std::byte> data,
                                       bool offloaded) {
    const auto cmd = IoCommand::decode(sqe);
    if (!cmd.known() || (offloaded && (attrs_.offload_types & cmd.offload_type()) == 0))
        return wire::sc::invalid_opcode;
    if (cmd.opcode == wire::io::flush && cmd.nsid == broadcast_nsid) return flush_all();
    const auto ns = find(cmd.nsid);
    if (!ns) return wire::sc::invalid_ns;
    return run_io(cmd, *ns, data, attrs_.max_io_size, counters_);
}

std::uint16_t SubsystemState::flush_all() {
    counters_.flushes.fetch_add(1, std::memory_order_relaxed);
    std::uint16_t status = wire::sc::success;
    for (const auto& ns : all())
        if (!ns->backend->flush()) status = wire::sc::write_fault;
    return status;
}

} // namespace rpm::nvmf::detail
