// FrameReader: a TCP stream arrives in arbitrary pieces; the frames that
// come out must not depend on where it was cut.
#include "samples.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace {
using namespace proto_test;

struct Got {
    Header header;
    std::vector<std::byte> body;
};

/// Three frames of different types and sizes, back to back.
std::vector<std::byte> stream() {
    std::vector<std::byte> out;
    encode(out, 1, sample_hello());
    auto data = bytes_of("twelve bytes");
    encode(out, 2, Write{7, 4096, data});
    encode_goodbye(out, 3);
    encode_message(out, 4, bytes_of("x"));
    return out;
}

void drain(FrameReader& r, std::vector<Got>& got) {
    while (auto f = r.next()) got.push_back({f->first, {f->second.begin(), f->second.end()}});
}

void expect_stream(const std::vector<Got>& got) {
    ASSERT_EQ(got.size(), 4u);
    EXPECT_EQ(got[0].header.type, Type::hello);
    EXPECT_EQ(got[1].header.type, Type::write);
    EXPECT_EQ(got[2].header.type, Type::goodbye);
    EXPECT_EQ(got[3].header.type, Type::message);
    for (std::uint32_t i = 0; i < 4; ++i) EXPECT_EQ(got[i].header.request_id, i + 1);
    auto w = decode_write(got[1].body);
    ASSERT_TRUE(w);
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(w->data.data()), w->data.size()), "twelve bytes");
    EXPECT_TRUE(got[2].body.empty());
    EXPECT_EQ(got[3].body, bytes_of("x"));
}

TEST(ProtoFrameReader, SeveralFramesInOneFeed) {
    FrameReader r;
    std::vector<Got> got;
    r.feed(stream());
    drain(r, got);
    expect_stream(got);
    EXPECT_EQ(r.buffered(), 0u);
    EXPECT_FALSE(r.error());
}

TEST(ProtoFrameReader, SplitAtEveryByteBoundary) {
    auto s = stream();
    for (std::size_t cut = 0; cut <= s.size(); ++cut) {
        SCOPED_TRACE("cut at " + std::to_string(cut));
        FrameReader r;
        std::vector<Got> got;
        r.feed(std::span(s).first(cut));
        drain(r, got);
        r.feed(std::span(s).subspan(cut));
        drain(r, got);
        expect_stream(got);
        EXPECT_EQ(r.buffered(), 0u);
    }
}

TEST(ProtoFrameReader, OneByteAtATime) {
    auto s = stream();
    FrameReader r;
    std::vector<Got> got;
    for (std::size_t i = 0; i < s.size(); ++i) {
        r.feed(std::span(s).subspan(i, 1));
        drain(r, got);
        // Between frames the buffer holds only the current partial frame.
        EXPECT_LT(r.buffered(), kHeaderSize + 64);
    }
    expect_stream(got);
}

TEST(ProtoFrameReader, ManyFramesKeepTheBufferSmall) {
    FrameReader r;
    std::vector<Got> got;
    auto s = stream();
    for (int round = 0; round < 1000; ++round) {
        r.feed(std::span(s).first(s.size() - 3));  // always leave a partial frame
        drain(r, got);
        EXPECT_EQ(r.buffered(), kHeaderSize + 1 - 3);  // the last frame (message "x"), but 3 bytes
        r.feed(std::span(s).last(3));
        drain(r, got);
        EXPECT_EQ(r.buffered(), 0u);
        // Small frames never take a buffer beyond the primary one.
        EXPECT_EQ(r.held(), 0u) << "round " << round;
    }
    EXPECT_EQ(got.size(), 4000u);
}

TEST(ProtoFrameReader, UnalignedFeedsKeepTheBufferBounded) {
    // Feeds that never end on a frame boundary: without compaction the
    // buffer would keep every byte of the connection.
    FrameReader r;
    std::vector<Got> got;
    std::vector<std::byte> s;
    for (int i = 0; i < 500; ++i) {
        auto one = stream();
        s.insert(s.end(), one.begin(), one.end());
    }
    std::size_t largest = 0;
    for (std::size_t at = 0; at < s.size(); at += 7) {
        r.feed(std::span(s).subspan(at, std::min<std::size_t>(7, s.size() - at)));
        drain(r, got);
        largest = std::max(largest, r.held());
    }
    EXPECT_EQ(got.size(), 2000u);
    EXPECT_EQ(largest, 0u);  // compacted within the primary buffer, never grown
}

// A frame larger than the primary buffer: once its header is in, the rest
// is received straight into one buffer of exactly the frame's size.
TEST(ProtoFrameReader, LargeFrameReceivedInPlaceIntoAnExactBuffer) {
    FrameReader r(2u << 20);
    std::vector<std::byte> payload(1u << 20);
    for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<std::byte>(i * 7);
    std::vector<std::byte> f;
    encode_message(f, 5, payload);
    auto first = r.space();
    ASSERT_LE(first.size(), FrameReader::kPrimarySize);  // nothing known yet: the primary buffer
    std::copy_n(f.begin(), 100, first.begin());
    r.commit(100);
    EXPECT_FALSE(r.next());
    auto rest = r.space();
    ASSERT_GE(rest.size(), f.size() - 100);
    EXPECT_EQ(r.held(), f.size());  // one allocation, the frame's size
    std::copy(f.begin() + 100, f.end(), rest.begin());
    r.commit(f.size() - 100);
    auto got = r.next();
    ASSERT_TRUE(got);
    EXPECT_EQ(got->first.request_id, 5u);
    EXPECT_TRUE(std::equal(got->second.begin(), got->second.end(), payload.begin(), payload.end()));
    // Drained: small frames go back to the primary buffer; the large one
    // stays for the next large frame until given back.
    std::vector<std::byte> small;
    encode_message(small, 6, bytes_of("x"));
    r.feed(small);
    auto next = r.next();
    ASSERT_TRUE(next);
    EXPECT_EQ(next->first.request_id, 6u);
    EXPECT_EQ(r.held(), f.size());
    r.release_large();
    EXPECT_EQ(r.held(), 0u);
}

TEST(ProtoFrameReader, ReceivesIntoTheGivenPrimaryBuffer) {
    std::vector<std::byte> primary(4096);
    FrameReader r(kDefaultMaxPayload, primary);
    auto room = r.space();
    EXPECT_EQ(room.data(), primary.data());
    EXPECT_EQ(room.size(), primary.size());
    std::vector<std::byte> f;
    encode(f, 1, sample_hello());
    std::copy(f.begin(), f.end(), room.begin());
    r.commit(f.size());
    auto got = r.next();
    ASSERT_TRUE(got);
    EXPECT_EQ(got->first.type, Type::hello);
    // The payload is parsed where it landed: in the caller's buffer.
    EXPECT_EQ(got->second.data(), primary.data() + kHeaderSize);
}

TEST(ProtoFrameReader, BadHeaderPoisonsForGood) {
    FrameReader r;
    std::vector<Got> got;
    auto s = stream();
    s[kHeaderSize + 36] = std::byte{0};  // the 2nd frame's magic (hello's body is 36 bytes)
    r.feed(s);
    drain(r, got);
    ASSERT_EQ(got.size(), 1u);
    ASSERT_TRUE(r.error());
    EXPECT_EQ(*r.error(), rpm::errc::invalid_argument);
    // Nothing comes out any more, not even a good frame fed afterwards.
    std::size_t before = r.buffered();
    r.feed(stream());
    drain(r, got);
    EXPECT_EQ(got.size(), 1u);
    EXPECT_EQ(r.buffered(), before);
}

TEST(ProtoFrameReader, OversizedFrameRefusedOnItsHeader) {
    FrameReader r(64);
    std::vector<Got> got;
    std::vector<std::byte> big;
    encode_message(big, 9, std::vector<std::byte>(65));
    r.feed(std::span(big).first(kHeaderSize));  // payload not sent yet
    drain(r, got);
    EXPECT_TRUE(got.empty());
    ASSERT_TRUE(r.error());
    EXPECT_EQ(*r.error(), rpm::errc::bad_size);
    EXPECT_EQ(r.error()->detail(), "frame of 65 bytes exceeds the limit of 64");
}

TEST(ProtoFrameReader, FrameOfExactlyMaxPayloadPasses) {
    FrameReader r(64);
    std::vector<Got> got;
    std::vector<std::byte> f;
    encode_message(f, 9, std::vector<std::byte>(64, std::byte{7}));
    r.feed(f);
    drain(r, got);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].body.size(), 64u);
    EXPECT_FALSE(r.error());
}

} // namespace
