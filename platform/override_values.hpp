// Parsers for override values, shared by the environment and the
// configuration-file readers so both accept exactly the same spellings.
#pragma once

#include <rpm/persistence.hpp>
#include <rpm/platform.hpp>
#include <rpm/result.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rpm::platform::detail {

std::optional<bool> parse_yes_no(std::string_view s) noexcept;

/// "clwb,clflushopt" / "none"; nullopt on an unknown name.
std::optional<CpuFlush> parse_cpu_flush(const std::vector<std::string>& names);

/// "347a" or "0x347a"; nullopt when not a 16-bit hex number.
std::optional<std::uint16_t> parse_device_id(std::string_view s) noexcept;

std::vector<std::string> split(std::string_view s, char sep);

// The accepted spellings, for error messages.
inline constexpr const char* kDomainValues = "cpu_cache, memory_controller, none, unknown, not_pmem";
inline constexpr const char* kDdioValues = "on, off, unknown";
inline constexpr const char* kYesNoValues = "yes, no";
inline constexpr const char* kGranularityValues = "byte, cache_line, page";
inline constexpr const char* kCpuFlushValues = "clwb, clflushopt, clflush, none";

} // namespace rpm::platform::detail
