// What a caller gets when a call cannot be made as asked, and the forms that
// spare it the byte spans: a synchronous call inside its own connection's
// callback, TLS asked of rdma://, pointer + size and string_view. Over
// tcp:// here, rdma:// in the lab (common/server_fixture.hpp).
#include "common/server_fixture.hpp"

#include <unistd.h>

#include <future>
#include <string>

namespace {
using namespace rpm;
using rpm::test::bytes_of;
using OpsErrorsTest = rpm::test::ServerTest;

// A callback runs on the thread that completes its connection's calls: a
// synchronous call made there is refused at once (it used to wait out
// ClientOptions::timeout, 20 s here, and close the connection), nothing of
// it is sent, and the connection goes on.
TEST_F(OpsErrorsTest, ASynchronousCallInsideItsConnectionsCallbackIsRefusedAndTheConnectionGoesOn) {
    auto c = connect();
    ASSERT_TRUE(c) << c.error().message();
    auto r = c->open_region("kv");
    ASSERT_TRUE(r) << r.error().message();
    // A PM device in the lab keeps earlier runs' bytes: a marker of this run.
    const std::string marker = "inner-" + std::to_string(::getpid());
    std::promise<std::pair<std::error_code, std::error_code>> seen;
    r->write(512, bytes_of("outer"), [&](std::error_code ec) {
        seen.set_value({ec, r->persist(1024, std::string_view(marker))});
    });
    const auto [outer, inner] = seen.get_future().get();
    EXPECT_FALSE(outer) << outer.message();
    EXPECT_EQ(inner, errc::would_deadlock) << inner.message();
    EXPECT_NE(make_error_code(errc::would_deadlock).message().find("callback"), std::string::npos);
    ASSERT_FALSE(r->persist(2048, std::string_view("after")));
    EXPECT_EQ(rpm::test::text_at(*r, 2048, 5), "after");
    EXPECT_NE(rpm::test::text_at(*r, 1024, marker.size()), marker) << "the refused persist was sent";
}

// rdma:// has no TLS: a caller who asked for it gets an error, not a
// connection in the clear. Refused before anything is dialled.
TEST_F(OpsErrorsTest, TlsAskedOfRdmaIsRefusedBeforeDialling) {
    ClientOptions o;
    o.client_id = "app";
    o.secret = "app-secret";
    o.tls = true;
    auto c = Client(o).connect("rdma://127.0.0.1:1");
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().code(), errc::unsupported) << c.error().message();
    EXPECT_NE(c.error().message().find("rdma:// has no TLS"), std::string::npos) << c.error().message();
}

// The pointer + size and string_view forms move the same bytes as the
// span forms, and refuse the same ranges.
TEST_F(OpsErrorsTest, PointerAndStringViewFormsMoveTheSameBytes) {
    auto c = connect();
    ASSERT_TRUE(c) << c.error().message();
    auto r = c->open_region("kv");
    ASSERT_TRUE(r) << r.error().message();
    const std::string tag = std::to_string(::getpid() % 100000000);
    const std::string first = "string_view " + tag, second = "pointer " + tag;
    ASSERT_FALSE(r->write(3072, std::string_view(first)));
    ASSERT_FALSE(r->persist(3072 + first.size(), second.data(), second.size()));
    ASSERT_FALSE(r->flush(3072, first.size()));
    EXPECT_EQ(rpm::test::text_at(*r, 3072, first.size() + second.size()), first + second);
    EXPECT_EQ(r->write(r->size() - 1, std::string_view("xy")), errc::out_of_range);
    EXPECT_EQ(r->persist(r->size(), "z", 1), errc::out_of_range);
}

} // namespace
