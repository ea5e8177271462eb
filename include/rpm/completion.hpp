// How an rdma:// I/O thread waits for its completions (ClientOptions and
// ServerOptions::completion). tcp:// ignores it.
#pragma once

#include <rpm/export.hpp>

#include <optional>
#include <string_view>

RPM_API_BEGIN

namespace rpm {

enum class CompletionMode {
    /// Spin on the completion queue while a completion of the thread's own
    /// is expected (an operation on the wire: up to 1 ms) and for 50 µs
    /// after its last piece of work otherwise, then arm the completion
    /// channel and sleep. An operation answered within the spin costs no
    /// wake-up; an idle connection costs no CPU. The default.
    adaptive,
    /// Spin on the completion queue and never sleep: the lowest latency,
    /// one CPU kept busy per connection's I/O thread (and per server
    /// session) for as long as it lives.
    busy,
    /// Sleep in poll() on the completion channel for every completion: no
    /// CPU while waiting, a wake-up per completion.
    event,
};

/// RETURN VALUE: the mode's name: "adaptive", "busy" or "event" ("adaptive"
/// too for a value outside the enum); never fails.
std::string_view to_string(CompletionMode m) noexcept;
/// "adaptive", "busy", "event"; nullopt for anything else.
/// RETURN VALUE: the mode named by `s` (exact, case-sensitive), or
/// std::nullopt; never fails.
std::optional<CompletionMode> parse_completion_mode(std::string_view s) noexcept;

} // namespace rpm

RPM_API_END
