// Every decoder against malformed bodies: every truncation, trailing bytes,
// unknown enum values, over-limit lengths and counts. A peer controls these
// bytes, so each must come back as errc::invalid_argument, never as a read
// past the end (the ASan build and tests/fuzz check the latter).
#include "samples.hpp"

#include <gtest/gtest.h>

#include <functional>

namespace {
using namespace proto_test;
using Decode = std::function<std::optional<rpm::Error>(std::span<const std::byte>)>;

template <auto F>
std::optional<rpm::Error> run(std::span<const std::byte> body) {
    auto r = F(body);
    if (r) return std::nullopt;
    return r.error();
}

std::optional<rpm::Error> run_persist(std::span<const std::byte> body) {
    auto r = decode_persist(body);
    if (r) return std::nullopt;
    return r.error();
}

std::optional<rpm::Error> run_flush(std::span<const std::byte> body) {
    auto r = decode_flush(body);
    if (r) return std::nullopt;
    return r.error();
}

// The same into a Flush that held another one's ranges (the rdma:// session's).
std::optional<rpm::Error> run_flush_into(std::span<const std::byte> body) {
    Flush reused{9, std::vector<Range>(5, Range{1, 2})};
    auto r = decode_flush(body, reused);
    if (r) return std::nullopt;
    return r.error();
}

// response_view answers nullopt wherever decode_response fails.
std::optional<rpm::Error> run_view(std::span<const std::byte> body) {
    if (response_view(body)) return std::nullopt;
    return rpm::Error(rpm::errc::invalid_argument, "response_view body: malformed");
}

struct Case {
    std::string name;
    std::vector<std::byte> frame;
    Decode decode;
    /// Write and Response end in "the rest of the payload": cutting into
    /// that part, or adding to it, changes the data rather than breaking
    /// the body. This is where their fixed part ends.
    std::optional<std::size_t> data_from;
};

std::vector<Case> cases() {
    auto data = bytes_of("0123456789");
    return {
        {"hello", frame_of(sample_hello()), run<decode_hello>, {}},
        {"auth", frame_of(sample_auth()), run<decode_auth>, {}},
        {"welcome", frame_of(sample_welcome()), run<decode_welcome>, {}},
        {"open_region", frame_of(sample_open_region()), run<decode_open_region>, {}},
        {"region", frame_of(sample_grant()), run<decode_region>, {}},
        {"write", frame_of(Write{1, 2, data}), run<decode_write>, 12},
        {"read", frame_of(Read{1, 2, 3}), run<decode_read>, {}},
        {"atomic_write", frame_of(AtomicWrite{1, 2, 3}), run<decode_atomic_write>, {}},
        {"flush", frame_of(sample_flush()), run_flush, {}},
        {"flush", frame_of(sample_flush()), run_flush_into, {}},
        {"response", frame_of(Response{5, "why", data}), run<decode_response>, 4 + 2 + 3},
        {"response_view", frame_of(Response{5, "why", data}), run_view, 4 + 2 + 3},
        // Every byte of a persist is accounted for by its slice lengths: any
        // cut or addition breaks it.
        {"persist", frame_of(sample_persist()), run_persist, {}},
    };
}

void expect_invalid(const Case& c, std::span<const std::byte> body, const std::string& what) {
    auto err = c.decode(body);
    ASSERT_TRUE(err) << c.name << ": " << what << " decoded";
    EXPECT_EQ(*err, rpm::errc::invalid_argument) << c.name << ": " << what;
    // The detail names the message, so a log line says what was malformed.
    EXPECT_EQ(err->detail().rfind(c.name + " body: ", 0), 0u) << err->detail();
}

TEST(ProtoDecode, TheSamplesDecode) {
    for (const auto& c : cases()) EXPECT_FALSE(c.decode(body_of(c.frame))) << c.name;
}

TEST(ProtoDecode, EveryTruncationFails) {
    for (const auto& c : cases()) {
        auto body = body_of(c.frame);
        std::size_t cut_until = c.data_from.value_or(body.size());
        for (std::size_t n = 0; n < cut_until; ++n)
            expect_invalid(c, body.first(n), "prefix of " + std::to_string(n) + " bytes");
        // Cutting data only shortens it.
        for (std::size_t n = cut_until; n < body.size(); ++n) EXPECT_FALSE(c.decode(body.first(n))) << c.name;
    }
}

TEST(ProtoDecode, TrailingBytesFail) {
    for (const auto& c : cases()) {
        for (std::size_t extra : {1u, 7u, 300u}) {
            std::vector<std::byte> body(body_of(c.frame).begin(), body_of(c.frame).end());
            body.resize(body.size() + extra, std::byte{0});
            if (c.data_from) {
                EXPECT_FALSE(c.decode(body)) << c.name << ": trailing bytes are data";
            } else {
                expect_invalid(c, body, std::to_string(extra) + " trailing bytes");
            }
        }
    }
}

/// The body of `frame` with one byte replaced.
std::vector<std::byte> patched(const std::vector<std::byte>& frame, std::size_t body_offset, int value) {
    std::vector<std::byte> body(body_of(frame).begin(), body_of(frame).end());
    body.at(body_offset) = static_cast<std::byte>(value);
    return body;
}

TEST(ProtoDecode, UnknownEnumAndBoolValuesFail) {
    // open_region "pool-a": name 2+6, force_method at 8, unsafe at 9.
    auto open = frame_of(sample_open_region());
    for (int v : {3, 0x7f, 0xfe}) EXPECT_FALSE(decode_open_region(patched(open, 8, v))) << v;
    EXPECT_TRUE(decode_open_region(patched(open, 8, 0xff)));
    EXPECT_FALSE(decode_open_region(patched(open, 9, 2)));
    // region: id 4 + size 8, then method 12, server_persist 13, domain 14, forced 15.
    auto grant = frame_of(sample_grant());
    for (int v : {3, 0xff}) EXPECT_FALSE(decode_region(patched(grant, 12, v))) << v;
    for (int v : {5, 0xff}) EXPECT_FALSE(decode_region(patched(grant, 13, v))) << v;
    for (int v : {5, 0xff}) EXPECT_FALSE(decode_region(patched(grant, 14, v))) << v;
    EXPECT_FALSE(decode_region(patched(grant, 15, 2)));
    auto err = decode_region(patched(grant, 14, 9));
    ASSERT_FALSE(err);
    EXPECT_EQ(err.error().detail(), "region body: domain: unknown value 9");
}

TEST(ProtoDecode, NamesLongerThanTheLimitFail) {
    Auth a = sample_auth();
    a.client_id.assign(kMaxName + 1, 'c');
    auto err = decode_auth(body_of(frame_of(a)));
    ASSERT_FALSE(err);
    EXPECT_EQ(err.error().detail(), "auth body: client_id: 256 bytes exceed the limit of 255");
    // The encoder sends an over-long name as it is so the peer refuses it,
    // even past what a u16 can count.
    EXPECT_FALSE(decode_open_region(body_of(frame_of(OpenRegion{std::string(kMaxName + 1, 'n'), {}, false}))));
    EXPECT_FALSE(decode_open_region(body_of(frame_of(OpenRegion{std::string(70000, 'n'), {}, false}))));
}

TEST(ProtoDecode, ResponseMessageOverTheLimitFails) {
    std::vector<std::byte> body(4 + 2 + kMaxMessage + 1, std::byte{'m'});
    body[4] = std::byte{(kMaxMessage + 1) & 0xff};
    body[5] = std::byte{(kMaxMessage + 1) >> 8};
    auto err = decode_response(body);
    ASSERT_FALSE(err);
    EXPECT_EQ(err.error().detail(), "response body: message: 1025 bytes exceed the limit of 1024");
    EXPECT_FALSE(response_view(body));
}

TEST(ProtoDecode, AResponsesViewHasItsStatusAndData) {
    const auto data = bytes_of("data");  // outlives the Responses that point into it
    for (const Response& r : {Response{0, "", {}}, Response{5, "why", data},
                              Response{0xfffffffe, std::string(kMaxMessage, 'm'), {}}}) {
        const auto frame = frame_of(r);
        const auto body = body_of(frame);
        const auto full = decode_response(body);
        ASSERT_TRUE(full);
        const auto view = response_view(body);
        ASSERT_TRUE(view) << r.message.size();
        EXPECT_EQ(view->status, full->status);
        EXPECT_EQ(view->status, r.status);
        EXPECT_EQ(view->data.data(), full->data.data());
        EXPECT_EQ(view->data.size(), r.data.size());
    }
}

TEST(ProtoDecode, LengthsBeyondTheBodyFail) {
    // Welcome's u32 profile length claims more than the frame holds.
    auto w = frame_of(sample_welcome());
    auto body = patched(w, kMacSize + 3, 0x7f);
    auto err = decode_welcome(body);
    ASSERT_FALSE(err);
    EXPECT_NE(err.error().detail().find("profile_json: truncated"), std::string::npos) << err.error().detail();
}

TEST(ProtoDecode, FlushCountOverTheLimitFails) {
    Flush f{1, std::vector<Range>(kMaxRanges + 1, Range{0, 1})};
    auto err = decode_flush(body_of(frame_of(f)));
    ASSERT_FALSE(err);
    EXPECT_EQ(err.error().detail(), "flush body: count 257 exceeds the limit of 256");
}

TEST(ProtoDecode, FlushCountMustMatchTheRanges) {
    auto f = frame_of(sample_flush());  // three ranges
    for (int count : {0, 2, 4, 255}) {
        auto err = decode_flush(patched(f, 4, count));
        ASSERT_FALSE(err) << count;
        EXPECT_NE(err.error().detail().find("bytes of ranges"), std::string::npos) << err.error().detail();
    }
    // A huge count is refused before anything is allocated for it.
    auto huge = decode_flush(patched(f, 7, 0xff));
    ASSERT_FALSE(huge);
    EXPECT_NE(huge.error().detail().find("exceeds the limit"), std::string::npos);
}

// Decoding into a kept Flush replaces what it held, whatever its size.
TEST(ProtoDecode, AFlushDecodedIntoAKeptOneReplacesItsRanges) {
    Flush kept{9, std::vector<Range>(5, Range{1, 2})};
    const Flush three = sample_flush();
    ASSERT_TRUE(decode_flush(body_of(frame_of(three)), kept));
    EXPECT_EQ(kept.region, three.region);
    ASSERT_EQ(kept.ranges.size(), three.ranges.size());
    for (std::size_t i = 0; i < three.ranges.size(); ++i) {
        EXPECT_EQ(kept.ranges[i].offset, three.ranges[i].offset);
        EXPECT_EQ(kept.ranges[i].length, three.ranges[i].length);
    }
    const Flush one{4, {Range{4096, 8}}};
    ASSERT_TRUE(decode_flush(body_of(frame_of(one)), kept));
    EXPECT_EQ(kept.region, 4u);
    ASSERT_EQ(kept.ranges.size(), 1u);
    EXPECT_EQ(kept.ranges[0].offset, 4096u);
    EXPECT_EQ(kept.ranges[0].length, 8u);
}

TEST(ProtoDecode, PersistCountMustBeWithinTheLimits) {
    auto f = frame_of(sample_persist());  // two slices
    auto none = decode_persist(patched(f, 4, 0));
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error().detail(), "persist body: count 0 is not within 1..256");
    // A huge count is refused before anything is allocated for it.
    auto huge = decode_persist(patched(f, 7, 0xff));
    ASSERT_FALSE(huge);
    EXPECT_NE(huge.error().detail().find("is not within"), std::string::npos) << huge.error().detail();
    Persist over{1, std::vector<Slice>(kMaxRanges + 1)};
    auto err = decode_persist(body_of(frame_of(over)));
    ASSERT_FALSE(err);
    EXPECT_EQ(err.error().detail(), "persist body: count 257 is not within 1..256");
}

TEST(ProtoDecode, PersistLengthsMustAddUpToTheData) {
    auto f = frame_of(sample_persist());  // lengths 12 and 8, 20 bytes of data
    // The first slice's length (at 16) says 13: the data is one byte short.
    auto more = decode_persist(patched(f, 16, 13));
    ASSERT_FALSE(more);
    EXPECT_NE(more.error().detail().find("exceed"), std::string::npos) << more.error().detail();
    auto less = decode_persist(patched(f, 16, 11));
    ASSERT_FALSE(less);
    EXPECT_NE(less.error().detail().find("add up to 19 bytes"), std::string::npos) << less.error().detail();
}

TEST(ProtoDecode, HelloWithAnEmptyVersionRangeFails) {
    Hello h = sample_hello();
    h.min_version = 3;
    h.max_version = 2;
    auto err = decode_hello(body_of(frame_of(h)));
    ASSERT_FALSE(err);
    EXPECT_EQ(err.error().detail(), "hello body: min_version 3 > max_version 2");
}

} // namespace
