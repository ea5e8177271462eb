// The library's side of include/rpm/log.hpp: what its code calls to say
// something. log_enabled() is one relaxed atomic load, so a disabled trace
// in a command path costs a compare, and nothing is formatted.
#pragma once

#include <rpm/log.hpp>

#include <string_view>

namespace rpm::detail {

/// Whether a message at `level` would go anywhere.
bool log_enabled(LogLevel level) noexcept;

/// Hands a formatted message to the handler (or stderr).
void log(LogLevel level, std::string_view component, std::string_view message);

/// printf-style: formats only when the level is enabled. Messages longer
/// than 1 KiB are cut (and end in "...").
void logf(LogLevel level, const char* component, const char* format, ...) __attribute__((format(printf, 3, 4)));

} // namespace rpm::detail
