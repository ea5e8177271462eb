// IoCommand: decoding an NVM I/O command and running it on a namespace.
#include "nvmf/engine/io.hpp"
#include "nvmf/wire.hpp"

namespace rpm::nvmf::detail {
namespace {

namespace sc = wire::sc;
namespace io = wire::io;

// slba + nlb <= blocks, written so that neither side can overflow.
bool in_range(std::uint64_t slba, std::uint64_t nlb, const Namespace& ns) {
    return nlb <= ns.blocks && slba <= ns.blocks - nlb;
}
bool in_range(const IoCommand& cmd, const Namespace& ns) { return in_range(cmd.slba, cmd.nlb, ns); }

using io::dsm_range_len;

// Dataset Management: every range checked before any is deallocated, so a
// bad one leaves the namespace as it was. Without AD the attributes are
// hints about access patterns, which the backends have no use for.
std::uint16_t dataset_management(const IoCommand& cmd, const Namespace& ns, std::span<const std::byte> data,
                                 Counters& c) {
    if (!cmd.deallocate) return sc::success;
    if (data.size() < std::size_t(cmd.ranges) * dsm_range_len) return sc::internal_error;
    const auto* d = reinterpret_cast<const std::uint8_t*>(data.data());
    for (std::size_t i = 0; i < cmd.ranges; ++i) {
        const auto* r = d + i * dsm_range_len;
        if (!in_range(wire::get64(r + 8), wire::get32(r + 4), ns)) return sc::lba_out_of_range;
    }
    c.deallocates.fetch_add(1, std::memory_order_relaxed);
    for (std::size_t i = 0; i < cmd.ranges; ++i) {
        const auto* r = d + i * dsm_range_len;
        const std::uint64_t bytes = std::uint64_t(wire::get32(r + 4)) * ns.block_size;
        if (bytes == 0) continue;
        if (!ns.backend->deallocate(wire::get64(r + 8) * ns.block_size, bytes)) return sc::write_fault;
        c.bytes_deallocated.fetch_add(bytes, std::memory_order_relaxed);
    }
    return sc::success;
}

std::uint16_t transfer(const IoCommand& cmd, const Namespace& ns, std::span<std::byte> data, Counters& c) {
    const std::uint64_t offset = cmd.slba * ns.block_size;
    const bool ok = cmd.opcode == io::read ? bool(ns.backend->read(offset, data))
                                           : bool(ns.backend->write(offset, data, cmd.fua));
    return count_transfer(cmd, data.size(), ok, c);
}

} // namespace

IoCommand IoCommand::decode(std::span<const std::uint8_t, 64> sqe) noexcept {
    IoCommand cmd;
    cmd.opcode = sqe[0];
    cmd.nsid = wire::get32(&sqe[4]);
    cmd.slba = wire::get32(&sqe[40]) | std::uint64_t(wire::get32(&sqe[44])) << 32;
    const std::uint32_t cdw12 = wire::get32(&sqe[48]);
    cmd.nlb = (cdw12 & 0xFFFF) + 1;
    cmd.fua = (cdw12 & (1u << 30)) != 0;
    if (cmd.opcode == io::dataset_management) {
        cmd.ranges = std::uint16_t((wire::get32(&sqe[40]) & 0xFF) + 1);
        cmd.deallocate = (wire::get32(&sqe[44]) & (1u << 2)) != 0;
    }
    return cmd;
}

bool IoCommand::known() const noexcept {
    return opcode == io::read || opcode == io::write || opcode == io::flush || opcode == io::write_zeroes ||
           opcode == io::dataset_management;
}

std::uint32_t IoCommand::offload_type() const noexcept {
    if (opcode == io::dataset_management) return offload_dataset_management;
    return opcode == io::write_zeroes ? offload_write_zeroes : offload_read_write_flush;
}

std::uint16_t run_io(const IoCommand& cmd, const Namespace& ns, std::span<std::byte> data, std::uint32_t max_io_size,
                     Counters& c) {
    if (cmd.opcode == io::flush) {
        c.flushes.fetch_add(1, std::memory_order_relaxed);
        return ns.backend->flush() ? sc::success : sc::write_fault;
    }
    if (cmd.opcode == io::dataset_management) return dataset_management(cmd, ns, data, c);
    if (!in_range(cmd, ns)) return sc::lba_out_of_range;
    const std::uint64_t bytes = std::uint64_t(cmd.nlb) * ns.block_size;
    if (cmd.opcode == io::write_zeroes) {
        // No data moves, so max_io_size (MDTS) does not limit it.
        c.write_zeroes.fetch_add(1, std::memory_order_relaxed);
        return ns.backend->write_zeroes(cmd.slba * ns.block_size, bytes) ? sc::success : sc::write_fault;
    }
    if (auto st = check_transfer(cmd, ns, data.size(), max_io_size); st != sc::success) return st;
    return transfer(cmd, ns, data.first(static_cast<std::size_t>(bytes)), c);
}

std::uint16_t check_transfer(const IoCommand& cmd, const Namespace& ns, std::size_t data_size,
                             std::uint32_t max_io_size) {
    if (!in_range(cmd, ns)) return sc::lba_out_of_range;
    const std::uint64_t bytes = std::uint64_t(cmd.nlb) * ns.block_size;
    if (bytes > max_io_size) return sc::invalid_field;
    if (bytes > data_size) return sc::internal_error;
    return sc::success;
}

std::uint16_t count_transfer(const IoCommand& cmd, std::uint64_t bytes, bool ok, Counters& c) {
    const bool read = cmd.opcode == io::read;
    (read ? c.reads : c.writes).fetch_add(1, std::memory_order_relaxed);
    if (!ok) return read ? sc::unrecovered_read_error : sc::write_fault;
    (read ? c.bytes_read : c.bytes_written).fetch_add(bytes, std::memory_order_relaxed);
    return sc::success;
}

} // namespace rpm::nvmf::detail
