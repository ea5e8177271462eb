// What the library has to say that is not an error returned to a caller:
// a connection a server refused, an NVMe-oF host that failed to
// authenticate, a command the target could not serve. By default it goes to
// stderr (warnings and worse); an application hands it to its own logger
// with set_log_handler() and chooses how much with set_log_level() or the
// RPM_LOG environment variable (error, warning, info, debug, trace).
#pragma once

#include <rpm/export.hpp>

#include <functional>
#include <optional>
#include <string_view>

RPM_API_BEGIN

namespace rpm {

/// How much a message matters, most first. A level lets through itself and
/// everything above it.
enum class LogLevel {
    error,    ///< something failed that nobody's call returns (a server thread's)
    warning,  ///< refused or dropped peers, failed authentications
    info,     ///< connections served and ended, decisions taken
    debug,    ///< failed commands in detail (was RPM_NVMF_TRACE=errors)
    trace,    ///< every command (was RPM_NVMF_TRACE=1): slow, for interoperability work
};

/// A message's receiver: its level, the part of rpm it comes from ("nvmf",
/// "nvmf rdma", "server") and the text, without a trailing newline. The
/// views are valid during the call only.
using LogHandler = std::function<void(LogLevel level, std::string_view component, std::string_view message)>;

/// Sends the library's messages to `handler` (or back to stderr when it is
/// empty). It may be called from any of rpm's threads, several at once: it
/// must be thread-safe, must not block for long (it runs on I/O threads)
/// and must not call back into rpm. A handler being replaced may still be
/// running on another thread when this returns.
/// RETURN VALUE: none; never fails.
void set_log_handler(LogHandler handler);

/// Lets through messages at `level` and above; the rest are not even
/// formatted. The initial level is RPM_LOG's when it names one, else
/// warning.
/// RETURN VALUE: none; never fails.
void set_log_level(LogLevel level) noexcept;

/// The level now in force.
/// RETURN VALUE: the level; never fails.
LogLevel log_level() noexcept;

/// "error", "warning", "info", "debug" or "trace" as a level.
/// RETURN VALUE: the level, or std::nullopt for any other text.
std::optional<LogLevel> parse_log_level(std::string_view text) noexcept;

/// The level's name, as parse_log_level() reads it.
/// RETURN VALUE: a static string; never fails.
std::string_view to_string(LogLevel level) noexcept;

} // namespace rpm

RPM_API_END
