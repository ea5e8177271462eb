// How an rdma:// I/O thread waits for its completions (ClientOptions and
// ServerOptions::completion). tcp:// ignores it.
#pragma once

#include <optional>
#include <string_view>

namespace rpm {

enum class CompletionMode {
    /// Spin on the completion queue for a short while after each piece of
    /// work (kAdaptiveSpin), then arm the completion channel and sleep. A
    /// request answered within the spin costs no wake-up; an idle
    /// connection costs no CPU. The default.
    adaptive,
    /// Spin on the completion queue and never sleep: the lowest latency,
    /// one CPU kept busy per connection's I/O thread (and per server
    /// session) for as long as it lives.
    busy,
    /// Sleep in poll() on the completion channel for every completion: no
    /// CPU while waiting, a wake-up per completion.
    event,
};

std::string_view to_string(CompletionMode m) noexcept;
/// "adaptive", "busy", "event"; nullopt for anything else.
std::optional<CompletionMode> parse_completion_mode(std::string_view s) noexcept;

} // namespace rpm
