// Bad input over tcp://: each case gets a clear error, the region stays
// untouched, and the server goes on serving a well-behaved client.
#include "raw_peer.hpp"
#include "common/server_fixture.hpp"

#include "tests/support/result.hpp"

#include <cstring>
#include <future>

namespace {
using namespace rpm;
using rpm::test::bytes_of;
using rpm::test::ok;
using rpm::test::RawPeer;
using rpm::test::TcpServerTest;

class TcpBadInput : public TcpServerTest {
protected:
    // A sentinel a good client wrote; every test checks it is still there.
    void SetUp() override {
        TcpServerTest::SetUp();
        auto c = connect();
        ASSERT_TRUE(c);
        auto r = c->open_region("kv");
        ASSERT_TRUE(r);
        ASSERT_TRUE(ok(r->persist(0, bytes_of(kSentinel))));
    }
    void expect_untouched_and_serving() {
        auto c = connect();
        ASSERT_TRUE(c) << "the server stopped serving: " << c.error().message();
        auto r = c->open_region("kv");
        ASSERT_TRUE(r);
        std::string back(kSentinel.size(), '\0');
        ASSERT_TRUE(ok(r->read(0, std::as_writable_bytes(std::span(back.data(), back.size())))));
        EXPECT_EQ(back, kSentinel);
        std::vector<std::byte> rest(4096);
        ASSERT_TRUE(ok(r->read((1 << 20) - 4096, rest)));
        EXPECT_EQ(rest, std::vector<std::byte>(4096)) << "bytes near the end were written";
    }
    // Logged-in raw peer with region "kv" granted as id 0.
    std::unique_ptr<RawPeer> logged_in() {
        auto p = std::make_unique<RawPeer>(server->port(Scheme::tcp));
        auto w = p->login("app", "app-secret");
        EXPECT_TRUE(w && w->first.type == proto::Type::welcome);
        auto g = p->request(2, proto::OpenRegion{"kv", std::nullopt, false});
        EXPECT_TRUE(g && g->first.type == proto::Type::region);
        return p;
    }
    static proto::Response status_of(const std::optional<std::pair<proto::Header, std::vector<std::byte>>>& f) {
        EXPECT_TRUE(f.has_value());
        if (!f) return {};
        EXPECT_EQ(f->first.type, proto::Type::response);
        auto r = proto::decode_response(f->second);
        EXPECT_TRUE(r);
        if (!r) return {};
        proto::Response copy = *r;
        copy.data = {};
        return copy;
    }
    static constexpr std::string_view kSentinel = "sentinel: must never change";
};

TEST_F(TcpBadInput, WriteOutsideTheGrantedRegion) {
    auto p = logged_in();
    std::string data(64, 'X');
    auto resp = status_of(p->request(3, proto::Write{0, (1u << 20) - 32, bytes_of(data)}));
    EXPECT_EQ(resp.status, static_cast<std::uint32_t>(errc::out_of_range));
    EXPECT_NE(resp.message.find("outside region 'kv'"), std::string::npos) << resp.message;
    auto wrap = status_of(p->request(4, proto::Write{0, ~0ull - 8, bytes_of(data)}));
    EXPECT_EQ(wrap.status, static_cast<std::uint32_t>(errc::out_of_range));
    expect_untouched_and_serving();
}

TEST_F(TcpBadInput, UnknownRegionIdAndUngrantedRegion) {
    auto p = logged_in();
    std::string data(8, 'X');
    auto resp = status_of(p->request(3, proto::Write{7, 0, bytes_of(data)}));
    EXPECT_EQ(resp.status, static_cast<std::uint32_t>(errc::invalid_argument));
    EXPECT_NE(resp.message.find("not granted"), std::string::npos) << resp.message;
    auto other = std::make_unique<RawPeer>(server->port(Scheme::tcp));
    ASSERT_TRUE(other->login("other", "other-secret"));
    auto g = status_of(other->request(2, proto::OpenRegion{"kv", std::nullopt, false}));
    EXPECT_EQ(g.status, static_cast<std::uint32_t>(errc::invalid_argument));
    expect_untouched_and_serving();
}

TEST_F(TcpBadInput, MisalignedAtomicWrite) {
    auto p = logged_in();
    auto resp = status_of(p->request(3, proto::AtomicWrite{0, 4, 42}));
    EXPECT_EQ(resp.status, static_cast<std::uint32_t>(errc::misaligned));
    EXPECT_NE(resp.message.find("8-byte aligned"), std::string::npos) << resp.message;
    expect_untouched_and_serving();
}

TEST_F(TcpBadInput, TruncatedBodyIsAnErrorAndTheSessionGoesOn) {
    auto p = logged_in();
    std::vector<std::byte> frame;
    proto::encode(frame, 3, proto::AtomicWrite{0, 8, 42});
    // Cut the body short but keep the header's length honest about it.
    frame.resize(frame.size() - 4);
    const std::uint32_t len = static_cast<std::uint32_t>(frame.size() - proto::kHeaderSize);
    std::memcpy(frame.data() + 12, &len, 4);
    ASSERT_TRUE(p->send_bytes(frame));
    auto resp = status_of(p->next());
    EXPECT_EQ(resp.status, static_cast<std::uint32_t>(errc::invalid_argument));
    // Same connection still works.
    auto ok = status_of(p->request(4, proto::AtomicWrite{0, 4096, 42}));
    EXPECT_EQ(ok.status, 0u);
    expect_untouched_and_serving();
}

TEST_F(TcpBadInput, OversizedFrameClosesTheConnection) {
    auto p = logged_in();
    std::vector<std::byte> header(proto::kHeaderSize);
    proto::write_header(std::span<std::byte, proto::kHeaderSize>(header.data(), proto::kHeaderSize),
                        proto::Header{proto::Type::write, 0, 3, 64u << 20});
    ASSERT_TRUE(p->send_bytes(header));
    auto resp = status_of(p->next());
    EXPECT_EQ(resp.status, static_cast<std::uint32_t>(errc::bad_size));
    EXPECT_FALSE(p->next()) << "the connection should be closed";
    expect_untouched_and_serving();
}

TEST_F(TcpBadInput, GarbageHeaderClosesTheConnection) {
    auto p = logged_in();
    std::vector<std::byte> junk(proto::kHeaderSize, std::byte{0x41});
    ASSERT_TRUE(p->send_bytes(junk));
    auto resp = status_of(p->next());
    EXPECT_EQ(resp.status, static_cast<std::uint32_t>(errc::invalid_argument));
    EXPECT_FALSE(p->next());
    expect_untouched_and_serving();
}

TEST_F(TcpBadInput, WrongSecretAndVersionMismatch) {
    RawPeer wrong(server->port(Scheme::tcp));
    auto w = wrong.login("app", "not-the-secret");
    ASSERT_TRUE(w);
    EXPECT_EQ(status_of(w).status, static_cast<std::uint32_t>(errc::auth_failed));
    EXPECT_FALSE(wrong.next()) << "a refused login must close the connection";
    // Version 1 (before persist) and one from the future: told so, clearly.
    for (std::uint16_t version : {std::uint16_t{99}, std::uint16_t{1}}) {
        RawPeer old(server->port(Scheme::tcp));
        auto v = old.login("app", "app-secret", version);
        ASSERT_TRUE(v);
        auto resp = status_of(v);
        EXPECT_EQ(resp.status, static_cast<std::uint32_t>(errc::unsupported));
        EXPECT_NE(resp.message.find("version " + std::to_string(version)), std::string::npos) << resp.message;
        EXPECT_FALSE(old.next()) << "a refused login must close the connection";
    }
    expect_untouched_and_serving();
}

// One slice out of range: nothing of the persist is stored, not even the
// slices that were in range, and the session goes on.
TEST_F(TcpBadInput, PersistWithOneBadSliceStoresNothing) {
    auto p = logged_in();
    std::string good(16, 'G'), bad(16, 'B');
    proto::Persist req{0, {{64, bytes_of(good)}, {(1 << 20) - 8, bytes_of(bad)}}};
    auto resp = status_of(p->request(3, req));
    EXPECT_EQ(resp.status, static_cast<std::uint32_t>(errc::out_of_range));
    proto::Persist fine{0, {{128, bytes_of(good)}}};
    EXPECT_EQ(status_of(p->request(4, fine)).status, 0u) << "the session must go on";
    auto c = connect();
    ASSERT_TRUE(c);
    auto r = c->open_region("kv");
    ASSERT_TRUE(r);
    std::string back(16, '\0');
    ASSERT_TRUE(ok(r->read(64, std::as_writable_bytes(std::span(back.data(), back.size())))));
    EXPECT_EQ(back, std::string(16, '\0')) << "the in-range slice of a refused persist was stored";
    ASSERT_TRUE(ok(r->read(128, std::as_writable_bytes(std::span(back.data(), back.size())))));
    EXPECT_EQ(back, good);
    expect_untouched_and_serving();
}

// A persist larger than one frame goes as writes and one flush (it used to
// be refused with bad_size); the server never sees an oversized frame, and
// the connection goes on.
TEST_F(TcpBadInput, PersistLargerThanAFrameIsSentInParts) {
    auto c = connect();
    ASSERT_TRUE(c);
    auto r = c->open_region("kv");
    ASSERT_TRUE(r);
    // Each slice is inside the 1 MiB region; together they exceed a frame.
    const std::vector<std::byte> first(600 * 1024, std::byte{'F'}), second(600 * 1024, std::byte{'S'});
    const WriteSlice slices[] = {{0, first}, {400 * 1024, second}};
    ASSERT_TRUE(ok(r->persist(slices)));
    std::string back(4, '\0');
    ASSERT_TRUE(ok(r->read(400 * 1024 - 2, std::as_writable_bytes(std::span(back.data(), back.size())))));
    EXPECT_EQ(back, "FFSS") << "the later slice wins where they overlap";
    std::promise<Result<void>> p;
    r->persist(slices, [&p](Result<void> res) { p.set_value(std::move(res)); });
    EXPECT_TRUE(ok(p.get_future().get()));
    const std::string still = "still serving";
    ASSERT_TRUE(ok(r->persist(4096, bytes_of(still))));
}

TEST_F(TcpBadInput, MalformedPersistIsAnErrorAndTheSessionGoesOn) {
    auto p = logged_in();
    std::string data(16, 'M');
    std::vector<std::byte> frame;
    proto::encode(frame, 3, proto::Persist{0, {{64, bytes_of(data)}}});
    frame[proto::kHeaderSize + 16] = std::byte{17};  // the slice claims one byte more than the frame has
    ASSERT_TRUE(p->send_bytes(frame));
    auto resp = status_of(p->next());
    EXPECT_EQ(resp.status, static_cast<std::uint32_t>(errc::invalid_argument));
    EXPECT_NE(resp.message.find("persist body"), std::string::npos) << resp.message;
    EXPECT_EQ(status_of(p->request(4, proto::Read{0, 0, 8})).status, 0u);
    expect_untouched_and_serving();
}

TEST_F(TcpBadInput, RequestsBeforeAuthenticationAreRefused) {
    RawPeer p(server->port(Scheme::tcp));
    ASSERT_TRUE(p.next());  // hello
    std::string data(8, 'X');
    auto resp = status_of(p.request(1, proto::Write{0, 0, bytes_of(data)}));
    EXPECT_EQ(resp.status, static_cast<std::uint32_t>(errc::permission_denied));
    EXPECT_FALSE(p.next());
    expect_untouched_and_serving();
}

// An unauthenticated peer declaring a large frame (and sending most of it)
// is refused at the header: the server never buffers its body. Without the
// handshake limit the server waits for the rest and this peer's next()
// times out with no answer.
TEST_F(TcpBadInput, LargeFrameBeforeAuthenticationIsRefusedAtItsHeader) {
    RawPeer p(server->port(Scheme::tcp));
    ASSERT_TRUE(p.next());  // hello
    std::vector<std::byte> frame(proto::kHeaderSize + 4096, std::byte{0x42});
    proto::write_header(std::span<std::byte, proto::kHeaderSize>(frame.data(), proto::kHeaderSize),
                        proto::Header{proto::Type::auth, 0, 1, 1u << 20});
    ASSERT_TRUE(p.send_bytes(frame));
    auto f = p.next();
    ASSERT_TRUE(f) << "no answer: the server is waiting for the declared frame";
    auto resp = status_of(f);
    EXPECT_EQ(resp.status, static_cast<std::uint32_t>(errc::permission_denied));
    EXPECT_NE(resp.message.find("before authentication"), std::string::npos) << resp.message;
    EXPECT_FALSE(p.next()) << "the connection should be closed";
    // An auth of a normal size still gets through.
    RawPeer good(server->port(Scheme::tcp));
    auto w = good.login("app", "app-secret");
    ASSERT_TRUE(w);
    EXPECT_EQ(w->first.type, proto::Type::welcome);
    expect_untouched_and_serving();
}

TEST_F(TcpBadInput, ClientVanishingMidFrameLeavesNoTrace) {
    {
        auto p = logged_in();
        std::string data(1000, 'V');
        std::vector<std::byte> frame;
        proto::encode(frame, 3, proto::Write{0, 0, bytes_of(data)});
        ASSERT_TRUE(p->send_bytes(std::span(frame).first(frame.size() / 2)));
    }  // closed mid-frame: the half write must never be applied
    expect_untouched_and_serving();
}

TEST_F(TcpBadInput, ReadLargerThanAFrameIsRefused) {
    auto p = logged_in();
    auto resp = status_of(p->request(3, proto::Read{0, 0, 64u << 20}));
    EXPECT_NE(resp.status, 0u);
    expect_untouched_and_serving();
}

} // namespace
