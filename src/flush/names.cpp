// Names of the flush module's enums, as they appear in JSON, logs and the
// RPM_* overrides.
#include <rpm/flush.hpp>

namespace rpm::flush {

std::string_view to_string(Method m) noexcept {
    switch (m) {
    case Method::read_after_write: return "read_after_write";
    case Method::send_flush: return "send_flush";
    case Method::native_flush: return "native_flush";
    }
    return "invalid";
}

std::string_view to_string(ServerPersist p) noexcept {
    switch (p) {
    case ServerPersist::none: return "none";
    case ServerPersist::sfence: return "sfence";
    case ServerPersist::cache_flush_sfence: return "cache_flush_sfence";
    case ServerPersist::cache_flush_sfence_deep_flush: return "cache_flush_sfence_deep_flush";
    case ServerPersist::msync: return "msync";
    }
    return "invalid";
}

std::optional<Method> parse_method(std::string_view s) noexcept {
    for (auto m : {Method::read_after_write, Method::send_flush, Method::native_flush})
        if (to_string(m) == s) return m;
    return std::nullopt;
}

std::string_view to_string(Source s) noexcept {
    switch (s) {
    case Source::detected: return "detected";
    case Source::assumed: return "assumed";
    case Source::override_env: return "override (environment)";
    case Source::override_config: return "override (configuration)";
    case Source::override_api: return "override (program)";
    }
    return "invalid";
}

} // namespace rpm::flush
