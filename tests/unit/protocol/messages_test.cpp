// Every message type survives encode -> decode with every field intact,
// including empty and maximum-size strings and the maximum range count.
#include "samples.hpp"

#include <gtest/gtest.h>

namespace {
using namespace proto_test;
using rpm::flush::Method;

/// Decode the single frame in `f` with `decode`, after checking its header.
template <class D>
auto reparse(const std::vector<std::byte>& f, Type type, D decode) {
    auto h = parse_header(f, kDefaultMaxPayload);
    EXPECT_TRUE(h);
    if (h) {
        EXPECT_EQ(h->type, type);
        EXPECT_EQ(h->request_id, 77u);
        EXPECT_EQ(h->length, f.size() - kHeaderSize);
    }
    return decode(body_of(f));
}

std::string text(std::span<const std::byte> b) { return {reinterpret_cast<const char*>(b.data()), b.size()}; }

TEST(ProtoRoundTrip, Hello) {
    auto m = reparse(frame_of(sample_hello()), Type::hello, decode_hello);
    ASSERT_TRUE(m) << m.error().message();
    EXPECT_EQ(m->min_version, 1);
    EXPECT_EQ(m->max_version, 7);
    EXPECT_EQ(m->challenge, sample_hello().challenge);
}

TEST(ProtoRoundTrip, Auth) {
    for (std::string id : {std::string(), std::string("client-\xc3\xa9"), std::string(kMaxName, 'i')}) {
        Auth in = sample_auth();
        in.client_id = id;
        auto m = reparse(frame_of(in), Type::auth, decode_auth);
        ASSERT_TRUE(m) << m.error().message();
        EXPECT_EQ(m->version, 3);
        EXPECT_EQ(m->client_id, id);
        EXPECT_EQ(m->client_nonce, in.client_nonce);
        EXPECT_EQ(m->mac, in.mac);
    }
}

TEST(ProtoRoundTrip, Welcome) {
    for (std::string json : {std::string(), sample_welcome().profile_json, std::string(100000, 'j')}) {
        Welcome in = sample_welcome();
        in.profile_json = json;
        auto m = reparse(frame_of(in), Type::welcome, decode_welcome);
        ASSERT_TRUE(m) << m.error().message();
        EXPECT_EQ(m->server_proof, in.server_proof);
        EXPECT_EQ(m->profile_json, json);
    }
}

TEST(ProtoRoundTrip, OpenRegionEveryMethodAndNone) {
    std::optional<Method> methods[] = {std::nullopt, Method::read_after_write, Method::send_flush,
                                       Method::native_flush};
    for (auto method : methods) {
        for (bool unsafe : {false, true}) {
            for (std::string name : {std::string(), std::string("pool-a"), std::string(kMaxName, 'n')}) {
                auto m = reparse(frame_of(OpenRegion{name, method, unsafe}), Type::open_region,
                                 decode_open_region);
                ASSERT_TRUE(m) << m.error().message();
                EXPECT_EQ(m->name, name);
                EXPECT_EQ(m->force_method, method);
                EXPECT_EQ(m->unsafe, unsafe);
            }
        }
    }
}

TEST(ProtoRoundTrip, RegionGrant) {
    RegionGrant in = sample_grant();
    auto m = reparse(frame_of(in), Type::region, decode_region);
    ASSERT_TRUE(m) << m.error().message();
    EXPECT_EQ(m->id, in.id);
    EXPECT_EQ(m->size, in.size);
    EXPECT_EQ(m->method, in.method);
    EXPECT_EQ(m->server_persist, in.server_persist);
    EXPECT_EQ(m->domain, in.domain);
    EXPECT_EQ(m->forced, in.forced);
    EXPECT_EQ(m->reason, in.reason);
    EXPECT_EQ(m->rdma_mr, in.rdma_mr);
    EXPECT_EQ(m->rdma_peer_cfg, in.rdma_peer_cfg);
}

TEST(ProtoRoundTrip, RegionGrantEveryEnumValueAndEmptyFields) {
    using rpm::flush::ServerPersist;
    using D = rpm::PersistenceDomain;
    for (int method = 0; method < 3; ++method) {
        for (int persist = 0; persist < 5; ++persist) {
            for (int domain = 0; domain < 5; ++domain) {
                RegionGrant in;  // empty reason and descriptors
                in.method = static_cast<Method>(method);
                in.server_persist = static_cast<ServerPersist>(persist);
                in.domain = static_cast<D>(domain);
                auto m = reparse(frame_of(in), Type::region, decode_region);
                ASSERT_TRUE(m) << m.error().message();
                EXPECT_EQ(m->method, in.method);
                EXPECT_EQ(m->server_persist, in.server_persist);
                EXPECT_EQ(m->domain, in.domain);
                EXPECT_FALSE(m->forced);
                EXPECT_TRUE(m->reason.empty());
                EXPECT_TRUE(m->rdma_mr.empty() && m->rdma_peer_cfg.empty());
            }
        }
    }
}

TEST(ProtoRoundTrip, WriteWithAndWithoutData) {
    for (std::string data : {std::string(), std::string("payload"), std::string(1 << 20, 'd')}) {
        auto bytes = bytes_of(data);
        auto f = frame_of(Write{0xdeadbeef, 0x0102030405060708ull, bytes});
        auto m = reparse(f, Type::write, decode_write);
        ASSERT_TRUE(m) << m.error().message();
        EXPECT_EQ(m->region, 0xdeadbeefu);
        EXPECT_EQ(m->offset, 0x0102030405060708ull);
        EXPECT_EQ(text(m->data), data);
        // The data is a view into the frame, not a copy.
        if (!data.empty()) {
            EXPECT_EQ(m->data.data(), f.data() + kHeaderSize + 12);
        }
    }
}

TEST(ProtoRoundTrip, Read) {
    auto m = reparse(frame_of(Read{3, ~0ull, 0xfffffff0}), Type::read, decode_read);
    ASSERT_TRUE(m) << m.error().message();
    EXPECT_EQ(m->region, 3u);
    EXPECT_EQ(m->offset, ~0ull);
    EXPECT_EQ(m->length, 0xfffffff0u);
}

TEST(ProtoRoundTrip, AtomicWrite) {
    auto m = reparse(frame_of(AtomicWrite{4, 64, 0x8877665544332211ull}), Type::atomic_write,
                     decode_atomic_write);
    ASSERT_TRUE(m) << m.error().message();
    EXPECT_EQ(m->region, 4u);
    EXPECT_EQ(m->offset, 64u);
    EXPECT_EQ(m->value, 0x8877665544332211ull);
}

void expect_flush(const Flush& in) {
    auto m = reparse(frame_of(in), Type::flush, [](std::span<const std::byte> b) { return decode_flush(b); });
    ASSERT_TRUE(m) << m.error().message();
    EXPECT_EQ(m->region, in.region);
    ASSERT_EQ(m->ranges.size(), in.ranges.size());
    for (std::size_t i = 0; i < in.ranges.size(); ++i) {
        EXPECT_EQ(m->ranges[i].offset, in.ranges[i].offset) << i;
        EXPECT_EQ(m->ranges[i].length, in.ranges[i].length) << i;
    }
}

TEST(ProtoRoundTrip, FlushNoneSomeAndMaxRanges) {
    expect_flush(Flush{1, {}});
    expect_flush(sample_flush());
    Flush max{2, {}};
    for (std::uint64_t i = 0; i < kMaxRanges; ++i) max.ranges.push_back({i * 4096, i + 1});
    expect_flush(max);
}

TEST(ProtoRoundTrip, PersistOneSomeAndMaxSlices) {
    const auto data = bytes_of("0123456789abcdef");
    for (std::size_t n : {std::size_t{1}, std::size_t{2}, kMaxRanges}) {
        Persist in{7, {}};
        for (std::size_t i = 0; i < n; ++i)
            in.slices.push_back({i * 4096 + 3, std::span(data).first(i % data.size())});  // an empty slice too
        auto f = frame_of(in);
        auto m = reparse(f, Type::persist, [](std::span<const std::byte> b) { return decode_persist(b); });
        ASSERT_TRUE(m) << m.error().message();
        EXPECT_EQ(m->region, 7u);
        ASSERT_EQ(m->slices.size(), n);
        for (std::size_t i = 0; i < n; ++i) {
            EXPECT_EQ(m->slices[i].offset, in.slices[i].offset);
            EXPECT_EQ(text(m->slices[i].data), text(in.slices[i].data));
        }
    }
}

// What the client sends: the head from the arena, then each slice's data
// from the caller's buffer. On the wire it is the same frame as encode().
TEST(ProtoRoundTrip, PersistHeadPlusTheDataIsTheWholeFrame) {
    const auto p = sample_persist();
    std::vector<std::byte> head;
    encode_persist_head(head, 77, p.region, p.slices);
    EXPECT_EQ(head.size(), kHeaderSize + persist_meta_size(p.slices.size()));
    for (const auto& s : p.slices) head.insert(head.end(), s.data.begin(), s.data.end());
    EXPECT_EQ(head, frame_of(p));
    std::vector<std::byte> w;
    const auto data = bytes_of("payload");
    encode_write_head(w, 77, 3, 99, data.size());
    w.insert(w.end(), data.begin(), data.end());
    EXPECT_EQ(w, frame_of(Write{3, 99, data}));
}

TEST(ProtoRoundTrip, ResponseHeadPlusDataIsAResponse) {
    const auto data = bytes_of("read answer");
    std::vector<std::byte> f;
    encode_response_head(f, 77, data.size());
    EXPECT_EQ(f.size(), kResponseHeadSize);
    f.insert(f.end(), data.begin(), data.end());
    auto m = reparse(f, Type::response, decode_response);
    ASSERT_TRUE(m) << m.error().message();
    EXPECT_EQ(m->status, 0u);
    EXPECT_EQ(m->message, "");
    EXPECT_EQ(text(m->data), "read answer");
}

TEST(ProtoRoundTrip, PersistBytesAreAsDocumented) {
    const auto data = bytes_of("ab");
    auto f = frame_of(Persist{0x01020304, {{0x10, data}}});
    std::vector<std::uint8_t> body;
    for (auto b : body_of(f)) body.push_back(std::to_integer<std::uint8_t>(b));
    std::vector<std::uint8_t> want = {4, 3, 2, 1, 1, 0, 0, 0, 0x10, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 'a', 'b'};
    EXPECT_EQ(body, want);
}

TEST(ProtoRoundTrip, Response) {
    auto data = bytes_of("read data");
    std::string longest(kMaxMessage, 'm');
    for (std::string msg : {std::string(), std::string("no such region"), longest}) {
        auto f = frame_of(Response{0x0e, msg, data});  // outlives m, whose data points into it
        auto m = reparse(f, Type::response, decode_response);
        ASSERT_TRUE(m) << m.error().message();
        EXPECT_EQ(m->status, 0x0eu);
        EXPECT_EQ(m->message, msg);
        EXPECT_EQ(text(m->data), "read data");
    }
    auto empty = reparse(frame_of(Response{}), Type::response, decode_response);
    ASSERT_TRUE(empty);
    EXPECT_EQ(empty->status, 0u);
    EXPECT_TRUE(empty->message.empty() && empty->data.empty());
}

TEST(ProtoRoundTrip, ResponseMessageIsCutAtTheLimit) {
    auto m = reparse(frame_of(Response{1, std::string(kMaxMessage + 500, 'x'), {}}), Type::response,
                     decode_response);
    ASSERT_TRUE(m) << m.error().message();
    EXPECT_EQ(m->message, std::string(kMaxMessage, 'x'));
}

TEST(ProtoRoundTrip, MessageAndGoodbye) {
    std::vector<std::byte> f;
    encode_message(f, 77, bytes_of("app payload"));
    auto h = parse_header(f, kDefaultMaxPayload);
    ASSERT_TRUE(h);
    EXPECT_EQ(h->type, Type::message);
    EXPECT_EQ(text(body_of(f)), "app payload");
    std::vector<std::byte> g;
    encode_goodbye(g, 78);
    ASSERT_EQ(g.size(), kHeaderSize);
    auto gh = parse_header(g, kDefaultMaxPayload);
    ASSERT_TRUE(gh);
    EXPECT_EQ(gh->type, Type::goodbye);
    EXPECT_EQ(gh->request_id, 78u);
    EXPECT_EQ(gh->length, 0u);
}

// Fixed byte layouts pinned down, so a change of the encoding shows up here
// and in docs/protocol.md together.
TEST(ProtoRoundTrip, OpenRegionBytesAreAsDocumented) {
    auto f = frame_of(OpenRegion{"ab", Method::send_flush, true, 0x0102030405060708ull});
    std::vector<std::uint8_t> body;
    for (auto b : body_of(f)) body.push_back(std::to_integer<std::uint8_t>(b));
    EXPECT_EQ(body, (std::vector<std::uint8_t>{2, 0, 'a', 'b', 1, 1, 8, 7, 6, 5, 4, 3, 2, 1}));
    auto back = decode_open_region(body_of(f));
    ASSERT_TRUE(back);
    EXPECT_EQ(back->fencing_term, 0x0102030405060708ull);
    auto none = frame_of(OpenRegion{"", std::nullopt, false});
    EXPECT_EQ(none.size(), kHeaderSize + 12);
    EXPECT_EQ(none[kHeaderSize + 2], std::byte{0xff});
}

TEST(ProtoRoundTrip, FlushBytesAreAsDocumented) {
    auto f = frame_of(Flush{0x01020304, {{0x10, 0x20}}});
    std::vector<std::uint8_t> body;
    for (auto b : body_of(f)) body.push_back(std::to_integer<std::uint8_t>(b));
    std::vector<std::uint8_t> want = {4, 3, 2, 1, 1, 0, 0, 0};
    for (std::uint8_t v : {std::uint8_t{0x10}, std::uint8_t{0x20}}) {
        want.push_back(v);
        want.insert(want.end(), 7, 0);
    }
    EXPECT_EQ(body, want);
}

TEST(ProtoRoundTrip, GoodbyeCarriesAReasonOrNothing) {
    std::vector<std::byte> f;
    encode_goodbye(f, 0);
    auto empty = decode_goodbye(body_of(f));
    ASSERT_TRUE(empty);
    EXPECT_EQ(empty->status, 0u);
    f.clear();
    encode(f, 0, Goodbye{20, "taken over by term 3"});
    std::vector<std::uint8_t> body;
    for (auto b : body_of(f)) body.push_back(std::to_integer<std::uint8_t>(b));
    std::vector<std::uint8_t> want = {20, 0, 0, 0, 20, 0};
    for (char c : std::string_view("taken over by term 3")) want.push_back(static_cast<std::uint8_t>(c));
    EXPECT_EQ(body, want);
    auto back = decode_goodbye(body_of(f));
    ASSERT_TRUE(back);
    EXPECT_EQ(back->status, 20u);
    EXPECT_EQ(back->message, "taken over by term 3");
    EXPECT_FALSE(decode_goodbye(body_of(f).first(3)));       // cut inside the status
    EXPECT_FALSE(decode_goodbye(body_of(f).first(7)));       // the message cut short
}

} // namespace
