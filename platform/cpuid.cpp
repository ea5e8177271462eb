#include "platform/cpuid.hpp"

namespace rpm::platform {

CpuFlush cpu_flush_from_cpuid(std::uint32_t leaf1_edx, std::uint32_t leaf7_ebx) noexcept {
    CpuFlush f;
    f.clflush = (leaf1_edx & kLeaf1EdxClflush) != 0;
    f.clflushopt = (leaf7_ebx & kLeaf7EbxClflushopt) != 0;
    f.clwb = (leaf7_ebx & kLeaf7EbxClwb) != 0;
    return f;
}

} // namespace rpm::platform
