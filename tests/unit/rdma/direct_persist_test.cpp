// A persist of one slice on an idle connection goes direct
// (client_direct.cpp): its write, unsignaled, and its flush
// (read_after_write's 8-byte read, signaled; send_flush's Flush frame,
// unsignaled but one in every few), under one doorbell, outside the op
// queue. The work requests field by field; that the callback
// waits for the flush's completion and, for send_flush, the server's
// Response after its persist step; the server's error; a connection lost
// under it; what still queues. Every completion mode.
#include "support.hpp"

#include <algorithm>
#include <atomic>
#include <thread>

namespace rpm::rdma::test {
namespace {

constexpr int kChainedUnsignaled = kCompletionOnError | kDeferDoorbell;
constexpr int kChainedSignaled = kCompletionAlways | kDeferDoorbell;

const void* direct_write_ctx() { return reinterpret_cast<const void*>(kDirectWriteTag); }

// The calls from the last write on, up to the doorbell after it.
std::vector<std::string> last_chain(const std::vector<std::string>& calls) {
    auto it = std::find(calls.rbegin(), calls.rend(), "rpma_write");
    std::vector<std::string> chain;
    if (it == calls.rend()) return chain;
    for (auto f = std::prev(it.base()); f != calls.end() && *f != "ring"; ++f) chain.push_back(*f);
    return chain;
}

// The client's sends (not the server's replies).
std::vector<fake::SendCall> client_sends(const Harness& h) {
    std::vector<fake::SendCall> out;
    for (auto& s : h.fabric.sends())
        if (!s.passive) out.push_back(std::move(s));
    return out;
}

class DirectPersist : public ModeTest {
protected:
    void SetUp() override {
        ModeTest::SetUp();
        ASSERT_TRUE(eventually([&] { return client_pools(*h_)->bounce().stats().free_global > 0; }));
        adr_target_ = h_->targets["adr"];
    }
    Result<void> persist_result(const proto::RegionGrant& g, std::uint64_t at, std::span<const std::byte> data) {
        Waiter w;
        const proto::Slice s{at, data};
        t_->persist(g, std::span(&s, 1), w.done());
        return w.result();
    }
    /// persist_result's code: {} for success.
    std::error_code persist(const proto::RegionGrant& g, std::uint64_t at, std::span<const std::byte> data) {
        return code_of(persist_result(g, at, data));
    }
    std::uint32_t bounce_in_use() const { return client_pools(*h_)->bounce().stats().in_use; }
    MemTarget* adr_target_ = nullptr;
};

TEST_P(DirectPersist, ReadAfterWriteIsTheWriteAndTheReadUnderOneDoorbell) {
    const auto rec = bytes_of("a direct record");
    ASSERT_FALSE(persist(g_, 512, rec));
    const auto w = h_->fabric.writes().back();
    EXPECT_EQ(w.ctx, direct_write_ctx()) << "the persist's write went through the op queue";
    EXPECT_EQ(w.flags, kChainedUnsignaled);
    EXPECT_EQ(w.dst_offset, 512u);
    EXPECT_EQ(w.len, rec.size());
    EXPECT_EQ(w.src_offset, 0u);
    EXPECT_TRUE(is_bounce_entry(*h_, w.src));
    EXPECT_EQ(w.data, rec);
    const auto f = h_->fabric.flushes().back();
    EXPECT_EQ(f.ctx, direct_ctx());
    EXPECT_EQ(f.flags, kChainedSignaled);
    EXPECT_EQ(f.type, kFlushPersistent);
    EXPECT_EQ(f.dst, w.dst);
    EXPECT_EQ(f.dst_offset, 512u);
    EXPECT_EQ(f.len, rec.size());
    EXPECT_EQ(last_chain(h_->fabric.calls()), (std::vector<std::string>{"rpma_write", "rpma_flush"}));
    EXPECT_TRUE(std::equal(rec.begin(), rec.end(), remote_->bytes().begin() + 512));
    EXPECT_EQ(bounce_in_use(), 0u) << "the entry was not given back";
}

// The callback is the word that the bytes are durable: not before the
// flush's read completed.
TEST_P(DirectPersist, ReadAfterWriteCallsBackOnlyAfterTheFlushCompleted) {
    h_->fabric.hold_client_completions(true);
    Waiter w;
    const auto rec = bytes_of("held");
    const proto::Slice s{64, rec};
    t_->persist(g_, std::span(&s, 1), w.done());
    ASSERT_TRUE(eventually([&] { return !h_->fabric.flushes().empty(); }));
    EXPECT_EQ(w.get(100ms), std::make_error_code(std::errc::timed_out)) << "called back before the flush completed";
    h_->fabric.hold_client_completions(false);
    h_->fabric.release_held();
    EXPECT_FALSE(w.get());
}

TEST_P(DirectPersist, SendFlushIsTheWriteAndTheFlushFrameUnderOneDoorbell) {
    const auto rec = bytes_of("a send_flush record");
    const auto sends_before = client_sends(*h_).size();
    ASSERT_FALSE(persist(adr_, 4096, rec));
    const auto w = h_->fabric.writes().back();
    EXPECT_EQ(w.ctx, direct_write_ctx());
    EXPECT_EQ(w.flags, kChainedUnsignaled);
    EXPECT_EQ(w.dst_offset, 4096u);
    EXPECT_EQ(w.data, rec);
    const auto sends = client_sends(*h_);
    ASSERT_EQ(sends.size(), sends_before + 1);
    const auto& s = sends.back();
    EXPECT_EQ(s.ctx, direct_ctx());
    // Unsignaled: the Response finishes it (PersistChain.RequestSendsAreSignaledOneInSignalEvery).
    EXPECT_EQ(s.flags, kChainedUnsignaled);
    auto frame = parse_frame(s.bytes, kSlotSize);
    ASSERT_TRUE(frame);
    EXPECT_EQ(frame->first.type, proto::Type::flush);
    auto flush = proto::decode_flush(frame->second);
    ASSERT_TRUE(flush) << flush.error().message();
    EXPECT_EQ(flush->region, adr_.id);
    ASSERT_EQ(flush->ranges.size(), 1u);
    EXPECT_EQ(flush->ranges[0].offset, 4096u);
    EXPECT_EQ(flush->ranges[0].length, rec.size());
    const auto chain = last_chain(h_->fabric.calls());
    ASSERT_GE(chain.size(), 2u);
    EXPECT_EQ(chain[0], "rpma_write");
    EXPECT_EQ(chain[1], "rpma_send");
    // The server persisted exactly the range before it answered.
    const auto persists = adr_target_->persists();
    ASSERT_FALSE(persists.empty());
    ASSERT_EQ(persists.back().ranges.size(), 1u);
    EXPECT_EQ(persists.back().ranges[0].offset, 4096u);
    EXPECT_EQ(persists.back().ranges[0].length, rec.size());
    EXPECT_TRUE(std::equal(rec.begin(), rec.end(), adr_target_->bytes().begin() + 4096));
    EXPECT_EQ(bounce_in_use(), 0u);
}

// The send's completion says only that the frame left: the callback waits
// for the server's Response, which comes after its persist step.
TEST_P(DirectPersist, SendFlushCallsBackOnlyAfterTheServersPersist) {
    adr_target_->hold_persists(true);
    Waiter w;
    const auto rec = bytes_of("not yet");
    const proto::Slice s{128, rec};
    const auto sends_before = client_sends(*h_).size();
    t_->persist(adr_, std::span(&s, 1), w.done());
    ASSERT_TRUE(eventually([&] { return client_sends(*h_).size() > sends_before; }));
    EXPECT_EQ(w.get(150ms), std::make_error_code(std::errc::timed_out))
        << "called back before the server's persist step";
    adr_target_->hold_persists(false);
    EXPECT_FALSE(w.get());
    EXPECT_EQ(adr_target_->persists().size(), 1u);
}

TEST_P(DirectPersist, TheServersFailedPersistFailsThePersistNotTheConnection) {
    adr_target_->fail_persist_ = true;
    const auto r = persist_result(adr_, 0, bytes_of("refused"));
    const auto ec = code_of(r);
    EXPECT_TRUE(ec) << "a failed persist step was reported durable";
    EXPECT_NE(ec, std::make_error_code(std::errc::timed_out));
    // The server's answer, not the connection's failure.
    EXPECT_TRUE(detail_has(r, "refused by the server"));
    EXPECT_TRUE(detail_lacks(r, "the connection failed"));
    adr_target_->fail_persist_ = false;
    EXPECT_FALSE(persist(adr_, 0, bytes_of("accepted")));
}

// Lost while the server holds its persist: the persist fails at once, and
// the entry stays out of the pool until the queue pair is gone.
TEST_P(DirectPersist, AConnectionLostUnderItFailsIt) {
    adr_target_->hold_persists(true);
    h_->fabric.hold_client_completions(true);  // the write may still be on the wire
    Waiter w;
    const auto rec = bytes_of("lost");
    const proto::Slice s{0, rec};
    const auto sends_before = client_sends(*h_).size();
    t_->persist(adr_, std::span(&s, 1), w.done());
    ASSERT_TRUE(eventually([&] { return client_sends(*h_).size() > sends_before; }));
    h_->fabric.drop_all();
    EXPECT_EQ(w.get(20s), errc::io_error);
    EXPECT_TRUE(detail_has(w.result(), "the connection failed"));
    adr_target_->hold_persists(false);
    h_->fabric.hold_client_completions(false);
    EXPECT_EQ(bounce_in_use(), 1u) << "the entry of a write still on the wire went back to the pool";
    const auto pools = client_pools(*h_);
    t_.reset();
    EXPECT_EQ(pools->bounce().stats().in_use, 0u) << "the entry was not given back with the queue pair";
}

// The send goes unsignaled, but a failed one still completes (with its
// error): the queue pair is in error, so the persist and the connection
// fail, even though the server had the frame and answers.
TEST_P(DirectPersist, AFailedUnsignaledSendFailsThePersistAndTheConnection) {
    h_->fabric.fail_wc_next("send", IBV_WC_RETRY_EXC_ERR);
    EXPECT_EQ(persist(adr_, 0, bytes_of("sent, not acknowledged")), errc::io_error);
    EXPECT_EQ(persist(adr_, 0, bytes_of("after")), errc::io_error);
}

// A failed post of the write: nothing was posted, the persist fails, the
// connection stays.
TEST_P(DirectPersist, AWriteThatCannotBePostedFailsOnlyThePersist) {
    h_->fabric.fail_next("rpma_write", kErrInval);
    EXPECT_EQ(persist(adr_, 0, bytes_of("x")), errc::invalid_argument);
    EXPECT_EQ(bounce_in_use(), 0u);
    EXPECT_FALSE(persist(adr_, 0, bytes_of("y")));
}

// Several slices, and a persist behind one on the wire, go through the queue.
TEST_P(DirectPersist, SeveralSlicesOrABusyConnectionQueue) {
    const auto a = bytes_of("first"), b = bytes_of("second");
    const std::vector<proto::Slice> two{{0, a}, {256, b}};
    Waiter w;
    t_->persist(adr_, two, w.done());
    ASSERT_FALSE(w.get());
    for (const auto& wr : h_->fabric.writes()) EXPECT_NE(wr.ctx, direct_write_ctx());
    {
        DirectHeld held(*h_, *t_, g_);
        Waiter q;
        const proto::Slice s{512, a};
        t_->persist(adr_, std::span(&s, 1), q.done());
        ASSERT_TRUE(eventually([&] { return h_->fabric.writes().size() == 3; }));
        EXPECT_FALSE(held.release());
        EXPECT_FALSE(q.get());
    }
    EXPECT_NE(h_->fabric.writes().back().ctx, direct_write_ctx()) << "a persist behind a direct read went direct";
    EXPECT_TRUE(std::equal(a.begin(), a.end(), adr_target_->bytes().begin() + 512));
}

INSTANTIATE_TEST_SUITE_P(Modes, DirectPersist,
                         ::testing::Values(CompletionMode::busy, CompletionMode::adaptive, CompletionMode::event),
                         [](const ::testing::TestParamInfo<CompletionMode>& p) { return std::string(to_string(p.param)); });

} // namespace
} // namespace rpm::rdma::test
