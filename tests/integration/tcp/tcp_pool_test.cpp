// tcp:// reads into pinned buffers from the process-wide pool
// (rpm::tcp_buffer_pool_stats: an MrPool whose registration is mlock): the
// pool registers entries, every connection and server session takes one,
// gives it back when it closes, and past the pool's budget connections
// fall back to heap buffers and still work.
#include "common/server_fixture.hpp"

#include "tests/support/result.hpp"

#include <thread>
#include <vector>

namespace {
using namespace rpm;
using namespace std::chrono_literals;
using rpm::test::bytes_of;
using rpm::test::ok;
using rpm::test::TcpServerTest;

class TcpBufferPool : public TcpServerTest {};

std::uint64_t hits(const MrPoolStats& s) { return s.l1_hits + s.l2_hits + s.global_hits; }

bool in_use_returns_to(std::uint32_t level) {
    for (int i = 0; i < 500; ++i) {
        if (tcp_buffer_pool_stats()->in_use == level) return true;
        std::this_thread::sleep_for(10ms);
    }
    return false;
}

void persist_and_read(Connection& c, std::uint64_t at, const std::string& rec) {
    auto r = c.open_region("kv");
    ASSERT_TRUE(r) << r.error().message();
    ASSERT_TRUE(ok(r->persist(at, bytes_of(rec))));
    std::string back(rec.size(), '\0');
    ASSERT_TRUE(ok(r->read(at, std::as_writable_bytes(std::span(back.data(), back.size())))));
    EXPECT_EQ(back, rec);
}

TEST_F(TcpBufferPool, ConnectionsReadIntoPinnedPoolEntries) {
    const auto before = tcp_buffer_pool_stats();  // the listener made the pool
    ASSERT_TRUE(before);
    EXPECT_EQ(before->device, "pinned");
    EXPECT_EQ(before->buffer_size, 64u * 1024);
    EXPECT_GT(before->registrations, 0u);
    EXPECT_GT(before->registered, 0u);
    {
        auto c = connect();
        ASSERT_TRUE(c) << c.error().message();
        for (int i = 0; i < 20; ++i) persist_and_read(*c, 64u * i, "record " + std::to_string(i));
        const auto during = tcp_buffer_pool_stats();
        // The client's read buffer and its session's on the server.
        EXPECT_GE(hits(*during), hits(*before) + 2);
        EXPECT_GE(during->in_use, before->in_use + 2);
        EXPECT_LE(during->registered, during->budget);
    }
    EXPECT_TRUE(in_use_returns_to(before->in_use)) << "a closed connection kept its buffer";
    // The next connection takes the entries the last one gave back.
    const auto reused = tcp_buffer_pool_stats();
    auto again = connect();
    ASSERT_TRUE(again);
    persist_and_read(*again, 0, "again");
    EXPECT_GE(hits(*tcp_buffer_pool_stats()), hits(*reused) + 2);
}

TEST_F(TcpBufferPool, PastTheBudgetConnectionsUseHeapBuffersAndStillWork) {
    const auto before = tcp_buffer_pool_stats();
    ASSERT_TRUE(before);
    // Each connection holds two entries (client and session): more than the budget.
    const std::size_t n = before->budget / 2 + 4;
    std::vector<Connection> conns;
    for (std::size_t i = 0; i < n; ++i) {
        auto c = connect();
        ASSERT_TRUE(c) << i << ": " << c.error().message();
        conns.push_back(std::move(*c));
    }
    for (std::size_t i = 0; i < n; ++i) persist_and_read(conns[i], 64 * i, "conn " + std::to_string(i));
    const auto full = tcp_buffer_pool_stats();
    EXPECT_GT(full->none_now, before->none_now);
    EXPECT_LE(full->registered, full->budget);
    EXPECT_LE(full->in_use, full->budget);
    conns.clear();
    EXPECT_TRUE(in_use_returns_to(before->in_use));
}

} // namespace
