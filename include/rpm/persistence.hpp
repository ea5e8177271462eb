// The vocabulary of persistence shared by the platform, pmem and flush
// modules: where a region's stores become durable, at what granularity, and
// whether NIC writes land in the CPU cache (DDIO).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace rpm {

/// Where stores to a region become power-fail safe (ACPI NFIT, as Linux
/// reports it in /sys/bus/nd/devices/region*/persistence_domain).
enum class PersistenceDomain {
    cpu_cache,          ///< eADR: caches are flushed on power loss
    memory_controller,  ///< ADR: the memory controller's WPQ is flushed
    none,               ///< PM without an ADR promise: only media is safe
    unknown,            ///< PM, but the platform says nothing (e.g. memmap=)
    not_pmem,           ///< page cache: a regular or tmpfs file, needs msync
};

/// libpmem2's store granularity: the smallest unit a store is made durable in
/// without an explicit flush of a larger unit.
enum class Granularity {
    byte,        ///< eADR: a store is durable once globally visible
    cache_line,  ///< PM without eADR: CLWB/CLFLUSHOPT + SFENCE
    page,        ///< not PM: msync
};

/// Data Direct I/O: do inbound PCIe writes of the RNIC allocate in the LLC?
enum class Ddio { on, off, unknown };

std::string_view to_string(PersistenceDomain d) noexcept;
std::string_view to_string(Granularity g) noexcept;
std::string_view to_string(Ddio d) noexcept;

/// Parse the names to_string() produces; nullopt for anything else.
/// parse_persistence_domain also accepts the empty string Linux prints for a
/// region with neither eADR nor ADR, as "unknown".
std::optional<PersistenceDomain> parse_persistence_domain(std::string_view s) noexcept;
std::optional<Granularity> parse_granularity(std::string_view s) noexcept;
std::optional<Ddio> parse_ddio(std::string_view s) noexcept;

/// The strongest domain a region of this granularity can have: byte allows
/// cpu_cache, cache_line at most memory_controller, page means not_pmem.
PersistenceDomain domain_cap(Granularity g) noexcept;

/// Orders domains from weakest (not_pmem) to strongest (cpu_cache); none and
/// unknown rank equal, as neither promises more than media.
int strength(PersistenceDomain d) noexcept;

/// The weaker of two domains (what a careful writer must assume when two
/// sources disagree).
PersistenceDomain weaker(PersistenceDomain a, PersistenceDomain b) noexcept;

} // namespace rpm
