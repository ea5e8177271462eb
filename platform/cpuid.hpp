// CPU cache-flush instructions, from cpuid.
//
// The decoding is a pure function of the register values so tests can
// feed it each bit; the cpuid call itself lives in cpuid_x86.cpp (and
// cpuid_other.cpp for every other architecture).
#pragma once

#include <rpm/platform.hpp>

#include <cstdint>
#include <string>

namespace rpm::platform {

inline constexpr std::uint32_t kLeaf1EdxClflush = 1U << 19;     // CLFSH
inline constexpr std::uint32_t kLeaf7EbxClflushopt = 1U << 23;  // CLFLUSHOPT
inline constexpr std::uint32_t kLeaf7EbxClwb = 1U << 24;        // CLWB

/// The flush instructions announced by cpuid leaf 1 EDX and leaf 7
/// (subleaf 0) EBX.
CpuFlush cpu_flush_from_cpuid(std::uint32_t leaf1_edx, std::uint32_t leaf7_ebx) noexcept;

struct CpuReading {
    CpuFlush flush;
    std::string detail;  ///< "cpuid", or why the instructions are unknown
};

/// This CPU's flush instructions (all false off x86, detail "not x86").
CpuReading read_cpu_flush();

} // namespace rpm::platform
