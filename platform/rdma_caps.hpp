// Native RDMA FLUSH and atomic write, from the extended device capability
// flags of ibv_query_device_ex.
#pragma once

#include <rpm/result.hpp>

#include <cstdint>
#include <string>

namespace rpm::platform {

// Kernel uapi bits of device_cap_flags_ex (include/uapi/rdma/ib_user_verbs.h,
// enum ib_uverbs_device_cap_flags, Linux 6.2). Debian 12's rdma-core 44
// headers predate them, so they are defined here.
inline constexpr std::uint64_t kDeviceFlushGlobal = 1ULL << 38;      // IB_UVERBS_DEVICE_FLUSH_GLOBAL
inline constexpr std::uint64_t kDeviceFlushPersistent = 1ULL << 39;  // IB_UVERBS_DEVICE_FLUSH_PERSISTENT
inline constexpr std::uint64_t kDeviceAtomicWrite = 1ULL << 40;      // IB_UVERBS_DEVICE_ATOMIC_WRITE

struct RdmaCaps {
    /// FLUSH to the persistence domain. FLUSH_GLOBAL (visibility only) does
    /// not make a write durable, so it does not count.
    bool native_flush = false;
    bool atomic_write = false;
};

RdmaCaps caps_from_flags(std::uint64_t device_cap_flags_ex) noexcept;

/// "ibv_query_device_ex: device_cap_flags_ex=0x..."
std::string caps_detail(std::uint64_t device_cap_flags_ex);

/// device_cap_flags_ex of the verbs device called `name` (mlx5_0).
/// rdma_unavailable, with the call and its reason, when there is no such
/// device or a verbs call fails.
Result<std::uint64_t> query_device_cap_flags_ex(const std::string& name);

} // namespace rpm::platform
