// libpmem2 return codes as rpm errors. libpmem2 returns its own PMEM2_E_*
// codes for its checks and negated errno values for failed system calls.
#include "pmem/pmem2_error.hpp"

#include <libpmem2.h>

#include <cerrno>
#include <string>

namespace rpm::pmem::detail {

errc pmem2_errc(int rc) noexcept {
    switch (rc) {
    case PMEM2_E_GRANULARITY_NOT_SUPPORTED: return errc::granularity_not_supported;
    case PMEM2_E_INVALID_FILE_TYPE: return errc::not_pmem;
    case PMEM2_E_LENGTH_UNALIGNED:
    case PMEM2_E_MAP_RANGE:
    case PMEM2_E_LENGTH_OUT_OF_RANGE:
    case PMEM2_E_SOURCE_EMPTY: return errc::bad_size;
    case -EACCES:
    case -EPERM: return errc::permission_denied;
    default: return errc::pmem_failed;
    }
}

std::string pmem2_message() {
    const char* msg = pmem2_errormsg();
    return msg != nullptr ? std::string(msg) : std::string();
}

Error pmem2_error(int rc, std::string_view context) {
    std::string detail(context);
    const std::string msg = pmem2_message();
    detail += ": ";
    detail += msg.empty() ? "libpmem2 error " + std::to_string(rc) : msg;
    return {pmem2_errc(rc), std::move(detail)};
}

}  // namespace rpm::pmem::detail
