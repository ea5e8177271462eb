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
using rpm::test::code_of;
using rpm::test::ok;
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
    std::promise<std::pair<Result<void>, Result<void>>> seen;
    r->write(512, bytes_of("outer"), [&](Result<void> outer) {
        seen.set_value({std::move(outer), r->persist(1024, std::string_view(marker))});
    });
    const auto [outer, inner] = seen.get_future().get();
    EXPECT_TRUE(ok(outer));
    EXPECT_TRUE(rpm::test::fails_with(inner, errc::would_deadlock));
    EXPECT_NE(make_error_code(errc::would_deadlock).message().find("callback"), std::string::npos);
    ASSERT_TRUE(ok(r->persist(2048, std::string_view("after"))));
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
    ASSERT_TRUE(ok(r->write(3072, std::string_view(first))));
    ASSERT_TRUE(ok(r->persist(3072 + first.size(), second.data(), second.size())));
    ASSERT_TRUE(ok(r->flush(3072, first.size())));
    EXPECT_EQ(rpm::test::text_at(*r, 3072, first.size() + second.size()), first + second);
    EXPECT_EQ(code_of(r->write(r->size() - 1, std::string_view("xy"))), errc::out_of_range);
    EXPECT_EQ(code_of(r->persist(r->size(), "z", 1)), errc::out_of_range);
}

// After close() every call fails with io_error, and its detail names the
// call and says that the connection failed because it was closed.
TEST_F(OpsErrorsTest, CallsAfterCloseSayTheConnectionWasClosed) {
    auto c = connect();
    ASSERT_TRUE(c) << c.error().message();
    auto r = c->open_region("kv");
    ASSERT_TRUE(r) << r.error().message();
    ASSERT_TRUE(ok(r->persist(0, std::string_view("open"))));
    c->close();
    const Result<void> sync = r->persist(0, std::string_view("closed"));
    const Result<void> future = r->write_async(0, bytes_of("closed")).get();
    std::promise<Result<void>> called;
    r->flush(0, 8, [&called](Result<void> f) { called.set_value(std::move(f)); });
    const Result<void> callback = called.get_future().get();
    const Result<void> sent = c->send(bytes_of("closed"));
    for (const Result<void>* f : {&sync, &future, &callback, &sent}) {
        EXPECT_EQ(code_of(*f), errc::io_error);
        if (f->has_value()) continue;
        const std::string& d = f->error().detail();
        EXPECT_NE(d.find("connection failed: "), std::string::npos) << f->error().message();
        EXPECT_NE(d.find("closed"), std::string::npos) << "no reason in: " << f->error().message();
    }
    if (scheme() == "tcp" && !sync.has_value()) {  // rdma:// names the work request's kind
        EXPECT_EQ(sync.error().detail().rfind("persist over ", 0), 0u) << sync.error().message();
        EXPECT_NE(sync.error().detail().find("connection closed"), std::string::npos) << sync.error().message();
    }
}

} // namespace
