// rpm's NVMe/TCP target and host together over 127.0.0.1: the connect
// sequence, discovery, I/O in the capsule and through R2T, digests, PM and
// file namespaces, and the data found in the backing files.
#include "target_support.hpp"

namespace rpm::nvmf {
namespace {

using testing::TempDir;

struct Running {
    TempDir dir;
    std::unique_ptr<Target> target;
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
    auto ho = testing::host_options((*t)->port());
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

} // namespace
} // namespace rpm::nvmf
