// rpm::detail::crc32c (src/core/crc32c.hpp): published check values, an
// independent bit-at-a-time reference, extending at every split point, and
// the SSE4.2 and table implementations agreeing on every length and start
// alignment the 8-byte loop and its head and tail loops can meet.
#include "core/crc32c.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string_view>
#include <vector>

namespace {

using rpm::detail::crc32c;
using rpm::detail::crc32c_extend;
using rpm::detail::crc32c_portable;

using Implementation = std::uint32_t (*)(std::uint32_t, std::span<const std::byte>) noexcept;

std::span<const std::byte> bytes_of(std::string_view s) { return std::as_bytes(std::span(s.data(), s.size())); }

std::vector<std::byte> random_bytes(std::size_t n, std::uint32_t seed) {
    std::mt19937 gen(seed);
    std::vector<std::byte> out(n);
    for (auto& b : out) b = static_cast<std::byte>(gen() & 0xFF);
    return out;
}

// The textbook reflected CRC32C, one bit at a time (0x82F63B78 is 0x1EDC6F41
// reflected): shares nothing with either implementation under test.
std::uint32_t reference(std::span<const std::byte> bytes) {
    std::uint32_t crc = 0xFFFFFFFF;
    for (std::byte b : bytes) {
        crc ^= std::to_integer<std::uint32_t>(b);
        for (int i = 0; i < 8; ++i) crc = (crc >> 1) ^ ((crc & 1u) ? 0x82F63B78u : 0u);
    }
    return ~crc;
}

// The dispatcher, and each implementation this CPU can run.
std::vector<std::pair<const char*, Implementation>> implementations() {
    std::vector<std::pair<const char*, Implementation>> out{{"chosen", crc32c_extend}, {"portable", crc32c_portable}};
#if defined(__x86_64__)
    if (rpm::detail::crc32c_sse42_supported()) out.emplace_back("sse42", rpm::detail::crc32c_sse42);
#endif
    return out;
}

TEST(Crc32c, CheckValue) {
    EXPECT_EQ(crc32c(bytes_of("123456789")), 0xE3069283u);
    for (auto [name, f] : implementations()) EXPECT_EQ(f(0, bytes_of("123456789")), 0xE3069283u) << name;
}

TEST(Crc32c, Rfc3720Vectors) {
    // RFC 3720 B.4: iSCSI's CRC32C, the one NVMe/TCP and the log use.
    std::vector<std::byte> zeros(32, std::byte{0x00}), ones(32, std::byte{0xFF}), up(32), down(32);
    for (std::size_t i = 0; i < 32; ++i) {
        up[i] = static_cast<std::byte>(i);
        down[i] = static_cast<std::byte>(31 - i);
    }
    for (auto [name, f] : implementations()) {
        EXPECT_EQ(f(0, zeros), 0x8A9136AAu) << name;
        EXPECT_EQ(f(0, ones), 0x62A8AB43u) << name;
        EXPECT_EQ(f(0, up), 0x46DD794Eu) << name;
        EXPECT_EQ(f(0, down), 0x113FDB5Cu) << name;
    }
    EXPECT_EQ(crc32c(zeros), 0x8A9136AAu);
    EXPECT_EQ(crc32c(ones), 0x62A8AB43u);
}

TEST(Crc32c, EmptyIsZeroAndExtendingByNothingChangesNothing) {
    EXPECT_EQ(crc32c({}), 0u);
    for (auto [name, f] : implementations()) {
        EXPECT_EQ(f(0, {}), 0u) << name;
        EXPECT_EQ(f(0xE3069283u, {}), 0xE3069283u) << name;
    }
}

TEST(Crc32c, MatchesBitwiseReference) {
    for (std::size_t n : {1u, 3u, 7u, 8u, 9u, 64u, 1000u, 4099u}) {
        const auto b = random_bytes(n, static_cast<std::uint32_t>(n));
        for (auto [name, f] : implementations()) EXPECT_EQ(f(0, b), reference(b)) << name << ", " << n << " bytes";
    }
}

TEST(Crc32c, ExtendAtEverySplitPointEqualsWhole) {
    const auto all = random_bytes(300, 1);
    const std::span<const std::byte> s(all);
    const std::uint32_t whole = reference(s);
    for (auto [name, f] : implementations()) {
        for (std::size_t cut = 0; cut <= s.size(); ++cut) {
            ASSERT_EQ(f(f(0, s.first(cut)), s.subspan(cut)), whole) << name << ", cut at " << cut;
        }
    }
    for (std::size_t cut = 0; cut <= s.size(); ++cut) {
        ASSERT_EQ(crc32c_extend(crc32c(s.first(cut)), s.subspan(cut)), whole) << "cut at " << cut;
    }
}

TEST(Crc32c, Sse42AgreesWithPortableAtEveryLengthAndAlignment) {
#if defined(__x86_64__)
    if (!rpm::detail::crc32c_sse42_supported()) GTEST_SKIP() << "this CPU has no SSE4.2";
    // 8 spare bytes so that every start offset 0..7 can be followed by 300.
    const auto buf = random_bytes(300 + 8, 2);
    for (std::size_t align = 0; align < 8; ++align) {
        for (std::size_t len = 0; len <= 300; ++len) {
            const auto s = std::span<const std::byte>(buf).subspan(align, len);
            ASSERT_EQ(rpm::detail::crc32c_sse42(0, s), crc32c_portable(0, s)) << "offset " << align << ", " << len
                                                                              << " bytes";
            // From a running CRC too, as crc32c_extend uses them.
            ASSERT_EQ(rpm::detail::crc32c_sse42(0x12345678u, s), crc32c_portable(0x12345678u, s))
                << "offset " << align << ", " << len << " bytes, extended";
        }
    }
#else
    GTEST_SKIP() << "SSE4.2 is x86-64 only";
#endif
}

TEST(Crc32c, DetectsASingleFlippedBit) {
    auto b = random_bytes(64, 3);
    const auto before = crc32c(b);
    b[17] ^= std::byte{0x10};
    EXPECT_NE(crc32c(b), before);
}

} // namespace
