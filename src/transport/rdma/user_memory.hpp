// Application memory registered with a client connection's device
// (Connection::register_memory): writes from it and reads into it are
// posted on it directly, without a bounce entry or a copy.
//
// Shared: the application's LocalMemory handle and every operation posted
// on it hold a reference, so the MR is deregistered only once the handle is
// gone and no work request can still use it. The connection's list holds
// weak references (a dropped handle stops new operations from using it).
#pragma once

#include "transport/rdma/device_pools.hpp"
#include "transport/rdma/handles.hpp"

#include <cstddef>
#include <memory>
#include <span>

namespace rpm::rdma {

struct UserMemory {
    std::shared_ptr<DevicePools> device;  // declared first: the peer outlives the MR
    MrHandle mr;
    const std::byte* base = nullptr;
    std::size_t size = 0;

    /// [p, p + n) lies wholly inside this registration.
    [[nodiscard]] bool contains(const std::byte* p, std::size_t n) const noexcept {
        return p >= base && n <= size && static_cast<std::size_t>(p - base) <= size - n;
    }
    /// Where `p` sits in the MR.
    [[nodiscard]] std::size_t offset_of(const std::byte* p) const noexcept {
        return static_cast<std::size_t>(p - base);
    }
};

/// What a registration may be used for: the source of writes, the target of reads.
inline constexpr int kUserMemoryUsage = kUsageWriteSrc | kUsageReadDst;

} // namespace rpm::rdma
