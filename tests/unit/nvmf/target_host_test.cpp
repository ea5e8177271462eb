// rpm's NVMe/TCP target and host together over 127.0.0.1: the connect
// sequence, discovery, I/O in the capsule and through R2T, digests, PM and
// file namespaces, and the data found in the backing files; a moved-from
// Host refusing every call; a moved Target still serving, its moved-from
// shell reporting nothing.
#include "target_support.hpp"

namespace rpm::nvmf {
namespace {

using testing::TempDir;

struct Running {
    TempDir dir;
    std::optional<Target> target;
    Running() {
        auto t = Target::start(testing::options(dir));
        if (!t) ADD_FAILURE() << t.error().message();
        else target = std::move(*t);
    }
};

TEST(NvmfTargetHost, ConnectsAndIdentifies) {
    Running r;
    ASSERT_TRUE(r.target);
    auto h = Host::connect(testing::host_options(r.target->port()));
    ASSERT_TRUE(h) << h.error().message();
    EXPECT_EQ(h->controller().subnqn, testing::nqn);
    EXPECT_EQ(h->controller().in_capsule_data, 8192u);
    EXPECT_EQ(h->controller().max_transfer, 128u * 1024);
    EXPECT_TRUE(h->controller().volatile_write_cache);
    auto ids = h->active_namespaces();
    ASSERT_TRUE(ids) << ids.error().message();
    EXPECT_EQ(*ids, (std::vector<std::uint32_t>{1, 2}));
    auto ns1 = h->identify(1);
    ASSERT_TRUE(ns1);
    EXPECT_EQ(ns1->block_size, 512u);
    EXPECT_EQ(ns1->blocks, (4u << 20) / 512);
    auto ns2 = h->identify(2);
    ASSERT_TRUE(ns2);
    EXPECT_EQ(ns2->block_size, 4096u);
    EXPECT_EQ(ns2->blocks, (4u << 20) / 4096);
}

TEST(NvmfTargetHost, DiscoveryListsTheSubsystem) {
    Running r;
    ASSERT_TRUE(r.target);
    auto entries = Host::discover(testing::host_options(r.target->port()));
    ASSERT_TRUE(entries) << entries.error().message();
    ASSERT_EQ(entries->size(), 1u);
    EXPECT_EQ((*entries)[0].subnqn, testing::nqn);
    EXPECT_EQ((*entries)[0].trtype, 3);
    EXPECT_EQ((*entries)[0].traddr, "127.0.0.1");
    EXPECT_EQ((*entries)[0].trsvcid, std::to_string(r.target->port()));
}

/// Write in the capsule (4 KiB) and through R2T (384 KiB: three commands of
/// 128 KiB), read back, and find the bytes in the backing file.
void round_trip(Host& h, std::uint32_t nsid, const std::filesystem::path& file, std::uint32_t bs) {
    const auto small = testing::random_bytes(4096, nsid);
    ASSERT_TRUE(h.write(nsid, 0, small)) << h.last_status();
    const auto big = testing::random_bytes(384 * 1024, nsid + 10);
    const std::uint64_t big_lba = 64 * 1024 / bs;
    auto w = h.write(nsid, big_lba, big);
    ASSERT_TRUE(w) << w.error().message();
    ASSERT_TRUE(h.flush(nsid));
    std::vector<std::byte> back(big.size());
    ASSERT_TRUE(h.read(nsid, big_lba, back));
    EXPECT_EQ(back, big);
    std::vector<std::byte> back_small(small.size());
    ASSERT_TRUE(h.read(nsid, 0, back_small));
    EXPECT_EQ(back_small, small);
    EXPECT_EQ(testing::file_bytes(file, 0, small.size()), small);
    EXPECT_EQ(testing::file_bytes(file, 64 * 1024, big.size()), big);
}

TEST(NvmfTargetHost, ReadsAndWritesFileAndPmNamespaces) {
    Running r;
    ASSERT_TRUE(r.target);
    auto h = Host::connect(testing::host_options(r.target->port()));
    ASSERT_TRUE(h) << h.error().message();
    round_trip(*h, 1, r.dir.path() / "disk", 512);
    round_trip(*h, 2, r.dir.path() / "pm", 4096);
    const auto s = r.target->stats();
    EXPECT_EQ(s.controllers, 1u);
    EXPECT_GE(s.offloaded_commands + s.io_commands, 16u);
    EXPECT_EQ(s.errors, 0u);
}

TEST(NvmfTargetHost, DigestsOnBothDirections) {
    Running r;
    ASSERT_TRUE(r.target);
    auto o = testing::host_options(r.target->port());
    o.header_digest = o.data_digest = true;
    auto h = Host::connect(o);
    ASSERT_TRUE(h) << h.error().message();
    round_trip(*h, 1, r.dir.path() / "disk", 512);
    EXPECT_EQ(r.target->stats().digest_errors, 0u);
}

TEST(NvmfTargetHost, RefusedDigestFailsTheHandshakeCleanly) {
    TempDir dir;
    auto o = testing::options(dir);
    o.allow_data_digest = false;
    auto t = Target::start(o);
    ASSERT_TRUE(t);
    auto ho = testing::host_options(t->port());
    ho.data_digest = true;
    auto h = Host::connect(ho);
    ASSERT_FALSE(h);
    EXPECT_EQ(h.error(), errc::protocol_error);
}

TEST(NvmfTargetHost, WriteZeroesAndFlush) {
    Running r;
    ASSERT_TRUE(r.target);
    auto h = Host::connect(testing::host_options(r.target->port()));
    ASSERT_TRUE(h);
    const auto data = testing::random_bytes(8192, 3);
    ASSERT_TRUE(h->write(1, 16, data));
    ASSERT_TRUE(h->write_zeroes(1, 17, 4));
    ASSERT_TRUE(h->flush(1));
    std::vector<std::byte> back(8192);
    ASSERT_TRUE(h->read(1, 16, back));
    auto expect = data;
    std::fill(expect.begin() + 512, expect.begin() + 512 * 5, std::byte{0});
    EXPECT_EQ(back, expect);
}

TEST(NvmfTargetHost, TwoHostsAtOnce) {
    Running r;
    ASSERT_TRUE(r.target);
    auto a = Host::connect(testing::host_options(r.target->port()));
    auto b = Host::connect(testing::host_options(r.target->port()));
    ASSERT_TRUE(a && b);
    EXPECT_NE(a->controller().cntlid, b->controller().cntlid);
    const auto da = testing::random_bytes(4096, 5), db = testing::random_bytes(4096, 6);
    ASSERT_TRUE(a->write(1, 0, da));
    ASSERT_TRUE(b->write(1, 8, db));
    std::vector<std::byte> back(4096);
    ASSERT_TRUE(b->read(1, 0, back));
    EXPECT_EQ(back, da);
}

/// A call a moved-from Host must refuse: errc::invalid_argument, the
/// detail naming the call, so a caller's log says what was misused.
template <class T>
void expect_moved_from_host_refusal(const Result<T>& r, const std::string& call) {
    ASSERT_FALSE(r) << call << " succeeded on a moved-from Host";
    EXPECT_EQ(r.error(), errc::invalid_argument) << r.error().message();
    EXPECT_EQ(r.error().detail(), call + " on a moved-from nvmf::Host");
}

/// Commands the target has served, admin and I/O.
std::uint64_t commands_served(const Target& t) {
    const auto s = t.stats();
    return s.admin_commands + s.io_commands + s.offloaded_commands;
}

/// Every public call on `gone` (moved from), as nvmf.hpp documents it;
/// none may reach the target.
void expect_moved_from_host(Host& gone, const Target& target) {
    const auto served = commands_served(target);
    const ControllerInfo& c = gone.controller();
    EXPECT_EQ(&c, &gone.controller()) << "the same static default each time";
    EXPECT_EQ(c.cntlid, 0u);
    EXPECT_TRUE(c.subnqn.empty());
    EXPECT_EQ(c.max_transfer, 0u);
    EXPECT_EQ(c.namespaces, 0u);
    EXPECT_EQ(gone.last_status(), 0u);
    expect_moved_from_host_refusal(gone.active_namespaces(), "active_namespaces");
    expect_moved_from_host_refusal(gone.identify(1), "identify");
    std::vector<std::byte> block(512);
    expect_moved_from_host_refusal(gone.read(1, 0, block), "read");
    expect_moved_from_host_refusal(gone.write(1, 0, block), "write");
    expect_moved_from_host_refusal(gone.flush(1), "flush");
    expect_moved_from_host_refusal(gone.write_zeroes(1, 0, 1), "write_zeroes");
    // The moved-from check comes before the arguments' (blocks 0, qid 2).
    expect_moved_from_host_refusal(gone.write_zeroes(1, 0, 0), "write_zeroes");
    expect_moved_from_host_refusal(gone.keep_alive(), "keep_alive");
    wire::Sqe s;
    s.set_opcode(wire::admin::keep_alive);
    const std::span<const std::uint8_t, 64> sqe(s.b.data(), 64);
    expect_moved_from_host_refusal(gone.raw(0, sqe, {}, {}), "raw");
    expect_moved_from_host_refusal(gone.raw(2, sqe, {}, {}), "raw");
    EXPECT_EQ(commands_served(target), served) << "a moved-from Host sent a command";
}

TEST(NvmfTargetHost, AMovedFromHostRefusesEveryCallWithoutCrashing) {
    Running r;
    ASSERT_TRUE(r.target);
    auto o = testing::host_options(r.target->port());
    o.kato_ms = 0;  // no keep-alive thread: the target's command count holds still
    auto h = Host::connect(o);
    ASSERT_TRUE(h) << h.error().message();
    const auto cntlid = h->controller().cntlid;

    Host a(std::move(*h));
    {
        SCOPED_TRACE("move-constructed from");
        expect_moved_from_host(*h, *r.target);  // NOLINT(bugprone-use-after-move): the point
    }
    // The connection went along.
    EXPECT_EQ(a.controller().cntlid, cntlid);
    EXPECT_EQ(a.controller().subnqn, testing::nqn);
    auto ids = a.active_namespaces();
    ASSERT_TRUE(ids) << ids.error().message();
    EXPECT_EQ(*ids, (std::vector<std::uint32_t>{1, 2}));

    auto other = Host::connect(o);
    ASSERT_TRUE(other) << other.error().message();
    Host b(std::move(*other));
    b = std::move(a);  // b's own connection is shut down; a's is now b's
    {
        SCOPED_TRACE("move-assigned from");
        expect_moved_from_host(a, *r.target);  // NOLINT(bugprone-use-after-move): the point
    }
    EXPECT_EQ(b.controller().cntlid, cntlid);
    const auto data = testing::random_bytes(4096, 7);
    ASSERT_TRUE(b.write(1, 0, data));
    std::vector<std::byte> back(data.size());
    ASSERT_TRUE(b.read(1, 0, back));
    EXPECT_EQ(back, data);

    // Assigning to a moved-from Host makes it whole again.
    a = std::move(b);
    EXPECT_EQ(a.controller().cntlid, cntlid);
    EXPECT_TRUE(a.keep_alive());
}

/// A moved-from Target, as nvmf.hpp documents it: nothing to report, and
/// stop() (twice) does nothing.
void expect_moved_from_target(Target& gone) {
    EXPECT_EQ(gone.port(), 0u);
    EXPECT_EQ(gone.stats().connections, 0u);
    EXPECT_EQ(gone.stats().controllers, 0u);
    EXPECT_EQ(gone.staging().bytes, 0u);
    EXPECT_TRUE(gone.staging().why.empty());
    EXPECT_TRUE(gone.namespaces().empty());
    gone.stop();
    gone.stop();
}

/// One write and read back through `h`: the target behind it serves.
void expect_serves(Host& h, unsigned seed) {
    const auto data = testing::random_bytes(4096, seed);
    ASSERT_TRUE(h.write(1, 0, data)) << h.last_status();
    std::vector<std::byte> back(data.size());
    ASSERT_TRUE(h.read(1, 0, back)) << h.last_status();
    EXPECT_EQ(back, data);
}

TEST(NvmfTargetHost, AMovedTargetKeepsServingItsMovedFromShellReportsNothing) {
    TempDir dir;
    auto t = Target::start(testing::options(dir));
    ASSERT_TRUE(t) << t.error().message();
    const auto port = t->port();
    auto ho = testing::host_options(port);
    ho.kato_ms = 0;  // no keep-alive thread: a closed connection shows at the next command
    auto before = Host::connect(ho);  // connected before the move: its queue is the Impl's
    ASSERT_TRUE(before) << before.error().message();

    Target moved(std::move(*t));
    {
        SCOPED_TRACE("move-constructed from");
        expect_moved_from_target(*t);  // NOLINT(bugprone-use-after-move): the point
    }
    EXPECT_EQ(moved.port(), port);
    EXPECT_EQ(moved.namespaces().size(), 2u);
    expect_serves(*before, 11);
    auto after = Host::connect(testing::host_options(moved.port()));
    ASSERT_TRUE(after) << after.error().message();
    expect_serves(*after, 12);
    EXPECT_EQ(moved.stats().controllers, 2u);

    // Move assignment stops the target `other` held before taking this one.
    TempDir dir2;
    auto other = Target::start(testing::options(dir2));
    ASSERT_TRUE(other) << other.error().message();
    auto ho2 = testing::host_options(other->port());
    ho2.kato_ms = 0;
    auto on_other = Host::connect(ho2);
    ASSERT_TRUE(on_other) << on_other.error().message();
    *other = std::move(moved);
    {
        SCOPED_TRACE("move-assigned from");
        expect_moved_from_target(moved);  // NOLINT(bugprone-use-after-move): the point
    }
    EXPECT_FALSE(on_other->flush(1)) << "the target assigned over was not stopped";
    EXPECT_EQ(other->port(), port);
    expect_serves(*before, 13);

    // Assigning to a moved-from Target makes it whole again.
    moved = std::move(*other);
    EXPECT_EQ(moved.port(), port);
    expect_serves(*after, 14);
}

} // namespace
} // namespace rpm::nvmf
