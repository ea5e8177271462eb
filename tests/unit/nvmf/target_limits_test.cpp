// Connection limits of rpm's NVMe/TCP target (TargetOptions): a connection
// that does not complete ICReq and Connect within the set-up timeout is
// closed, silent or stuck after ICReq; connected queues may idle; at most
// max_setup_per_address connections from one address may be in set-up and
// max_connections open at once; the others are closed as they are accepted.
#include "target_support.hpp"

#include <filesystem>
#include <thread>

namespace rpm::nvmf {
namespace {

using namespace std::chrono_literals;
using testing::TempDir;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct NvmfTargetLimits : ::testing::Test {
    TempDir dir;
    std::optional<Target> target;
    void start(std::chrono::milliseconds setup, std::size_t max_connections, std::size_t per_address) {
        auto o = testing::options(dir);
        o.setup_timeout = setup;
        o.max_connections = max_connections;
        o.max_setup_per_address = per_address;
        auto t = Target::start(o);
        ASSERT_TRUE(t) << t.error().message();
        target = std::move(*t);
    }
};

TEST_F(NvmfTargetLimits, SilentConnectionIsClosedAfterTheSetupTimeout) {
    start(300ms, 16, 16);
    testing::Raw raw(target->port());
    const auto t0 = Clock::now();
    EXPECT_TRUE(raw.read().empty());
    EXPECT_TRUE(raw.closed());
    EXPECT_GE(seconds_since(t0), 0.25);
    EXPECT_LT(seconds_since(t0), 2.0) << "closed only by the test's own 5 s receive timeout";
    EXPECT_EQ(target->stats().setup_timeouts, 1u);
}

TEST_F(NvmfTargetLimits, IcReqWithoutConnectIsClosedToo) {
    start(300ms, 16, 16);
    testing::Raw raw(target->port());
    raw.handshake(false, false);
    const auto t0 = Clock::now();
    EXPECT_TRUE(raw.read().empty()) << "the queue stayed open without a Connect";
    EXPECT_LT(seconds_since(t0), 2.0);
    EXPECT_EQ(target->stats().setup_timeouts, 1u);
}

TEST_F(NvmfTargetLimits, ConnectedHostMayIdle) {
    start(300ms, 16, 16);
    auto h = Host::connect(testing::host_options(target->port()));
    ASSERT_TRUE(h) << h.error().message();
    std::this_thread::sleep_for(800ms);
    std::vector<std::byte> b(512);
    EXPECT_TRUE(h->read(1, 0, b));
    EXPECT_EQ(target->stats().setup_timeouts, 0u);
}

TEST_F(NvmfTargetLimits, SetUpsFromOneAddressAreBounded) {
    start(10s, 16, 2);
    testing::Raw a(target->port()), b(target->port());
    a.handshake(false, false);  // served: both are in set-up now
    b.handshake(false, false);
    testing::Raw c(target->port());
    const auto t0 = Clock::now();
    EXPECT_TRUE(c.read().empty());
    EXPECT_LT(seconds_since(t0), 2.0) << "not refused at accept";
    EXPECT_EQ(target->stats().connections_refused, 1u);
    // A host that completes its set-up is not counted: once one raw
    // connection is gone, a real host (two connections, one at a time)
    // gets in.
    a.send(std::array<std::uint8_t, 24>{0x02, 0, 0x18, 0, 0x18, 0, 0, 0});  // H2CTermReq: a goes away
    EXPECT_TRUE(a.closed());
    std::this_thread::sleep_for(300ms);  // the watchdog reaps it
    auto h = Host::connect(testing::host_options(target->port()));
    EXPECT_TRUE(h) << h.error().message();
}

TEST_F(NvmfTargetLimits, ConnectionsAreBounded) {
    start(10s, 2, 16);
    auto h = Host::connect(testing::host_options(target->port()));  // an admin and an I/O queue
    ASSERT_TRUE(h) << h.error().message();
    testing::Raw extra(target->port());
    EXPECT_TRUE(extra.read().empty()) << "a third connection was served past max_connections 2";
    EXPECT_EQ(target->stats().connections_refused, 1u);
    std::vector<std::byte> b(512);
    EXPECT_TRUE(h->read(1, 0, b)) << "the connected host stopped being served";
}

// Threads of this process (the target runs in it).
std::size_t threads_now() {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/task")) ++n;
    return n;
}

TEST_F(NvmfTargetLimits, IdleConnectionsHoldNoThread) {
    start(30s, 400, 400);
    // A first host brings up the workers and the engine's own threads.
    auto h = Host::connect(testing::host_options(target->port()));
    ASSERT_TRUE(h) << h.error().message();
    const auto before = threads_now();
    std::vector<std::unique_ptr<testing::Raw>> idle;
    for (int i = 0; i < 200; ++i) {
        idle.push_back(std::make_unique<testing::Raw>(target->port()));
        idle.back()->handshake(false, false);  // served: each waits for its Connect now
    }
    const auto after = threads_now();
    EXPECT_LT(after, before + 16) << "200 idle connections made " << after - before << " threads";
    std::vector<std::byte> b(512);
    EXPECT_TRUE(h->read(1, 0, b)) << "the connected host stopped being served";
}

TEST_F(NvmfTargetLimits, AConnectionStuckInAPduDelaysOnlyItself) {
    start(30s, 16, 16);
    // Half an ICReq: the worker serving it blocks for the rest.
    testing::Raw stuck(target->port());
    std::array<std::uint8_t, pdu::max_header_bytes> icreq{};
    const auto n = pdu::encode_icreq(icreq, {});
    stuck.send(std::span(icreq.data(), n / 2));
    std::this_thread::sleep_for(100ms);
    const auto t0 = Clock::now();
    auto h = Host::connect(testing::host_options(target->port()));
    ASSERT_TRUE(h) << h.error().message();
    std::vector<std::byte> b(512);
    EXPECT_TRUE(h->read(1, 0, b));
    EXPECT_LT(seconds_since(t0), 5.0) << "the host waited behind the stuck connection";
}

TEST_F(NvmfTargetLimits, NonPositiveLimitsAreRefused) {
    for (int i = 0; i < 3; ++i) {
        auto o = testing::options(dir);
        if (i == 0) o.setup_timeout = 0ms;
        if (i == 1) o.max_connections = 0;
        if (i == 2) o.max_setup_per_address = 0;
        EXPECT_EQ(Target::start(o).error(), errc::invalid_argument) << i;
    }
}

} // namespace
} // namespace rpm::nvmf
