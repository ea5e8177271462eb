// CRC32C: published check values, an independent bit-at-a-time reference,
// and extending a CRC over data that arrives in pieces.
#include "pdu_fixture.hpp"

#include <string_view>

namespace {
using namespace rpm::nvmf::pdu;
using namespace rpm::nvmf::pdu::test;

std::span<const std::uint8_t> bytes_of(std::string_view s) {
    return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

// The textbook reflected CRC32C, one bit at a time (polynomial 0x82F63B78 is
// 0x1EDC6F41 reflected): shares nothing with the table-driven code under test.
std::uint32_t reference(std::span<const std::uint8_t> bytes) {
    std::uint32_t crc = 0xFFFFFFFF;
    for (std::uint8_t b : bytes) {
        crc ^= b;
        for (int i = 0; i < 8; ++i) crc = (crc >> 1) ^ ((crc & 1u) ? 0x82F63B78u : 0u);
    }
    return ~crc;
}

TEST(NvmfPduCrc, CheckValue) { EXPECT_EQ(crc32c(bytes_of("123456789")), 0xE3069283u); }

TEST(NvmfPduCrc, Rfc3720Vectors) {
    // RFC 3720 B.4 (iSCSI uses the same CRC32C as NVMe/TCP).
    Bytes zeros(32, 0x00), ones(32, 0xFF), up = pattern(32, 0), down(32);
    for (std::size_t i = 0; i < 32; ++i) down[i] = std::uint8_t(31 - i);
    EXPECT_EQ(crc32c(zeros), 0x8A9136AAu);
    EXPECT_EQ(crc32c(ones), 0x62A8AB43u);
    EXPECT_EQ(crc32c(up), 0x46DD794Eu);
    EXPECT_EQ(crc32c(down), 0x113FDB5Cu);
}

TEST(NvmfPduCrc, EmptyIsZero) {
    EXPECT_EQ(crc32c({}), 0u);
    EXPECT_EQ(crc32c_extend(0xE3069283u, {}), 0xE3069283u);
}

TEST(NvmfPduCrc, MatchesBitwiseReference) {
    for (std::size_t n : {1u, 3u, 4u, 7u, 64u, 1000u, 4099u}) {
        Bytes b = pattern(n, std::uint8_t(n * 7));
        EXPECT_EQ(crc32c(b), reference(b)) << n << " bytes";
    }
}

TEST(NvmfPduCrc, ExtendEqualsWhole) {
    const Bytes all = pattern(300, 9);
    const std::span<const std::uint8_t> s(all);
    for (std::size_t cut : {0u, 1u, 2u, 5u, 150u, 299u, 300u}) {
        EXPECT_EQ(crc32c_extend(crc32c(s.first(cut)), s.subspan(cut)), crc32c(s)) << "cut at " << cut;
    }
    // Three pieces, as a data digest over several H2CData receives.
    const auto a = crc32c(s.first(10));
    const auto ab = crc32c_extend(a, s.subspan(10, 90));
    EXPECT_EQ(crc32c_extend(ab, s.subspan(100)), crc32c(s));
    EXPECT_EQ(crc32c_extend(crc32c(bytes_of("1234")), bytes_of("56789")), 0xE3069283u);
}

TEST(NvmfPduCrc, DetectsASingleFlippedBit) {
    Bytes b = pattern(64);
    const auto before = crc32c(b);
    b[17] ^= 0x10;
    EXPECT_NE(crc32c(b), before);
}

} // namespace
