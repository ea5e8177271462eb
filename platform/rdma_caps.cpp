#include "platform/rdma_caps.hpp"

#include <cinttypes>
#include <cstdio>

namespace rpm::platform {

RdmaCaps caps_from_flags(std::uint64_t device_cap_flags_ex) noexcept {
    RdmaCaps caps;
    caps.native_flush = (device_cap_flags_ex & kDeviceFlushPersistent) != 0;
    caps.atomic_write = (device_cap_flags_ex & kDeviceAtomicWrite) != 0;
    return caps;
}

std::string caps_detail(std::uint64_t device_cap_flags_ex) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "ibv_query_device_ex: device_cap_flags_ex=0x%" PRIx64,
                  device_cap_flags_ex);
    return buf;
}

} // namespace rpm::platform
