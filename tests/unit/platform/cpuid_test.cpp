#include "platform/cpuid.hpp"

#include <gtest/gtest.h>

namespace rpm::platform {
namespace {

TEST(CpuFlushBits, NoBitsNoInstructions) {
    CpuFlush f = cpu_flush_from_cpuid(0, 0);
    EXPECT_FALSE(f.clflush);
    EXPECT_FALSE(f.clflushopt);
    EXPECT_FALSE(f.clwb);
}

TEST(CpuFlushBits, Leaf1Edx19IsClflushOnly) {
    CpuFlush f = cpu_flush_from_cpuid(1U << 19, 0);
    EXPECT_TRUE(f.clflush);
    EXPECT_FALSE(f.clflushopt);
    EXPECT_FALSE(f.clwb);
}

TEST(CpuFlushBits, Leaf7Ebx23IsClflushoptOnly) {
    CpuFlush f = cpu_flush_from_cpuid(0, 1U << 23);
    EXPECT_FALSE(f.clflush);
    EXPECT_TRUE(f.clflushopt);
    EXPECT_FALSE(f.clwb);
}

TEST(CpuFlushBits, Leaf7Ebx24IsClwbOnly) {
    CpuFlush f = cpu_flush_from_cpuid(0, 1U << 24);
    EXPECT_FALSE(f.clflush);
    EXPECT_FALSE(f.clflushopt);
    EXPECT_TRUE(f.clwb);
}

TEST(CpuFlushBits, NeighbouringBitsAreIgnored) {
    // EDX bit 19 and EBX bits 23/24 only: the bits around them (e.g.
    // leaf 7 EBX bit 22, leaf 1 EDX bit 18/20) mean other things.
    CpuFlush f = cpu_flush_from_cpuid(~(1U << 19), ~((1U << 23) | (1U << 24)));
    EXPECT_FALSE(f.clflush);
    EXPECT_FALSE(f.clflushopt);
    EXPECT_FALSE(f.clwb);
}

TEST(CpuFlushBits, LeafSevenIsNotReadFromLeafOne) {
    CpuFlush f = cpu_flush_from_cpuid((1U << 23) | (1U << 24), 1U << 19);
    EXPECT_FALSE(f.clflush);
    EXPECT_FALSE(f.clflushopt);
    EXPECT_FALSE(f.clwb);
}

TEST(CpuFlushBits, RealCpuidReportsItsSource) {
    CpuReading r = read_cpu_flush();
#if defined(__x86_64__) || defined(__i386__)
    EXPECT_EQ(r.detail.rfind("cpuid", 0), 0u) << r.detail;
    // Every x86-64 CPU has CLFLUSH (it is part of SSE2).
    EXPECT_TRUE(r.flush.clflush);
#else
    EXPECT_EQ(r.detail, "not x86");
    EXPECT_FALSE(r.flush.clflush);
#endif
}

} // namespace
} // namespace rpm::platform
