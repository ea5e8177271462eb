#include "fault.hpp"

#include <cstdlib>
#include <string>

namespace rpm_rocksdb {

bool fault_planted(std::string_view name) noexcept {
    static const std::string planted = [] {
        const char* v = std::getenv("RPM_FAULT");
        return "," + std::string(v ? v : "") + ",";
    }();
    return planted.find("," + std::string(name) + ",") != std::string::npos;
}

} // namespace rpm_rocksdb
