// The cpuid query on x86 (the build compiles cpuid_other.cpp instead elsewhere:
// platform/CMakeLists.txt).
#include "platform/cpuid.hpp"

#include <cpuid.h>

namespace rpm::platform {

CpuReading read_cpu_flush() {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0)
        return {CpuFlush{}, "cpuid leaf 1 not supported"};
    const std::uint32_t leaf1_edx = edx;
    // __get_cpuid_count checks the maximum leaf itself; an old CPU without
    // leaf 7 has neither CLFLUSHOPT nor CLWB.
    std::uint32_t leaf7_ebx = 0;
    std::string detail = "cpuid";
    if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) != 0)
        leaf7_ebx = ebx;
    else
        detail = "cpuid (no leaf 7: no CLFLUSHOPT/CLWB)";
    return {cpu_flush_from_cpuid(leaf1_edx, leaf7_ebx), detail};
}

} // namespace rpm::platform
