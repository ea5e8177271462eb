// printf-style formatting for rpm-bench's tables (both reports use it).
#pragma once

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <string>

namespace rpmbench {

[[gnu::format(printf, 1, 2)]] inline std::string fmt(const char* f, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, f);
    std::vsnprintf(buf, sizeof buf, f, ap);
    va_end(ap);
    return buf;
}

inline double us(double ns) { return ns / 1000.0; }
inline double us(std::uint64_t ns) { return static_cast<double>(ns) / 1000.0; }

} // namespace rpmbench
