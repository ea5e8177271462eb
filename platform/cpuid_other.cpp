// Every architecture but x86: the x86 flush instructions do not exist.
// (ARM's DC CVAP and POWER's dcbstps would be detected here when rpm
// supports them.)
#if !defined(__x86_64__) && !defined(__i386__)

#include "platform/cpuid.hpp"

namespace rpm::platform {

CpuReading read_cpu_flush() { return {CpuFlush{}, "not x86"}; }

} // namespace rpm::platform

#endif
