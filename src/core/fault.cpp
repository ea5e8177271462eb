#include "core/fault.hpp"

#include <cstdlib>

namespace rpm {

bool fault_planted(std::string_view name) noexcept {
    const char* v = std::getenv("RPM_FAULT");
    if (v == nullptr || name.empty()) return false;
    std::string_view list(v);
    while (!list.empty()) {
        const auto comma = list.find(',');
        if (list.substr(0, comma) == name) return true;
        if (comma == std::string_view::npos) break;
        list.remove_prefix(comma + 1);
    }
    return false;
}

} // namespace rpm
