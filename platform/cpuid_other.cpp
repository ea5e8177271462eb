// Every architecture but x86: the x86 flush instructions do not exist.
// (ARM's DC CVAP and POWER's dcbstps would be detected here when rpm
// supports them.) The build compiles it in place of cpuid_x86.cpp on every
// other architecture (platform/CMakeLists.txt).
#include "platform/cpuid.hpp"

namespace rpm::platform {

CpuReading read_cpu_flush() { return {CpuFlush{}, "not x86"}; }

} // namespace rpm::platform
