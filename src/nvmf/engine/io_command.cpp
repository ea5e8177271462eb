// IoCommand: decoding an NVM I/O command and running it on a namespace.
#include "nvmf/detail/engine_io.hpp"
#include "nvmf/detail/wire.hpp"

namespace rpm::nvmf::detail {
namespace {

namespace sc = wire::sc;
namespace io = wire::io;

// slba + nlb <= blocks, written so that neither side can overflow.
bool in_range(const IoCommand& cmd, const Namespace& ns) {
    return cmd.nlb <= ns.blocks && cmd.slba <= ns.blocks - cmd.nlb;
}

std::uint16_t transfer(const IoCommand& cmd, const Namespace& ns, std::span<std::byte> data, Counters& c) {
    const std::uint64_t offset = cmd.slba * ns.block_size;
    if (cmd.opcode == io::read) {
        c.reads.fetch_add(1, std::memory_order_relaxed);
        if (!ns.backend->read(offset, data)) return sc::unrecovered_read_error;
        c.bytes_read.fetch_add(data.size(), std::memory_order_relaxed);
        return sc::success;
    }
    c.writes.fetch_add(1, std::memory_order_relaxed);
    if (!ns.backend->write(offset, data, cmd.fua)) return sc::write_fault;
    c.bytes_written.fetch_add(data.size(), std::memory_order_relaxed);
    return sc::success;
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
    return cmd;
}

bool IoCommand::known() const noexcept {
    return opcode == io::read || opcode == io::write || opcode == io::flush || opcode == io::write_zeroes;
}

std::uint32_t IoCommand::offload_type() const noexcept {
    return opcode == io::write_zeroes ? offload_write_zeroes : offload_read_write_flush;
}

std::uint16_t run_io(const IoCommand& cmd, const Namespace& ns, std::span<std::byte> data, std::uint32_t max_io_size,
                     Counters& c) {
    if (cmd.opcode == io::flush) {
        c.flushes.fetch_add(1, std::memory_order_relaxed);
        return ns.backend->flush() ? sc::success : sc::write_fault;
    }
    if (!in_range(cmd, ns)) return sc::lba_out_of_range;
    const std::uint64_t bytes = std::uint64_t(cmd.nlb) * ns.block_size;
    if (cmd.opcode == io::write_zeroes) {
        // No data moves, so max_io_size (MDTS) does not limit it.
        c.write_zeroes.fetch_add(1, std::memory_order_relaxed);
        return ns.backend->write_zeroes(cmd.slba * ns.block_size, bytes) ? sc::success : sc::write_fault;
    }
    if (bytes > max_io_size) return sc::invalid_field;
    if (bytes > data.size()) return sc::internal_error;
    return transfer(cmd, ns, data.first(static_cast<std::size_t>(bytes)), c);
}

} // namespace rpm::nvmf::detail
