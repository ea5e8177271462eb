#pragma once
// An NVM I/O command as the engine runs it: decoded from the SQE, checked
// against its namespace, executed on the backend.

#include "nvmf/engine/subsystem.hpp"

#include <cstdint>
#include <span>

namespace rpm::nvmf::detail {

struct IoCommand {
    std::uint8_t opcode = 0;
    std::uint32_t nsid = 0;
    std::uint64_t slba = 0;  ///< CDW10 | CDW11 << 32
    std::uint32_t nlb = 0;   ///< (CDW12 & 0xffff) + 1, not 0's based
    bool fua = false;        ///< CDW12 bit 30 (Read, Write, Write Zeroes)
    /// Dataset Management: its ranges (CDW10 NR + 1) and attribute
    /// Deallocate (CDW11 bit 2); the ranges are the command's data.
    std::uint16_t ranges = 0;
    bool deallocate = false;

    static IoCommand decode(std::span<const std::uint8_t, 64> sqe) noexcept;
    /// Read, Write, Flush, Write Zeroes or Dataset Management.
    [[nodiscard]] bool known() const noexcept;
    /// The OffloadType bit that covers it.
    [[nodiscard]] std::uint32_t offload_type() const noexcept;
};

/// Check `cmd` against `ns` (range, transfer size) and run it on its
/// backend, data in `data`; counts into `c` (not commands or errors).
/// RETURN VALUE: the NVMe status: success, lba_out_of_range (for Dataset
/// Management: any range, and then none is deallocated), invalid_field
/// (transfer over max_io_size), internal_error (`data` smaller than the
/// transfer or the ranges), write_fault, unrecovered_read_error.
std::uint16_t run_io(const IoCommand& cmd, const Namespace& ns, std::span<std::byte> data, std::uint32_t max_io_size,
                     Counters& c);

/// A Read or Write's checks (range, transfer size, data at hand), without
/// moving a byte. RETURN VALUE: success, or run_io's status for it.
std::uint16_t check_transfer(const IoCommand& cmd, const Namespace& ns, std::size_t data_size,
                             std::uint32_t max_io_size);
/// Count a Read or Write of `bytes` that ran, `ok` when it moved them.
/// RETURN VALUE: its status (success, unrecovered_read_error, write_fault).
std::uint16_t count_transfer(const IoCommand& cmd, std::uint64_t bytes, bool ok, Counters& c);

} // namespace rpm::nvmf::detail
