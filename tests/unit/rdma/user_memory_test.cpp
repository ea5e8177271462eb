// Zero-copy from registered application memory (ClientConn::register_memory,
// the transport under Connection::register_memory): writes and reads whose
// span lies inside a registration are posted on its MR, at the span's
// offset, with no bounce entry; the registration lasts while the handle or
// an operation on it does.
#include "support.hpp"

namespace rpm::rdma::test {
namespace {

class UserMemoryTest : public ::testing::Test {
protected:
    void SetUp() override {
        h_.listen();
        t_ = h_.connect_ok();
        g_ = open(*t_, "raw");
    }
    // The registration the fake made for `mem`.
    const LocalMr* mr_of(std::span<std::byte> mem) {
        std::lock_guard lock(h_.fabric.mu_);
        for (const auto& [id, mr] : h_.fabric.mrs_)
            if (mr->ptr == mem.data() && mr->size == mem.size()) return mr;
        return nullptr;
    }
    // A write or read through the transport, waited for.
    std::error_code write(std::uint64_t at, std::span<const std::byte> data) {
        Waiter w;
        t_->write(g_, at, data, w.done());
        return w.get();
    }
    std::error_code read(std::uint64_t at, std::span<std::byte> out) {
        Waiter w;
        t_->read(g_, at, out, w.done());
        return w.get();
    }
    Harness h_{{{"raw", PersistenceDomain::cpu_cache}}};
    std::unique_ptr<client::Transport> t_;
    proto::RegionGrant g_;
};

TEST_F(UserMemoryTest, AWriteFromRegisteredMemoryIsPostedOnItsMr) {
    std::vector<std::byte> app(1 << 16);
    auto reg = t_->register_memory(app);
    ASSERT_TRUE(reg) << reg.error().message();
    ASSERT_TRUE(*reg);
    const LocalMr* mr = mr_of(app);
    ASSERT_NE(mr, nullptr);
    EXPECT_EQ(mr->usage, kUsageWriteSrc | kUsageReadDst);
    const auto rec = bytes_of("straight from the application");
    std::copy(rec.begin(), rec.end(), app.begin() + 1000);
    ASSERT_FALSE(write(4096, std::span(app).subspan(1000, rec.size())));
    const auto writes = h_.fabric.writes();
    ASSERT_EQ(writes.size(), 1u);
    EXPECT_EQ(writes[0].src, mr) << "not posted on the application's registration";
    EXPECT_EQ(writes[0].src_offset, 1000u);
    EXPECT_EQ(writes[0].dst_offset, 4096u);
    EXPECT_EQ(writes[0].len, rec.size());
    EXPECT_EQ(writes[0].flags, kCompletionAlways);  // a lone write goes direct
    EXPECT_EQ(writes[0].ctx, direct_ctx());
    EXPECT_EQ(writes[0].data, rec);
    EXPECT_TRUE(std::equal(rec.begin(), rec.end(), h_.targets["raw"]->bytes().begin() + 4096));
}

TEST_F(UserMemoryTest, AReadIntoRegisteredMemoryLandsThereWithoutACopy) {
    auto& mem = h_.targets["raw"]->bytes();
    for (std::size_t i = 0; i < 256; ++i) mem[512 + i] = static_cast<std::byte>(i);
    std::vector<std::byte> app(4096);
    auto reg = t_->register_memory(app);
    ASSERT_TRUE(reg);
    ASSERT_FALSE(read(512, std::span(app).subspan(64, 256)));
    const auto reads = h_.fabric.reads();
    ASSERT_EQ(reads.size(), 1u);
    EXPECT_EQ(reads[0].dst, mr_of(app));
    EXPECT_EQ(reads[0].dst_offset, 64u);
    EXPECT_EQ(reads[0].src_offset, 512u);
    EXPECT_EQ(reads[0].len, 256u);
    EXPECT_TRUE(std::equal(app.begin() + 64, app.begin() + 320, mem.begin() + 512));
}

TEST_F(UserMemoryTest, ALargeRegisteredWriteIsOneWorkRequest) {
    std::vector<std::byte> app(3 * kMaxChunk + 17, std::byte{0x5a});
    auto reg = t_->register_memory(app);
    ASSERT_TRUE(reg);
    ASSERT_FALSE(write(0, app));
    const auto writes = h_.fabric.writes();
    ASSERT_EQ(writes.size(), 1u) << "a bounce entry's chunking applied to registered memory";
    EXPECT_EQ(writes[0].len, app.size());
}

TEST_F(UserMemoryTest, ASpanReachingPastTheRegistrationIsBounced) {
    std::vector<std::byte> app(8192);
    auto reg = t_->register_memory(std::span(app).first(4096));
    ASSERT_TRUE(reg);
    ASSERT_FALSE(write(0, std::span(app).subspan(4000, 200)));
    const auto writes = h_.fabric.writes();
    ASSERT_EQ(writes.size(), 1u);
    EXPECT_TRUE(is_bounce_entry(h_, writes[0].src));
    EXPECT_NE(writes[0].src->ptr, app.data());
    EXPECT_EQ(writes[0].src_offset, 0u);
}

TEST_F(UserMemoryTest, TheRegistrationEndsAfterTheHandleAndItsLastOperation) {
    std::vector<std::byte> app(4096);
    auto reg = t_->register_memory(app);
    ASSERT_TRUE(reg);
    ASSERT_NE(mr_of(app), nullptr);
    h_.fabric.hold_client_completions(true);
    Waiter w;
    t_->write(g_, 0, std::span(app).first(64), w.done());
    reg->reset();
    // The write in flight still uses the MR.
    EXPECT_NE(mr_of(app), nullptr) << "deregistered under a work request in flight";
    h_.fabric.hold_client_completions(false);
    h_.fabric.release_held();
    ASSERT_FALSE(w.get());
    EXPECT_TRUE(eventually([&] { return mr_of(app) == nullptr; })) << "never deregistered";
    // Without a registration the same span goes through a bounce entry.
    ASSERT_FALSE(write(0, std::span(app).first(64)));
    EXPECT_TRUE(is_bounce_entry(h_, h_.fabric.writes().back().src));
    EXPECT_NE(h_.fabric.writes().back().src->ptr, app.data());
}

TEST_F(UserMemoryTest, BadRegistrationsAreRefused) {
    EXPECT_EQ(t_->register_memory({}).error().code(), errc::invalid_argument);
    std::vector<std::byte> app(4096);
    h_.fabric.fail_next("rpma_mr_reg", kErrProvider);
    auto r = t_->register_memory(app);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), errc::io_error);
    EXPECT_NE(r.error().detail().find("mr_reg failed"), std::string::npos) << r.error().detail();
    t_->close();
    EXPECT_EQ(t_->register_memory(app).error().code(), errc::io_error);
}

} // namespace
} // namespace rpm::rdma::test
