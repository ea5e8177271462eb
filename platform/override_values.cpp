#include "platform/override_values.hpp"

#include <charconv>

namespace rpm::platform::detail {

std::optional<bool> parse_yes_no(std::string_view s) noexcept {
    if (s == "yes" || s == "true" || s == "1") return true;
    if (s == "no" || s == "false" || s == "0") return false;
    return std::nullopt;
}

std::optional<CpuFlush> parse_cpu_flush(const std::vector<std::string>& names) {
    CpuFlush f;
    for (const auto& n : names) {
        if (n == "clwb") f.clwb = true;
        else if (n == "clflushopt") f.clflushopt = true;
        else if (n == "clflush") f.clflush = true;
        else if (n != "none") return std::nullopt;
    }
    return f;
}

std::optional<std::uint16_t> parse_device_id(std::string_view s) noexcept {
    if (s.starts_with("0x") || s.starts_with("0X")) s.remove_prefix(2);
    if (s.empty() || s.size() > 4) return std::nullopt;
    std::uint16_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
    if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
    return v;
}

std::vector<std::string> split(std::string_view s, char sep) {
    std::vector<std::string> out;
    while (true) {
        auto pos = s.find(sep);
        out.emplace_back(s.substr(0, pos));
        if (pos == std::string_view::npos) break;
        s.remove_prefix(pos + 1);
    }
    return out;
}

} // namespace rpm::platform::detail
