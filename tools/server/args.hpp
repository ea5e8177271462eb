// The values rpm-server parses itself, for serving and for reset-term alike:
// a region spec and whole numbers, each refused whole when any part is junk.
#pragma once

#include <rpm/server.hpp>

#include <charconv>
#include <cstdint>
#include <string>

namespace rpm_server {

/// "64M", "1G", "4096" -> bytes; 0 on junk.
inline std::size_t parse_size(const std::string& s) {
    std::size_t pos = 0;
    unsigned long long v = 0;
    try { v = std::stoull(s, &pos); } catch (...) { return 0; }
    std::string unit = s.substr(pos);
    if (unit == "K" || unit == "k") v <<= 10;
    else if (unit == "M" || unit == "m") v <<= 20;
    else if (unit == "G" || unit == "g") v <<= 30;
    else if (!unit.empty()) return 0;
    return static_cast<std::size_t>(v);
}

/// NAME=PATH[:SIZE]; a SIZE means: create the file if it is missing.
inline bool parse_region(const std::string& spec, rpm::RegionSpec& r, std::string& why) {
    auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) return why = "expected NAME=PATH[:SIZE]", false;
    r.name = spec.substr(0, eq);
    std::string rest = spec.substr(eq + 1);
    auto colon = rest.rfind(':');
    if (colon != std::string::npos) {
        r.size = parse_size(rest.substr(colon + 1));
        if (r.size == 0) return why = "size '" + rest.substr(colon + 1) + "' is not like 4096, 64M or 1G", false;
        r.create = true;
        rest = rest.substr(0, colon);
    }
    if (rest.empty()) return why = "no PATH: expected NAME=PATH[:SIZE]", false;
    r.path = rest;
    return true;
}

/// A decimal 0 to 2^64-1, digits only (no sign, no space, no unit).
inline bool parse_u64(const std::string& s, std::uint64_t& out) {
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return !s.empty() && ec == std::errc{} && end == s.data() + s.size();
}

} // namespace rpm_server
