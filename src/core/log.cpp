// One handler and one level for the whole library (include/rpm/log.hpp).
#include "core/log.hpp"

#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>

namespace rpm {

namespace {

// RPM_LOG names the level; the older RPM_NVMF_TRACE ("errors": failed
// commands, anything else: every command) still works where RPM_LOG is unset.
LogLevel initial_level() noexcept {
    if (const char* v = std::getenv("RPM_LOG")) {
        if (auto l = parse_log_level(v)) return *l;
        std::fprintf(stderr, "rpm: RPM_LOG=%s is not a level (error, warning, info, debug, trace); using warning\n", v);
    }
    if (const char* v = std::getenv("RPM_NVMF_TRACE")) return std::string_view(v) == "errors" ? LogLevel::debug : LogLevel::trace;
    return LogLevel::warning;
}

std::atomic<int>& level_word() noexcept {
    static std::atomic<int> level{static_cast<int>(initial_level())};
    return level;
}

// The handler is swapped under a mutex and called through a shared_ptr
// copy, so a call in progress keeps the one it started with.
struct HandlerSlot {
    std::mutex mu;
    std::shared_ptr<const LogHandler> handler;
};

HandlerSlot& slot() {
    static HandlerSlot s;
    return s;
}

void to_stderr(LogLevel, std::string_view component, std::string_view message) {
    // One write per line, so lines of several threads do not interleave.
    std::string line = "rpm ";
    line.append(component).append(": ").append(message).append("\n");
    std::fwrite(line.data(), 1, line.size(), stderr);
}

} // namespace

void set_log_handler(LogHandler handler) {
    auto h = handler ? std::make_shared<const LogHandler>(std::move(handler)) : nullptr;
    std::lock_guard lock(slot().mu);
    slot().handler = std::move(h);
}

void set_log_level(LogLevel level) noexcept { level_word().store(static_cast<int>(level), std::memory_order_relaxed); }

LogLevel log_level() noexcept { return static_cast<LogLevel>(level_word().load(std::memory_order_relaxed)); }

std::optional<LogLevel> parse_log_level(std::string_view text) noexcept {
    for (auto l : {LogLevel::error, LogLevel::warning, LogLevel::info, LogLevel::debug, LogLevel::trace})
        if (text == to_string(l)) return l;
    return std::nullopt;
}

std::string_view to_string(LogLevel level) noexcept {
    switch (level) {
    case LogLevel::error: return "error";
    case LogLevel::warning: return "warning";
    case LogLevel::info: return "info";
    case LogLevel::debug: return "debug";
    case LogLevel::trace: return "trace";
    }
    return "unknown";
}

namespace detail {

bool log_enabled(LogLevel level) noexcept {
    return static_cast<int>(level) <= level_word().load(std::memory_order_relaxed);
}

void log(LogLevel level, std::string_view component, std::string_view message) {
    if (!log_enabled(level)) return;
    std::shared_ptr<const LogHandler> h;
    {
        std::lock_guard lock(slot().mu);
        h = slot().handler;
    }
    if (h) (*h)(level, component, message);
    else to_stderr(level, component, message);
}

void logf(LogLevel level, const char* component, const char* format, ...) {
    if (!log_enabled(level)) return;
    char buf[1024];
    va_list ap;
    va_start(ap, format);
    const int n = std::vsnprintf(buf, sizeof buf, format, ap);
    va_end(ap);
    if (n < 0) return;
    std::string_view text(buf, std::min<std::size_t>(static_cast<std::size_t>(n), sizeof buf - 1));
    std::string cut;
    if (static_cast<std::size_t>(n) >= sizeof buf) {
        cut.assign(text.substr(0, sizeof buf - 4)).append("...");
        text = cut;
    }
    log(level, component, text);
}

} // namespace detail

} // namespace rpm
