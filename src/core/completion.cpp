#include <rpm/completion.hpp>

namespace rpm {

std::string_view to_string(CompletionMode m) noexcept {
    switch (m) {
    case CompletionMode::adaptive: return "adaptive";
    case CompletionMode::busy: return "busy";
    case CompletionMode::event: return "event";
    }
    return "adaptive";
}

std::optional<CompletionMode> parse_completion_mode(std::string_view s) noexcept {
    for (auto m : {CompletionMode::adaptive, CompletionMode::busy, CompletionMode::event})
        if (s == to_string(m)) return m;
    return std::nullopt;
}

} // namespace rpm
