// Reading an NVMe controller's CMB and PMR from its BAR0 registers, for
// machines where the kernel has not published them as p2pmem.
#pragma once

#include <rpm/p2p.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rpm::p2p::detail {

namespace fs = std::filesystem;

/// Register offsets in BAR0 and the bits rpm reads (NVMe base
/// specification 1.4+, include/linux/nvme.h).
namespace nvme_reg {
inline constexpr std::uint32_t cap_lo = 0x00, cap_hi = 0x04;
inline constexpr std::uint32_t cmbloc = 0x38, cmbsz = 0x3c;
inline constexpr std::uint32_t pmrcap = 0xe00, pmrctl = 0xe04;
inline constexpr int cap_pmrs_bit = 56, cap_cmbs_bit = 57;
} // namespace nvme_reg

/// 32-bit little-endian registers at `offsets` of a BAR file: pread, or a
/// read-only shared mapping when the kernel refuses read() on it (sysfs
/// resourceN of a memory BAR) or `force_mmap` asks for it (tests).
/// ERRORS: path_not_found, permission_denied, io_error, bad_size (the
/// file ends before a register: the detail names both).
Result<std::vector<std::uint32_t>> read_registers(const fs::path& file,
                                                  std::span<const std::uint32_t> offsets,
                                                  bool force_mmap = false);

/// The size of BAR `bar` from a `resource` table ("start end flags" per
/// line); nullopt when the line is missing, malformed, or unused (0).
std::optional<std::uint64_t> bar_size(std::string_view resource_table, int bar);

/// What BAR0 said, and the BAR sizes from `resource`.
struct NvmeView {
    std::string bdf;
    std::uint64_t cap = 0;
    std::uint32_t cmbloc = 0, cmbsz = 0;
    std::optional<std::uint32_t> pmrcap, pmrctl;  ///< read only when CAP.PMRS is set
    std::string resource_table;
};

/// The CMB and PMR providers a controller's registers describe. Anything
/// present but unusable (disabled, reserved fields, outside its BAR) goes
/// to `skipped` instead, with the reason.
std::vector<Provider> decode_nvme(const NvmeView& v, std::vector<std::string>& skipped);

/// Read one controller under root (resource0, resource) and decode it.
std::vector<Provider> nvme_providers(const fs::path& root, const std::string& bdf,
                                     std::vector<std::string>& skipped);

} // namespace rpm::p2p::detail
