// The manager's allocation side (ManagerState behind Manager::allocate):
// BAR and p2pmem buffers on fixture files, fallbacks with their reasons,
// accounting, and buffers outliving their manager.
#include "alloc_fixture.hpp"

#include "p2p/manager_state.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

namespace rpm::p2p {
namespace {

using test::FixtureRoot;
using test::KiB;
using test::MiB;
const std::string bdf = "0000:00:03.0";

std::shared_ptr<detail::ManagerState> make_core(const FixtureRoot& fx, bool hugepages = false,
                                               bool map_bars = true) {
    ManagerOptions o;
    o.root = fx.root();
    o.hugepages = hugepages;
    o.map_bars = map_bars;
    return std::make_shared<detail::ManagerState>(o, std::vector<Provider>{}, detail::HostFacts{},
                                                 std::vector<std::string>{});
}

TEST(P2pAllocCore, BarBufferWritesLandInTheBarAtItsOffset) {
    FixtureRoot fx;
    const auto bar = fx.file(bdf, "resource2", 16 * MiB);
    auto core = make_core(fx);
    const Provider p = test::cmb(bdf, 8 * MiB, 4 * MiB);  // the CMB starts 4 MiB into BAR2
    auto first = core->allocate(test::choose(p), 1 * MiB, 4096, true);
    auto second = core->allocate(test::choose(p), 1 * MiB, 4096, true);
    ASSERT_TRUE(first) << first.error().message();
    ASSERT_TRUE(second) << second.error().message();
    EXPECT_EQ(second->source(), Source::bar);
    EXPECT_FALSE(second->is_fallback());
    EXPECT_EQ(second->provider(), bdf);
    EXPECT_TRUE(second->why().empty());
    EXPECT_NE(first->offset(), second->offset());
    test::fill(second->bytes(), 7);
    EXPECT_TRUE(test::holds(FixtureRoot::read(bar, 4 * MiB + second->offset(), 1 * MiB), 7));
}

TEST(P2pAllocCore, PrefersTheWriteCombiningBarFile) {
    FixtureRoot fx;
    const auto uc = fx.file(bdf, "resource2", 4 * MiB);
    const auto wc = fx.file(bdf, "resource2_wc", 4 * MiB);
    auto core = make_core(fx);
    auto b = core->allocate(test::choose(test::cmb(bdf, 4 * MiB)), 64 * KiB, 4096, true);
    ASSERT_TRUE(b) << b.error().message();
    test::fill(b->bytes(), 3);
    EXPECT_TRUE(test::holds(FixtureRoot::read(wc, b->offset(), 64 * KiB), 3));
    EXPECT_FALSE(test::holds(FixtureRoot::read(uc, b->offset(), 64 * KiB), 3));
}

TEST(P2pAllocCore, DataIsAlignedAsAsked) {
    FixtureRoot fx;
    fx.file(bdf, "resource2", 16 * MiB);
    auto core = make_core(fx);
    const Provider p = test::cmb(bdf, 12 * MiB, 4 * KiB);
    ASSERT_TRUE(core->allocate(test::choose(p), 4 * KiB, 4096, true));  // off the 2 MiB grid
    for (std::size_t align : {std::size_t{4096}, std::size_t{64 * KiB}, std::size_t{2 * MiB}}) {
        auto b = core->allocate(test::choose(p), 100, align, true);
        ASSERT_TRUE(b) << b.error().message();
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b->data()) % align, 0u) << align;
        EXPECT_EQ((p.bar_offset + b->offset()) % align, 0u) << align;
        auto h = core->allocate(Choice{}, 100, align, true);
        ASSERT_TRUE(h);
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(h->data()) % align, 0u) << align;
    }
}

TEST(P2pAllocCore, NoRoomFallsBackToHostAndSaysWhy) {
    FixtureRoot fx;
    fx.file(bdf, "resource2", 4 * MiB);
    auto core = make_core(fx);
    const Choice c = test::choose(test::cmb(bdf, 4 * MiB));
    auto held = core->allocate(c, 3 * MiB, 4096, true);
    ASSERT_TRUE(held);
    auto b = core->allocate(c, 2 * MiB, 4096, true);
    ASSERT_TRUE(b) << b.error().message();
    EXPECT_TRUE(b->is_fallback());
    EXPECT_EQ(b->source(), Source::host);
    EXPECT_TRUE(b->provider().empty());
    EXPECT_EQ(b->why(), "provider 0000:00:03.0 has 1 MiB free, 2 MiB asked");
    test::fill(b->bytes(), 1);  // host memory is usable memory
    EXPECT_TRUE(test::holds(b->bytes(), 1));
    const auto a = core->accounting();
    EXPECT_EQ(a.allocations, 2u);
    EXPECT_EQ(a.fallbacks, 1u);
}

TEST(P2pAllocCore, AllocateP2pNeverFallsBack) {
    FixtureRoot fx;
    fx.file(bdf, "resource2", 4 * MiB);
    auto core = make_core(fx);
    const Choice c = test::choose(test::cmb(bdf, 4 * MiB));
    auto held = core->allocate(c, 3 * MiB, 4096, false);
    ASSERT_TRUE(held);
    EXPECT_EQ(held->source(), Source::bar);
    auto r = core->allocate(c, 2 * MiB, 4096, false);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::no_p2p_memory);
    EXPECT_EQ(r.error().detail(), "provider 0000:00:03.0 has 1 MiB free, 2 MiB asked");
    auto none = core->allocate(Choice{}, 4096, 4096, false);
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error(), errc::no_p2p_memory);
    EXPECT_EQ(core->accounting().fallbacks, 0u);
}

TEST(P2pAllocCore, NoProviderReasonNamesTheClientsAndTheExplanation) {
    FixtureRoot fx;
    auto core = make_core(fx);
    Choice c;
    c.clients = {"0000:03:00.0", "mlx5_0"};
    c.explanation = "no provider is below a common switch";
    auto b = core->allocate(c, 8 * KiB, 4096, true);
    ASSERT_TRUE(b);
    EXPECT_EQ(b->why(), "no provider suits 0000:03:00.0, mlx5_0: no provider is below a common switch");
}

TEST(P2pAllocCore, FreedBuffersCoalesceForALargerOne) {
    FixtureRoot fx;
    fx.file(bdf, "resource2", 4 * MiB);
    auto core = make_core(fx);
    const Choice c = test::choose(test::cmb(bdf, 4 * MiB));
    std::vector<Buffer> all;
    for (int i = 0; i < 4; ++i) all.push_back(core->allocate(c, 1 * MiB, 4096, false).value());
    EXPECT_FALSE(core->allocate(c, 1 * MiB, 4096, false));
    all.erase(all.begin() + 1, all.begin() + 3);  // two neighbours go back
    auto big = core->allocate(c, 2 * MiB, 4096, false);
    ASSERT_TRUE(big) << big.error().message();
    EXPECT_EQ(big->offset(), 1 * MiB);
    const auto u = core->usage();
    ASSERT_EQ(u.size(), 1u);
    EXPECT_EQ(u[0].free_bytes, 0u);
    EXPECT_EQ(u[0].buffers, 3u);
}

TEST(P2pAllocCore, BuffersKeepTheBarMappedAfterTheManagerIsGone) {
    FixtureRoot fx;
    const auto bar = fx.file(bdf, "resource2", 2 * MiB);
    auto core = make_core(fx);
    std::weak_ptr<detail::ManagerState> watch = core;
    auto b = core->allocate(test::choose(test::cmb(bdf, 2 * MiB)), 4 * KiB, 4096, true);
    ASSERT_TRUE(b);
    core.reset();
    EXPECT_FALSE(watch.expired());
    test::fill(b->bytes(), 9);  // still mapped
    EXPECT_TRUE(test::holds(FixtureRoot::read(bar, b->offset(), 4 * KiB), 9));
    { Buffer gone = std::move(*b); }
    EXPECT_TRUE(watch.expired());
}

TEST(P2pAllocCore, P2pmemBuffersMapTheAllocateFile) {
    FixtureRoot fx;
    const std::string dev = "0000:00:04.0";
    const auto alloc = fx.file(dev, "p2pmem/allocate", 4 * MiB);
    fx.text(dev, "p2pmem/available", "1048576");
    auto core = make_core(fx);
    Provider p;
    p.bdf = dev;
    p.kind = ProviderKind::p2pmem;
    p.size = p.available = 4 * MiB;
    p.published = true;
    auto b = core->allocate(test::choose(p), 1 * MiB, 4096, true);
    ASSERT_TRUE(b) << b.error().message();
    EXPECT_EQ(b->source(), Source::p2pmem);
    EXPECT_EQ(b->provider(), dev);
    test::fill(b->bytes(), 5);
    EXPECT_TRUE(test::holds(FixtureRoot::read(alloc, 0, 1 * MiB), 5));  // mmap offset 0
    // More than the kernel says is available: a fallback naming its figure.
    auto big = core->allocate(test::choose(p), 8 * MiB, 4096, true);
    ASSERT_TRUE(big);
    EXPECT_EQ(big->why(), "provider 0000:00:04.0 has 1 MiB free, 8 MiB asked");
    const auto u = core->usage();
    ASSERT_EQ(u.size(), 1u);
    EXPECT_EQ(u[0].free_bytes, 1 * MiB);
    EXPECT_EQ(u[0].buffers, 1u);
}

TEST(P2pAllocCore, ProvidersThatCannotServeFallBackWithTheirReason) {
    FixtureRoot fx;
    fx.file(bdf, "resource2", 4 * MiB);
    auto off = make_core(fx, false, false)->allocate(test::choose(test::cmb(bdf, 4 * MiB)), 4096, 4096, true);
    ASSERT_TRUE(off);
    EXPECT_NE(off->why().find("mapping BARs is off"), std::string::npos) << off->why();

    Provider no_rds = test::cmb(bdf, 4 * MiB);
    no_rds.read_data = false;
    auto r = make_core(fx)->allocate(test::choose(no_rds), 4096, 4096, true);
    ASSERT_TRUE(r);
    EXPECT_NE(r->why().find("RDS is clear"), std::string::npos) << r->why();

    auto missing = make_core(fx)->allocate(test::choose(test::cmb("0000:00:09.0", 4 * MiB)), 4096, 4096, false);
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error(), errc::no_p2p_memory);
    EXPECT_NE(missing.error().detail().find("cannot be mapped"), std::string::npos);

    auto too_big = make_core(fx)->allocate(test::choose(test::cmb(bdf, 8 * MiB)), 4096, 4096, false);
    ASSERT_FALSE(too_big);
    EXPECT_NE(too_big.error().detail().find("does not fit"), std::string::npos) << too_big.error().detail();
}

TEST(P2pAllocCore, HostFallbackTriesHugepagesFirst) {
    FixtureRoot fx;
    auto huge = make_core(fx, true)->allocate(Choice{}, 3 * MiB, 4096, true);
    ASSERT_TRUE(huge) << huge.error().message();
    EXPECT_EQ(huge->size(), 3 * MiB);
    // A machine without reserved hugepages gets normal pages and is told so.
    if (huge->source() == Source::host) {
        EXPECT_NE(huge->why().find("no 2 MiB pages"), std::string::npos) << huge->why();
    } else {
        EXPECT_EQ(huge->source(), Source::host_hugepages);
    }
    test::fill(huge->bytes(), 2);
    EXPECT_TRUE(test::holds(huge->bytes(), 2));

    auto small = make_core(fx, true)->allocate(Choice{}, 1 * MiB, 4096, true);
    ASSERT_TRUE(small);
    EXPECT_EQ(small->source(), Source::host);  // under 2 MiB: never hugepages
    EXPECT_EQ(small->why().find("2 MiB pages"), std::string::npos);
}

TEST(P2pAllocCore, RefusesZeroSizeAndBadAlignment) {
    FixtureRoot fx;
    auto core = make_core(fx);
    EXPECT_EQ(core->allocate(Choice{}, 0, 4096, true).error(), errc::invalid_argument);
    EXPECT_EQ(core->allocate(Choice{}, 64, 3, true).error(), errc::invalid_argument);
    EXPECT_EQ(core->allocate(Choice{}, 64, 4 * MiB, true).error(), errc::invalid_argument);
    EXPECT_EQ(core->allocate(Choice{}, SIZE_MAX, 4096, true).error(), errc::invalid_argument);
    EXPECT_EQ(core->accounting().allocations, 0u);
}

TEST(P2pAllocCore, NeitherProviderNorHostIsAnIoErrorWithBothReasons) {
    FixtureRoot fx;
    fx.file(bdf, "resource2", 4 * MiB);
    auto core = make_core(fx);
    const std::size_t absurd = std::size_t{1} << 60;  // no machine maps an exbibyte
    auto r = core->allocate(test::choose(test::cmb(bdf, 4 * MiB)), absurd, 4096, true);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::io_error);
    EXPECT_NE(r.error().detail().find("provider 0000:00:03.0 has 4 MiB free, 1073741824 GiB asked"),
              std::string::npos) << r.error().detail();
    EXPECT_NE(r.error().detail().find("host memory cannot be mapped"), std::string::npos);
    EXPECT_EQ(core->accounting().fallbacks, 0u);
}

TEST(P2pAllocCore, AccountingSplitsDeviceAndHostBytesAndTracksLiveBytes) {
    FixtureRoot fx;
    fx.file(bdf, "resource2", 4 * MiB);
    auto core = make_core(fx);
    {
        auto dev = core->allocate(test::choose(test::cmb(bdf, 4 * MiB)), 1 * MiB, 4096, true);
        auto host = core->allocate(Choice{}, 64 * KiB, 4096, true);
        ASSERT_TRUE(dev && host);
        core->account(dev->source(), 1000);
        core->account(dev->source(), 24);
        core->account(host->source(), 7);
        const auto a = core->accounting();
        EXPECT_EQ(a.device_bytes, 1024u);
        EXPECT_EQ(a.host_staged_bytes, 7u);
        EXPECT_EQ(a.bytes_allocated, 1 * MiB + 64 * KiB);
        EXPECT_EQ(a.allocations, 2u);
        EXPECT_EQ(a.fallbacks, 1u);
    }
    const auto a = core->accounting();
    EXPECT_EQ(a.bytes_allocated, 0u);
    EXPECT_EQ(a.device_bytes, 1024u);  // moved bytes are history, not live state
}

TEST(P2pAllocCore, MoveAssignmentFreesWhatItReplaces) {
    FixtureRoot fx;
    fx.file(bdf, "resource2", 2 * MiB);
    auto core = make_core(fx);
    const Choice c = test::choose(test::cmb(bdf, 2 * MiB));
    auto a = core->allocate(c, 1 * MiB, 4096, false);
    auto b = core->allocate(c, 1 * MiB, 4096, false);
    ASSERT_TRUE(a && b);
    *a = std::move(*b);
    EXPECT_EQ(b->data(), nullptr);  // NOLINT(bugprone-use-after-move): defined empty
    EXPECT_EQ(b->size(), 0u);
    EXPECT_EQ(core->accounting().bytes_allocated, 1 * MiB);
    EXPECT_TRUE(core->allocate(c, 1 * MiB, 4096, false));  // the replaced one went back
}

TEST(P2pAllocCore, ConcurrentAllocationsAndFreesStayConsistent) {
    FixtureRoot fx;
    fx.file(bdf, "resource2", 4 * MiB);
    auto core = make_core(fx);
    const Choice c = test::choose(test::cmb(bdf, 4 * MiB));
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            for (int i = 0; i < 200; ++i) {
                auto b = core->allocate(c, 64 * KiB, 4096, true);
                if (!b) continue;
                b->data()[0] = static_cast<std::byte>(t);
                core->account(b->source(), 1);
            }
        });
    for (auto& th : threads) th.join();
    const auto a = core->accounting();
    EXPECT_EQ(a.allocations, 800u);
    EXPECT_EQ(a.device_bytes + a.host_staged_bytes, 800u);
    EXPECT_EQ(a.bytes_allocated, 0u);
    const auto u = core->usage();
    ASSERT_EQ(u.size(), 1u);
    EXPECT_EQ(u[0].free_bytes, 4 * MiB);
    EXPECT_EQ(u[0].fragmentation, 0.0);
}

TEST(P2pAllocCore, NamesOfKindsAndSources) {
    EXPECT_EQ(to_string(ProviderKind::p2pmem), "p2pmem");
    EXPECT_EQ(to_string(ProviderKind::nvme_cmb), "nvme_cmb");
    EXPECT_EQ(to_string(ProviderKind::nvme_pmr), "nvme_pmr");
    EXPECT_EQ(to_string(Source::bar), "bar");
    EXPECT_EQ(to_string(Source::host_hugepages), "host_hugepages");
    EXPECT_EQ(to_string(Source::host), "host");
    EXPECT_EQ(to_string(Source::p2pmem), "p2pmem");
}

} // namespace
} // namespace rpm::p2p
