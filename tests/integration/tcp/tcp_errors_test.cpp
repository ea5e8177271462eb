// What a failure over tcp:// says (src/transport/tcp/client_frames.cpp): the
// operation, and why, in the error's detail. Persists pending when the
// server goes away, and every call after, name the connection's failure; a
// message too large for recv's buffer gives its size.
#include "common/server_fixture.hpp"

#include "tests/support/result.hpp"

#include <chrono>
#include <condition_variable>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {
using namespace rpm;
using namespace std::chrono_literals;
using rpm::test::bytes_of;
using rpm::test::code_of;
using rpm::test::ok;
using rpm::test::TcpServerTest;

class TcpErrors : public TcpServerTest {};

bool starts_with(const std::string& s, std::string_view prefix) { return s.rfind(prefix, 0) == 0; }

TEST_F(TcpErrors, AServerThatGoesAwayFailsPendingPersistsNamingTheConnection) {
    auto c = connect();
    ASSERT_TRUE(c) << c.error().message();
    auto r = c->open_region("kv");
    ASSERT_TRUE(r) << r.error().message();
    ASSERT_TRUE(ok(r->persist(0, bytes_of("before"))));
    // Persists in flight when the server stops: those it had not answered
    // fail, each saying that the connection failed and why.
    constexpr int kInFlight = 200;
    static constexpr std::string_view kRec = "in flight";
    std::mutex results_mu;
    std::condition_variable cv;
    std::vector<Result<void>> results;
    for (int i = 0; i < kInFlight; ++i)
        r->persist(64u * static_cast<std::uint64_t>(i), bytes_of(kRec), [&](Result<void> res) {
            std::lock_guard lock(results_mu);
            results.push_back(std::move(res));
            cv.notify_all();
        });
    server.reset();
    {
        std::unique_lock lock(results_mu);
        ASSERT_TRUE(cv.wait_for(lock, 20s, [&] { return results.size() == kInFlight; }))
            << results.size() << " of " << kInFlight << " persists called back";
    }
    int failed = 0;
    std::string example;
    for (const auto& res : results) {
        if (res.has_value()) continue;
        if (++failed == 1) example = res.error().message();
        EXPECT_EQ(res.error(), errc::io_error) << res.error().message();
        EXPECT_TRUE(starts_with(res.error().detail(), "persist over tcp://")) << res.error().detail();
    }
    std::cout << "[tcp errors] " << failed << " of " << kInFlight << " persists in flight failed with the server"
              << (failed ? ", e.g. " + example : std::string()) << "\n";
    // Once it has gone, every call says so.
    const Result<void> after = r->persist(0, bytes_of("after"));
    EXPECT_EQ(code_of(after), errc::io_error);
    ASSERT_FALSE(after.has_value());
    EXPECT_TRUE(starts_with(after.error().detail(), "persist over tcp://")) << after.error().detail();
    EXPECT_NE(after.error().detail().find(": the connection failed: "), std::string::npos) << after.error().detail();
    std::vector<std::byte> out(8);
    const Result<void> read = r->read(0, out);
    EXPECT_EQ(code_of(read), errc::io_error);
    ASSERT_FALSE(read.has_value());
    EXPECT_TRUE(starts_with(read.error().detail(), "read over tcp://")) << read.error().detail();
    EXPECT_NE(read.error().detail().find(": the connection failed: "), std::string::npos) << read.error().detail();
}

TEST_F(TcpErrors, AMessageLargerThanRecvsBufferIsBadSizeAndSaysItsSize) {
    auto c = connect();
    ASSERT_TRUE(c) << c.error().message();
    ASSERT_TRUE(ok(c->send(bytes_of("hello"))));  // the server learns the session
    std::uint64_t session = 0;
    for (int i = 0; i < 500 && session == 0; ++i) {
        {
            std::lock_guard lock(mu);
            if (!messages.empty()) session = messages.front().first;
        }
        if (session == 0) std::this_thread::sleep_for(10ms);
    }
    ASSERT_NE(session, 0u) << "the server never saw the message";
    const std::string big(23, 'm');
    ASSERT_TRUE(ok(server->send(session, bytes_of(big))));
    std::vector<std::byte> small(4);
    const auto got = c->recv(small);
    EXPECT_EQ(code_of(got), errc::bad_size);
    ASSERT_FALSE(got.has_value());
    EXPECT_NE(got.error().detail().find("a message of 23 bytes into 4"), std::string::npos) << got.error().detail();
    // Dropped, and the connection goes on.
    ASSERT_TRUE(ok(server->send(session, bytes_of("pong"))));
    const auto next = c->recv(small);
    ASSERT_TRUE(ok(next));
    EXPECT_EQ(*next, 4u);
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(small.data()), small.size()), "pong");
}

} // namespace
