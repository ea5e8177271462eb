// The vocabulary of persistence shared by the platform, pmem and flush
// modules: where a region's stores become durable, at what granularity, and
// whether NIC writes land in the CPU cache (DDIO).
#pragma once

#include <rpm/export.hpp>

#include <optional>
#include <string>
#include <string_view>

RPM_API_BEGIN

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

/// RETURN VALUE: the domain's name, as the enumerator is spelt
/// ("cpu_cache", ..., "not_pmem"); "invalid" for a value outside the enum;
/// never fails.
std::string_view to_string(PersistenceDomain d) noexcept;
/// RETURN VALUE: "byte", "cache_line" or "page"; "invalid" for a value
/// outside the enum; never fails.
std::string_view to_string(Granularity g) noexcept;
/// RETURN VALUE: "on", "off" or "unknown"; "invalid" for a value outside
/// the enum; never fails.
std::string_view to_string(Ddio d) noexcept;

/// Parse the names to_string() produces; nullopt for anything else.
/// parse_persistence_domain also accepts the empty string Linux prints for a
/// region with neither eADR nor ADR, as "unknown".
/// RETURN VALUE: the domain, or std::nullopt (exact, case-sensitive match;
/// no whitespace is trimmed); never fails.
std::optional<PersistenceDomain> parse_persistence_domain(std::string_view s) noexcept;
/// RETURN VALUE: the granularity named by `s`, or std::nullopt (the empty
/// string included); never fails.
std::optional<Granularity> parse_granularity(std::string_view s) noexcept;
/// RETURN VALUE: the DDIO state named by `s`, or std::nullopt (the empty
/// string included); never fails.
std::optional<Ddio> parse_ddio(std::string_view s) noexcept;

/// The strongest domain a region of this granularity can have: byte allows
/// cpu_cache, cache_line at most memory_controller, page means not_pmem.
/// RETURN VALUE: that domain (not_pmem for a value outside the enum);
/// never fails.
PersistenceDomain domain_cap(Granularity g) noexcept;

/// Orders domains from weakest (not_pmem) to strongest (cpu_cache); none and
/// unknown rank equal, as neither promises more than media.
/// RETURN VALUE: 3 cpu_cache, 2 memory_controller, 1 none and unknown,
/// 0 not_pmem (and a value outside the enum); never fails.
int strength(PersistenceDomain d) noexcept;

/// The weaker of two domains (what a careful writer must assume when two
/// sources disagree).
/// RETURN VALUE: the one of lower strength(); `a` when they rank equal
/// (so weaker(none, unknown) is none); never fails.
PersistenceDomain weaker(PersistenceDomain a, PersistenceDomain b) noexcept;

} // namespace rpm

RPM_API_END
