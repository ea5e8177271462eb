// Several connections at once, each on its own thread, persisting records
// into one region; after a server restart every acknowledged record is
// read back through a fresh connection. Over tcp:// here and rdma:// in the lab.
#include "common/server_fixture.hpp"

#include <thread>

namespace {
using namespace rpm;

constexpr int kConnections = 4;
constexpr int kRecords = 150;
constexpr std::size_t kRecord = 64;

std::vector<std::byte> record_of(int conn, int i) {
    std::vector<std::byte> r(kRecord);
    for (std::size_t b = 0; b < kRecord; ++b)
        r[b] = static_cast<std::byte>((conn * 59 + i * 13 + static_cast<int>(b) * 7 + ::getpid()) & 0xff);
    return r;
}

std::uint64_t offset_of(int conn, int i) {
    return static_cast<std::uint64_t>(conn) * 65536 + static_cast<std::uint64_t>(i) * kRecord;
}

class OpsConcurrent : public rpm::test::ServerTest {
protected:
    // One connection's life: records made durable one by one, alternating
    // persist with write + flush. Returns how many were acknowledged.
    int writer(int conn, std::string& error) {
        auto c = connect();
        if (!c) return error = c.error().message(), 0;
        auto r = c->open_region("kv");
        if (!r) return error = r.error().message(), 0;
        for (int i = 0; i < kRecords; ++i) {
            const auto rec = record_of(conn, i);
            const auto off = offset_of(conn, i);
            Result<void> done = (i % 2) ? r->persist(off, rec) : r->write(off, rec);
            if (done && i % 2 == 0) done = r->flush(off, kRecord);
            if (!done) return error = done.error().message(), i;
        }
        return kRecords;
    }
};

TEST_F(OpsConcurrent, SeveralConnectionsAtOnceThenARestartLosesNothing) {
    std::vector<std::thread> threads;
    std::vector<int> acked(kConnections, 0);
    std::vector<std::string> errors(kConnections);
    for (int k = 0; k < kConnections; ++k)
        threads.emplace_back([&, k] { acked[k] = writer(k, errors[k]); });
    for (auto& th : threads) th.join();
    for (int k = 0; k < kConnections; ++k) EXPECT_EQ(acked[k], kRecords) << "connection " << k << ": " << errors[k];

    server.reset();  // stop, then a new server on the same backing store
    start_server();
    auto c = connect();
    ASSERT_TRUE(c) << c.error().message();
    auto r = c->open_region("kv");
    ASSERT_TRUE(r) << r.error().message();
    int lost = 0;
    std::vector<std::byte> back(kRecord);
    for (int k = 0; k < kConnections; ++k)
        for (int i = 0; i < acked[k]; ++i)
            if (!r->read(offset_of(k, i), back).has_value() || back != record_of(k, i)) ++lost;
    EXPECT_EQ(lost, 0) << "acknowledged records missing after the restart";
}

} // namespace
