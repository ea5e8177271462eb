// The 16-byte frame header: layout at fixed offsets, and every way
// parse_header refuses one.
#include "samples.hpp"

#include <gtest/gtest.h>

namespace {
using namespace proto_test;

std::array<std::byte, kHeaderSize> header_bytes(const Header& h) {
    std::array<std::byte, kHeaderSize> b{};
    write_header(b, h);
    return b;
}

TEST(ProtoHeader, LayoutIsLittleEndianAtDocumentedOffsets) {
    auto b = header_bytes({Type::flush, 0xa5, 0x11223344, 0x00050607});
    const std::uint8_t expected[kHeaderSize] = {
        'R', 'P', 'M', '1',      // magic
        9,                       // type (flush)
        0xa5,                    // flags
        0, 0,                    // reserved
        0x44, 0x33, 0x22, 0x11,  // request_id
        0x07, 0x06, 0x05, 0x00,  // length
    };
    for (std::size_t i = 0; i < kHeaderSize; ++i)
        EXPECT_EQ(std::to_integer<std::uint8_t>(b[i]), expected[i]) << "offset " << i;
}

TEST(ProtoHeader, RoundTripsEveryType) {
    for (int t = 1; t <= 13; ++t) {
        Header in{static_cast<Type>(t), 3, 0xfffffffe, 1234};
        auto out = parse_header(header_bytes(in), kDefaultMaxPayload);
        ASSERT_TRUE(out) << out.error().message();
        EXPECT_EQ(out->type, in.type);
        EXPECT_EQ(out->flags, in.flags);
        EXPECT_EQ(out->request_id, in.request_id);
        EXPECT_EQ(out->length, in.length);
        EXPECT_NE(type_name(in.type), "invalid");
    }
    const char* names[] = {"hello", "auth",         "welcome", "open_region", "region",   "write",   "read",
                           "atomic_write", "flush", "message", "response",    "goodbye", "persist"};
    for (int t = 1; t <= 13; ++t) EXPECT_EQ(type_name(static_cast<Type>(t)), names[t - 1]) << t;
    EXPECT_EQ(type_name(static_cast<Type>(0)), "invalid");
    EXPECT_EQ(type_name(static_cast<Type>(14)), "invalid");
}

TEST(ProtoHeader, BadMagicIsInvalidArgument) {
    auto b = header_bytes({Type::hello, 0, 1, 0});
    b[3] = std::byte{'2'};
    auto h = parse_header(b, kDefaultMaxPayload);
    ASSERT_FALSE(h);
    EXPECT_EQ(h.error(), rpm::errc::invalid_argument);
    EXPECT_NE(h.error().detail().find("magic"), std::string::npos) << h.error().detail();
}

TEST(ProtoHeader, UnknownTypesAreInvalidArgument) {
    for (int t : {0, 14, 200, 255}) {
        auto b = header_bytes({Type::hello, 0, 1, 0});
        b[4] = static_cast<std::byte>(t);
        auto h = parse_header(b, kDefaultMaxPayload);
        ASSERT_FALSE(h) << t;
        EXPECT_EQ(h.error(), rpm::errc::invalid_argument);
        EXPECT_NE(h.error().detail().find("type " + std::to_string(t)), std::string::npos);
    }
}

TEST(ProtoHeader, NonZeroReservedIsInvalidArgument) {
    for (std::size_t at : {6u, 7u}) {
        auto b = header_bytes({Type::hello, 0, 1, 0});
        b[at] = std::byte{1};
        auto h = parse_header(b, kDefaultMaxPayload);
        ASSERT_FALSE(h) << at;
        EXPECT_EQ(h.error(), rpm::errc::invalid_argument);
        EXPECT_NE(h.error().detail().find("reserved"), std::string::npos);
    }
}

TEST(ProtoHeader, OversizedFrameIsBadSize) {
    auto ok = parse_header(header_bytes({Type::write, 0, 1, 4096}), 4096);
    ASSERT_TRUE(ok);
    auto h = parse_header(header_bytes({Type::write, 0, 1, 4097}), 4096);
    ASSERT_FALSE(h);
    EXPECT_EQ(h.error(), rpm::errc::bad_size);
    EXPECT_EQ(h.error().detail(), "frame of 4097 bytes exceeds the limit of 4096");
    auto max = parse_header(header_bytes({Type::write, 0, 1, 0xffffffff}), kDefaultMaxPayload);
    ASSERT_FALSE(max);
    EXPECT_EQ(max.error(), rpm::errc::bad_size);
}

TEST(ProtoHeader, ShortInputIsInvalidArgument) {
    auto b = header_bytes({Type::hello, 0, 1, 0});
    for (std::size_t n = 0; n < kHeaderSize; ++n) {
        auto h = parse_header(std::span(b).first(n), kDefaultMaxPayload);
        ASSERT_FALSE(h) << n;
        EXPECT_EQ(h.error(), rpm::errc::invalid_argument);
    }
}

TEST(ProtoHeader, EncodersWriteTheBodyLength) {
    std::vector<std::byte> out{std::byte{0xee}};  // encoders append, never overwrite
    encode(out, 5, sample_grant());
    auto h = parse_header(std::span(out).subspan(1), kDefaultMaxPayload);
    ASSERT_TRUE(h);
    EXPECT_EQ(out[0], std::byte{0xee});
    EXPECT_EQ(h->type, Type::region);
    EXPECT_EQ(h->request_id, 5u);
    EXPECT_EQ(h->flags, 0);
    EXPECT_EQ(h->length, out.size() - 1 - kHeaderSize);
}

} // namespace
