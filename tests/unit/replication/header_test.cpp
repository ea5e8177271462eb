#include "replication/header.hpp"

#include <gtest/gtest.h>

#include <cstring>

namespace rpm::replication {
namespace {

TEST(ReplicaHeader, RoundTripsEveryField) {
    Header h{random_group(), 7, 3u << 20, 12345, 1u << 30};
    auto raw = encode_header(h);
    auto d = decode_header(raw);
    ASSERT_TRUE(d.valid);
    EXPECT_EQ(d.h.group, h.group);
    EXPECT_EQ(d.h.generation, 7u);
    EXPECT_EQ(d.h.high_water, 3u << 20);
    EXPECT_EQ(d.h.position, 12345u);
    EXPECT_EQ(d.h.data_size, 1u << 30);
}

TEST(ReplicaHeader, BlankWrongMagicOrVersionIsNotAHeader) {
    std::array<std::byte, kHeaderBytes> blank{};
    EXPECT_FALSE(decode_header(blank).valid);
    auto raw = encode_header({random_group(), 1, 0, 0, 0});
    auto bad = raw;
    bad[0] ^= std::byte{1};
    EXPECT_FALSE(decode_header(bad).valid);
    bad = raw;
    bad[kOffVersion] = std::byte{9};
    EXPECT_FALSE(decode_header(bad).valid);
    EXPECT_FALSE(decode_header(std::span(raw).first(10)).valid);
}

TEST(ReplicaHeader, GroupsAreRandomAndNeverZero) {
    auto a = random_group(), b = random_group();
    EXPECT_NE(a, b);
    EXPECT_FALSE(is_zero(a));
    EXPECT_TRUE(is_zero(GroupId{}));
}

TEST(ReplicaHeader, FieldsAreEightByteAlignedForAtomicUpdates) {
    for (auto off : {kOffGeneration, kOffHighWater, kOffPosition, kOffDataSize}) EXPECT_EQ(off % 8, 0u);
}

} // namespace
} // namespace rpm::replication
