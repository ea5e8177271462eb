// Manager end to end on a copy of the lab VM's sysfs tree (tests/fixtures/
// p2p/qemu_lab) with a plain file for BAR2: discover, find, allocate from
// the CMB, fall back with the rules' explanation, account; a moved-from
// Manager refusing every call.
#include "alloc_fixture.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>
#include "tests/support/paths.hpp"

namespace rpm::p2p {
namespace {

using test::FixtureRoot;
namespace fs = std::filesystem;
using test::KiB;
using test::MiB;
const std::string nvme = "0000:00:03.0";

// The lab tree, copied so BAR2 can be added as a 16 MiB file.
class LabTree : public ::testing::Test {
protected:
    void SetUp() override {
        fs::copy(rpm::test::fixtures_dir() / "p2p/qemu_lab", fx.root(),
                 fs::copy_options::recursive | fs::copy_options::copy_symlinks |
                     fs::copy_options::overwrite_existing);
        bar = fx.root() / "sys/devices/pci0000:00" / nvme / "resource2";
        std::ofstream{bar};
        fs::resize_file(bar, 16 * MiB);
    }
    Manager discover() {
        ManagerOptions o;
        o.root = fx.root();
        o.hugepages = false;
        auto m = Manager::discover(o);
        EXPECT_TRUE(m) << m.error().message();
        return std::move(m).value();
    }
    FixtureRoot fx;
    fs::path bar;
};

TEST(P2pAllocManager, DiscoverNeedsPciDevicesUnderTheRoot) {
    FixtureRoot fx;
    fs::remove_all(fx.root() / "sys");
    ManagerOptions o;
    o.root = fx.root();
    auto m = Manager::discover(o);
    ASSERT_FALSE(m);
    EXPECT_EQ(m.error(), errc::path_not_found);
    EXPECT_NE(m.error().detail().find("sys/bus/pci/devices"), std::string::npos);
}

TEST(P2pAllocManager, AnEmptyTreeHasNoProvidersButHandMadeChoicesWork) {
    FixtureRoot fx;
    fx.file(nvme, "resource2", 2 * MiB);
    ManagerOptions o;
    o.root = fx.root();
    auto m = Manager::discover(o);
    ASSERT_TRUE(m) << m.error().message();
    EXPECT_TRUE(m->providers().empty());
    EXPECT_TRUE(m->usage().empty());
    auto b = m->allocate(test::choose(test::cmb(nvme, 2 * MiB)), 64 * KiB);
    ASSERT_TRUE(b) << b.error().message();
    EXPECT_EQ(b->source(), Source::bar);
    m->account(*b, 4096);
    EXPECT_EQ(m->accounting().device_bytes, 4096u);
    ASSERT_EQ(m->usage().size(), 1u);
    EXPECT_EQ(m->usage()[0].free_bytes, 2 * MiB - 64 * KiB);
}

TEST_F(LabTree, FindsTheCmbAndAllocatesFromIt) {
    auto m = discover();
    ASSERT_EQ(m.providers().size(), 1u);
    const Provider& p = m.providers()[0];
    EXPECT_EQ(p.bdf, nvme);
    EXPECT_EQ(p.kind, ProviderKind::nvme_cmb);
    EXPECT_EQ(p.size, 16 * MiB);
    EXPECT_EQ(p.bar, 2);

    const std::vector<std::string> clients{nvme};
    auto choice = m.find(clients);
    ASSERT_TRUE(choice) << choice.error().message();
    ASSERT_TRUE(choice->provider.has_value()) << choice->explanation;
    EXPECT_EQ(choice->provider->bdf, nvme);
    ASSERT_FALSE(choice->verdicts.empty());
    EXPECT_EQ(choice->verdicts[0].distance, 0);
    EXPECT_EQ(choice->clients, clients);

    auto b = m.allocate(*choice, 1 * MiB);
    ASSERT_TRUE(b) << b.error().message();
    EXPECT_EQ(b->source(), Source::bar);
    test::fill(b->bytes(), 11);
    EXPECT_TRUE(test::holds(FixtureRoot::read(bar, p.bar_offset + b->offset(), 1 * MiB), 11));
    m.account(*b, 1 * MiB);
    const auto a = m.accounting();
    EXPECT_EQ(a.device_bytes, 1 * MiB);
    EXPECT_EQ(a.bytes_allocated, 1 * MiB);
    EXPECT_EQ(a.fallbacks, 0u);
}

TEST_F(LabTree, AClientWithNoReachableProviderGetsHostMemoryAndTheReason) {
    auto m = discover();
    const std::vector<std::string> clients{"0000:00:04.0"};
    auto choice = m.find(clients);
    ASSERT_TRUE(choice) << choice.error().message();
    EXPECT_FALSE(choice->provider.has_value());
    auto b = m.allocate(*choice, 64 * KiB);
    ASSERT_TRUE(b) << b.error().message();
    EXPECT_TRUE(b->is_fallback());
    EXPECT_EQ(b->why().rfind("no provider suits 0000:00:04.0: ", 0), 0u) << b->why();
    EXPECT_GT(b->why().size(), std::string("no provider suits 0000:00:04.0: ").size());
    m.account(*b, 10);
    EXPECT_EQ(m.accounting().host_staged_bytes, 10u);
    EXPECT_EQ(m.accounting().fallbacks, 1u);
    auto strict = m.allocate_p2p(*choice, 64 * KiB);
    ASSERT_FALSE(strict);
    EXPECT_EQ(strict.error(), errc::no_p2p_memory);
    EXPECT_EQ(strict.error().detail(), b->why());
}

// Two CMBs at the same distance from mlx5_0: the tie goes to the one with
// more free space as it is now, so filling the larger one moves the choice.
TEST(P2pAllocManager, TiesGoToTheProviderWithMoreFreeSpaceNow) {
    FixtureRoot fx;
    fs::copy(rpm::test::fixtures_dir() / "p2p/one_switch", fx.root(),
             fs::copy_options::recursive | fs::copy_options::copy_symlinks |
                 fs::copy_options::overwrite_existing);
    const fs::path below = fx.root() / "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0";
    for (const auto& [dev, size] : {std::pair{"0000:02:01.0/0000:04:00.0", 16 * MiB},
                                    std::pair{"0000:02:02.0/0000:05:00.0", 32 * MiB}}) {
        std::ofstream{below / dev / "resource2"};
        fs::resize_file(below / dev / "resource2", size);
    }
    ManagerOptions o;
    o.root = fx.root();
    auto m = Manager::discover(o);
    ASSERT_TRUE(m) << m.error().message();
    const std::vector<std::string> clients{"mlx5_0"};
    auto first = m->find(clients);
    ASSERT_TRUE(first && first->provider) << (first ? first->explanation : first.error().message());
    EXPECT_EQ(first->provider->bdf, "0000:05:00.0");
    auto held = m->allocate_p2p(*first, 20 * MiB);
    ASSERT_TRUE(held) << held.error().message();
    auto second = m->find(clients);
    ASSERT_TRUE(second && second->provider);
    EXPECT_EQ(second->provider->bdf, "0000:04:00.0") << second->explanation;
    EXPECT_EQ(second->provider->available, 16 * MiB);
}

TEST_F(LabTree, FindWithoutClientsIsInvalid) {
    auto m = discover();
    auto none = m.find(std::vector<std::string>{});
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error(), errc::invalid_argument);
    auto missing = m.find(std::vector<std::string>{"0000:0a:00.0"});
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error(), errc::path_not_found);
}

// A call a moved-from Manager must refuse: errc::invalid_argument, the
// detail naming the call, so a caller's log says what was misused.
template <class T>
void expect_moved_from_refusal(const Result<T>& r, const std::string& call) {
    ASSERT_FALSE(r) << call << " succeeded on a moved-from Manager";
    EXPECT_EQ(r.error(), errc::invalid_argument) << r.error().message();
    EXPECT_EQ(r.error().detail(), call + " on a moved-from p2p::Manager");
}

// Every public call on `gone` (moved from) as the header documents it.
// `live` is a buffer of the manager's old state, which must not be counted.
void expect_moved_from_manager(Manager& gone, const Choice& choice, const Buffer& live) {
    EXPECT_TRUE(gone.providers().empty());
    EXPECT_TRUE(gone.skipped().empty());
    EXPECT_TRUE(gone.usage().empty());
    expect_moved_from_refusal(gone.place(nvme), "place");
    expect_moved_from_refusal(gone.find(std::vector<std::string>{nvme}), "find");
    // The moved-from check comes first: no "needs at least one client".
    expect_moved_from_refusal(gone.find(std::vector<std::string>{}), "find");
    expect_moved_from_refusal(gone.allocate(choice, 64 * KiB), "allocate");
    expect_moved_from_refusal(gone.allocate_p2p(choice, 64 * KiB), "allocate_p2p");
    gone.account(live, 4096);
    const Accounting a = gone.accounting();
    EXPECT_EQ(a.device_bytes, 0u);
    EXPECT_EQ(a.host_staged_bytes, 0u);
    EXPECT_EQ(a.allocations, 0u);
    EXPECT_EQ(a.fallbacks, 0u);
    EXPECT_EQ(a.bytes_allocated, 0u);
}

TEST_F(LabTree, AMovedFromManagerRefusesEveryCallWithoutCrashing) {
    auto a = discover();
    const std::vector<std::string> clients{nvme};
    auto choice = a.find(clients);
    ASSERT_TRUE(choice && choice->provider) << (choice ? choice->explanation : choice.error().message());
    auto held = a.allocate(*choice, 64 * KiB);
    ASSERT_TRUE(held) << held.error().message();

    Manager b(std::move(a));
    {
        SCOPED_TRACE("move-constructed from");
        expect_moved_from_manager(a, *choice, *held);  // NOLINT(bugprone-use-after-move): the point
    }
    // The state went along: the provider, and the live buffer's bytes.
    ASSERT_EQ(b.providers().size(), 1u);
    EXPECT_EQ(b.accounting().bytes_allocated, 64 * KiB);

    Manager c = discover();
    c = std::move(b);
    {
        SCOPED_TRACE("move-assigned from");
        expect_moved_from_manager(b, *choice, *held);  // NOLINT(bugprone-use-after-move): the point
    }
    ASSERT_EQ(c.providers().size(), 1u);
    EXPECT_EQ(c.accounting().bytes_allocated, 64 * KiB);
    // Neither moved-from account() reached the state; the owner's does.
    EXPECT_EQ(c.accounting().device_bytes, 0u);
    c.account(*held, 4096);
    EXPECT_EQ(c.accounting().device_bytes, 4096u);

    // Assigning to a moved-from Manager makes it whole again.
    a = std::move(c);
    ASSERT_EQ(a.providers().size(), 1u);
    auto again = a.find(clients);
    ASSERT_TRUE(again) << again.error().message();
    EXPECT_TRUE(again->provider.has_value());
}

} // namespace
} // namespace rpm::p2p
