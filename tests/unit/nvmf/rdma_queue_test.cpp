// One NVMe/RDMA queue pair on the target (src/nvmf/rdma/queue.cpp,
// queue_data.cpp) over fake verbs (rdma_fake_verbs.hpp): the test plays
// the host's NIC, delivering capsules into the shared receive queue and
// answering the queue's RDMA READs, and checks every work request the
// queue posts field by field, as the host would see it on the wire. The
// commands run on a registry of real controllers (controller_fixture.hpp).
#include "controller_fixture.hpp"
#include "rdma_fake_verbs.hpp"

#include "nvmf/rdma/port.hpp"
#include "nvmf/rdma/queue.hpp"
#include "nvmf/rdma_wire.hpp"
#include "nvmf/controller/state.hpp"

#include <arpa/inet.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <future>
#include <memory>
#include <span>
#include <thread>
#include <vector>

namespace rpm::nvmf::target::test {
namespace {

using namespace std::chrono_literals;

constexpr std::uint32_t pool_entries = 8;
/// An SQE and the 8 KiB of in-capsule data an admin queue takes.
constexpr std::uint32_t capsule_len = wire::sqe_len + 8192;
constexpr unsigned inline_signaled = IBV_SEND_INLINE | IBV_SEND_SIGNALED;

/// A capsule whose SGL is a keyed data block (`type` 0x40 or 0x4F): host
/// memory at `addr`, `len` bytes (three of them on the wire), key `key`.
std::vector<std::uint8_t> keyed_capsule(wire::Sqe s, std::uint8_t type, std::uint64_t addr, std::uint32_t len,
                                        std::uint32_t key) {
    s.set_flags(wire::psdt_sgl);
    wire::put64(&s.b[24], addr);
    s.b[32] = std::uint8_t(len);
    s.b[33] = std::uint8_t(len >> 8);
    s.b[34] = std::uint8_t(len >> 16);
    wire::put32(&s.b[35], key);
    s.b[39] = type;
    return {s.b.begin(), s.b.end()};
}

/// A capsule whose SGL is an offset data block: `data` follows the SQE.
std::vector<std::uint8_t> offset_capsule(wire::Sqe s, std::span<const std::uint8_t> data = {}) {
    s.set_flags(wire::psdt_sgl);
    s.set_sgl(wire::sgl_incapsule, 0, std::uint32_t(data.size()));
    // Sized once and copied (GCC 12's -Warray-bounds misreads vector::insert here).
    std::vector<std::uint8_t> c(wire::sqe_len + data.size());
    std::memcpy(c.data(), s.b.data(), wire::sqe_len);
    if (!data.empty()) std::memcpy(c.data() + wire::sqe_len, data.data(), data.size());
    return c;
}

wire::Sqe with_cid(wire::Sqe s, std::uint16_t cid) {
    s.set_cid(cid);
    return s;
}

/// The response a SEND carried (its bytes as the device read them at posting).
wire::Cqe cqe_of(const SendWr& w) {
    wire::Cqe c;
    EXPECT_EQ(w.bytes.size(), wire::cqe_len);
    std::memcpy(c.b.data(), w.bytes.data(), std::min(w.bytes.size(), c.b.size()));
    return c;
}

std::size_t count_opcode(const std::vector<PostSend>& sends, ibv_wr_opcode op) {
    std::size_t n = 0;
    for (const auto& p : sends)
        for (const auto& w : p.chain) n += w.opcode == op;
    return n;
}

class RdmaQueueTest : public ControllerTest {
protected:
    RdmaQueueTest() {
        auto p = CapsulePool::make(fake.table(), fake.context(), pool_entries, capsule_len);
        if (p) pool = *p;
        else ADD_FAILURE() << "CapsulePool::make failed";
        id.verbs = fake.context();
        id.route.addr.dst_sin.sin_family = AF_INET;
        ::inet_pton(AF_INET, "192.0.2.7", &id.route.addr.dst_sin.sin_addr);
        env.v = &fake.table();
        env.queue = QueueEnv{registry.get(), &stats};
    }

    void TearDown() override {
        queue.reset();
        pool.reset();
        EXPECT_EQ(fake.live(), 0u) << "verbs objects left alive";
        for (const auto& v : fake.violations()) ADD_FAILURE() << "verbs misuse: " << v;
    }

    /// The queue of a connection request for queue `qid` of hsqsize `hsqsize`.
    RdmaQueue& open(std::uint16_t qid = 0, std::uint16_t hsqsize = 31) {
        queue = std::make_unique<RdmaQueue>(env, &id, pool,
                                            rdma_wire::CmRequest{qid, std::uint16_t(hsqsize + 1), hsqsize, 0xFFFF});
        EXPECT_TRUE(queue->ok()) << queue->error();
        return *queue;
    }

    /// Serve one capsule and let the device finish what the queue sent.
    /// RETURN VALUE: the response the last post carried.
    wire::Cqe run(const std::vector<std::uint8_t>& capsule) {
        fake.deliver(capsule);
        EXPECT_TRUE(queue->serve());
        const auto sends = fake.sends();
        if (sends.empty()) {
            ADD_FAILURE() << "no response posted";
            return {};
        }
        const auto cqe = cqe_of(sends.back().chain.back());
        fake.complete_sends();
        return cqe;
    }

    /// An admin queue connected (Connect data in the capsule) and enabled.
    void connect_and_enable() {
        open();
        const auto data = connect_data(nvm_nqn, host_a);
        ASSERT_EQ(run(offset_capsule(with_cid(connect_sqe(0, 31), 1), data)).status(), wire::sc::success);
        ASSERT_EQ(run(offset_capsule(with_cid(prop_set(wire::prop::cc, cc_enable), 2))).status(), wire::sc::success);
        ASSERT_TRUE(queue->controller() && queue->controller()->ready());
    }

    FakeVerbs fake;  // first: it outlives the pool and the queue
    SharedStats stats;
    std::shared_ptr<CapsulePool> pool;
    rdma_cm_id id{};
    RdmaEnv env;
    std::unique_ptr<RdmaQueue> queue;
};

// ---- 1. construction ------------------------------------------------------------------

TEST_F(RdmaQueueTest, ThePoolPostsEveryBufferToTheSrqWithItsMr) {
    const auto posts = fake.srq_posts();
    ASSERT_EQ(posts.size(), pool_entries);
    ASSERT_EQ(posts[0].sge.size(), 1u);
    const auto* mr = fake.mr_of(posts[0].sge[0].lkey);
    ASSERT_NE(mr, nullptr);
    EXPECT_EQ(mr->pd, pool->pd());
    EXPECT_EQ(mr->length, std::size_t(pool_entries) * capsule_len);  // 8256: already a multiple of 64
    for (std::uint32_t i = 0; i < pool_entries; ++i) {
        SCOPED_TRACE(i);
        EXPECT_EQ(posts[i].wr_id, i);
        EXPECT_EQ(posts[i].num_sge, 1);
        ASSERT_EQ(posts[i].sge.size(), 1u);
        EXPECT_EQ(posts[i].sge[0].length, capsule_len);
        EXPECT_EQ(posts[i].sge[0].lkey, mr->lkey);
        EXPECT_EQ(posts[i].sge[0].addr, reinterpret_cast<std::uintptr_t>(mr->addr) + std::uint64_t(i) * capsule_len);
        // capsule(slot) is the buffer the device fills.
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(pool->capsule(i, 64).data()), posts[i].sge[0].addr);
    }
}

TEST_F(RdmaQueueTest, TheQueuePairIsAnRcQpOnThePoolsSrqSizedForTheQueue) {
    auto& q = open(0, 31);  // the Linux host's admin queue: 32 entries
    ASSERT_EQ(fake.qp_attrs().size(), 1u);
    const auto a = fake.qp_attrs()[0];
    EXPECT_EQ(a.qp_type, IBV_QPT_RC);
    EXPECT_EQ(a.srq, pool->srq());
    EXPECT_EQ(a.pd, pool->pd());
    EXPECT_TRUE(a.comp_mask & IBV_QP_INIT_ATTR_PD);
    // A READ or a WRITE + SEND per command, earlier responses in flight: two per entry, and two.
    EXPECT_EQ(a.cap.max_send_wr, 2u * 32 + 2);
    EXPECT_GE(a.cap.max_inline_data, wire::cqe_len);  // responses go inline
    EXPECT_EQ(a.cap.max_send_sge, 1u);
    ASSERT_NE(a.send_cq, nullptr);
    EXPECT_EQ(a.send_cq, a.recv_cq);  // one CQ: the queue polls one thing
    EXPECT_NE(id.qp, nullptr);
    EXPECT_GE(q.fd(), 0);
    EXPECT_EQ(q.peer(), "192.0.2.7");
    EXPECT_FALSE(q.set_up());
    EXPECT_TRUE(fake.sends().empty());
    EXPECT_TRUE(fake.disconnects().empty());
    EXPECT_EQ(fake.srq_posted(), pool_entries);  // a queue takes nothing from the SRQ itself
    queue.reset();
    EXPECT_EQ(id.qp, nullptr);
    EXPECT_EQ(fake.destroyed_ids(), std::vector<rdma_cm_id*>{&id});

    // An I/O queue of 128 entries.
    open(1, 127);
    EXPECT_EQ(fake.qp_attrs().back().cap.max_send_wr, 2u * 128 + 2);
    // Rejected by the port: the queue pair goes, the cm id is the port's.
    queue->release_id();
    EXPECT_EQ(id.qp, nullptr);
    queue.reset();
    EXPECT_EQ(fake.destroyed_ids().size(), 1u);
}

// ---- 2. host-to-controller data by RDMA READ ------------------------------------------

TEST_F(RdmaQueueTest, AKeyedConnectIsReadFromTheHostAndAnsweredWithSendWithInvalidate) {
    constexpr std::uint64_t host_addr = 0x00007F0012345000;
    constexpr std::uint32_t host_key = 0xCAFEF00D;
    const auto data = connect_data(nvm_nqn, host_a);
    // The host's NIC: the READ's bytes land in the target's buffer, then it completes.
    fake.on_send = [&](const PostSend& p) {
        const auto& w = p.chain.front();
        if (w.opcode != IBV_WR_RDMA_READ) return;
        std::memcpy(reinterpret_cast<void*>(w.sge.at(0).addr), data.data(), std::min<std::size_t>(w.sge[0].length, data.size()));
        fake.complete_sends();
    };
    open();
    const auto before = fake.next_seq();
    const auto slot = fake.deliver(keyed_capsule(with_cid(connect_sqe(0, 31), 0x21), rdma_wire::sgl_keyed_invalidate,
                                                 host_addr, wire::connect_data_len, host_key));
    ASSERT_TRUE(queue->serve());

    const auto sends = fake.sends();
    ASSERT_EQ(sends.size(), 2u);
    ASSERT_EQ(sends[0].chain.size(), 1u);
    const auto& read = sends[0].chain[0];
    EXPECT_EQ(read.opcode, IBV_WR_RDMA_READ);
    EXPECT_EQ(read.send_flags, unsigned(IBV_SEND_SIGNALED));
    EXPECT_EQ(read.remote_addr, host_addr);
    EXPECT_EQ(read.rkey, host_key);
    EXPECT_EQ(read.num_sge, 1);
    ASSERT_EQ(read.sge.size(), 1u);
    EXPECT_EQ(read.sge[0].length, wire::connect_data_len);
    const auto* mr = fake.mr_of(read.sge[0].lkey);
    ASSERT_NE(mr, nullptr);
    EXPECT_EQ(mr->pd, pool->pd());

    ASSERT_EQ(sends[1].chain.size(), 1u);  // no data for the host: the SEND alone
    const auto& send = sends[1].chain[0];
    EXPECT_EQ(send.opcode, IBV_WR_SEND_WITH_INV);
    EXPECT_EQ(send.invalidate_rkey, host_key);
    EXPECT_EQ(send.send_flags, inline_signaled);
    ASSERT_EQ(send.sge.size(), 1u);
    EXPECT_EQ(send.sge[0].length, wire::cqe_len);
    const auto cqe = cqe_of(send);
    EXPECT_EQ(cqe.cid(), 0x21);
    EXPECT_EQ(cqe.status(), wire::sc::success);
    EXPECT_EQ(cqe.sq_id(), 0);
    EXPECT_EQ(cqe.sq_head(), 1);
    ASSERT_TRUE(queue->set_up());
    ASSERT_NE(queue->controller(), nullptr);
    EXPECT_EQ(cqe.dw0() & 0xFFFF, queue->controller()->cntlid());

    // The capsule's buffer went back once, after its command had answered.
    const auto posts = fake.srq_posts();
    std::size_t reposts = 0;
    for (const auto& r : posts)
        if (r.seq >= before && r.wr_id == slot) {
            ++reposts;
            EXPECT_GT(r.seq, sends[1].seq);
        }
    EXPECT_EQ(reposts, 1u);
    EXPECT_TRUE(queue->serve());  // takes the SEND's completion
    EXPECT_TRUE(fake.disconnects().empty());
}

// ---- 3. controller-to-host data by RDMA WRITE -----------------------------------------

TEST_F(RdmaQueueTest, IdentifyDataGoesOutByAWriteChainedBeforeAPlainSend) {
    connect_and_enable();
    constexpr std::uint64_t host_addr = 0x0000600000001000;
    constexpr std::uint32_t host_key = 0x00012300;
    const auto first = fake.sends().size();
    fake.deliver(keyed_capsule(with_cid(identify_sqe(1), 9), rdma_wire::sgl_keyed, host_addr, 4096, host_key));
    ASSERT_TRUE(queue->serve());
    const auto sends = fake.sends();
    ASSERT_EQ(sends.size(), first + 1);  // one post: one doorbell for both
    const auto& chain = sends.back().chain;
    ASSERT_EQ(chain.size(), 2u);
    const auto& write = chain[0];
    EXPECT_EQ(write.opcode, IBV_WR_RDMA_WRITE);
    EXPECT_EQ(write.send_flags, 0u);  // the SEND's completion covers it
    EXPECT_EQ(write.remote_addr, host_addr);
    EXPECT_EQ(write.rkey, host_key);
    ASSERT_EQ(write.sge.size(), 1u);
    EXPECT_EQ(write.sge[0].length, 4096u);
    EXPECT_NE(fake.mr_of(write.sge[0].lkey), nullptr);
    ASSERT_EQ(write.bytes.size(), 4096u);
    EXPECT_EQ(text(write.bytes, 768, std::strlen(nvm_nqn)), nvm_nqn);  // SUBNQN
    EXPECT_EQ(wire::get16(&write.bytes[78]), queue->controller()->cntlid());  // CNTLID

    const auto& send = chain[1];
    EXPECT_EQ(send.opcode, IBV_WR_SEND);  // 0x40: the host did not ask for invalidation
    EXPECT_EQ(send.invalidate_rkey, 0u);
    EXPECT_EQ(send.send_flags, inline_signaled);
    EXPECT_EQ(cqe_of(send).cid(), 9);
    EXPECT_EQ(cqe_of(send).status(), wire::sc::success);
    EXPECT_EQ(count_opcode(sends, IBV_WR_RDMA_READ), 0u);

    // The WRITE's buffer is free again once the SEND completed: the next
    // Identify goes out, from the same registered memory.
    fake.complete_sends();
    fake.deliver(keyed_capsule(with_cid(identify_sqe(1), 10), rdma_wire::sgl_keyed, host_addr + 4096, 4096, host_key + 1));
    ASSERT_TRUE(queue->serve());
    const auto again = fake.sends().back().chain;
    ASSERT_EQ(again.size(), 2u);
    EXPECT_EQ(again[0].remote_addr, host_addr + 4096);
    EXPECT_EQ(again[0].sge[0].lkey, write.sge[0].lkey);
    EXPECT_EQ(cqe_of(again[1]).cid(), 10);
}

// Capsules that arrived together are answered in order without waiting
// for each other's SENDs: each response's data has its own place in the
// registered buffer, and the WRITE of each names its own command's SGL.
TEST_F(RdmaQueueTest, ARoundsResponsesTakeTheirOwnPlacesAndTheirOwnSgls) {
    connect_and_enable();
    constexpr std::uint64_t a = 0x0000700000000000, b = 0x0000710000000000;
    const auto first = fake.sends().size();
    fake.deliver(keyed_capsule(with_cid(identify_sqe(1), 21), rdma_wire::sgl_keyed, a, 4096, 0xA));
    fake.deliver(keyed_capsule(with_cid(identify_sqe(1), 22), rdma_wire::sgl_keyed_invalidate, b, 4096, 0xB));
    ASSERT_TRUE(queue->serve());  // no SEND completed in between
    const auto sends = fake.sends();
    ASSERT_EQ(sends.size(), first + 2);
    const auto& one = sends[first].chain;
    const auto& two = sends[first + 1].chain;
    ASSERT_EQ(one.size(), 2u);
    ASSERT_EQ(two.size(), 2u);
    EXPECT_EQ(one[0].remote_addr, a);
    EXPECT_EQ(one[0].rkey, 0xAu);
    EXPECT_EQ(one[1].opcode, IBV_WR_SEND);
    EXPECT_EQ(cqe_of(one[1]).cid(), 21);
    EXPECT_EQ(two[0].remote_addr, b);
    EXPECT_EQ(two[0].rkey, 0xBu);
    EXPECT_EQ(two[1].opcode, IBV_WR_SEND_WITH_INV);
    EXPECT_EQ(two[1].invalidate_rkey, 0xBu);
    EXPECT_EQ(cqe_of(two[1]).cid(), 22);
    EXPECT_NE(one[0].sge[0].addr, two[0].sge[0].addr);  // the first WRITE's bytes are not overwritten
    EXPECT_EQ(one[0].sge[0].lkey, two[0].sge[0].lkey);
    EXPECT_EQ(text(one[0].bytes, 768, std::strlen(nvm_nqn)), nvm_nqn);
    EXPECT_EQ(text(two[0].bytes, 768, std::strlen(nvm_nqn)), nvm_nqn);
}

TEST_F(RdmaQueueTest, TheWriteNeverExceedsTheHostsSglLength) {
    connect_and_enable();
    // 1 KiB of a 4 KiB Identify: the host's buffer is 1 KiB. The key's low
    // byte (0x0D) sits right after the 3-byte length in the SQE.
    fake.deliver(keyed_capsule(with_cid(identify_sqe(1), 11), rdma_wire::sgl_keyed, 0x10000, 1024, 0xCAFEF00D));
    ASSERT_TRUE(queue->serve());
    const auto chain = fake.sends().back().chain;
    ASSERT_EQ(chain.size(), 2u);
    EXPECT_EQ(chain[0].opcode, IBV_WR_RDMA_WRITE);
    EXPECT_EQ(chain[0].sge[0].length, 1024u);
    EXPECT_EQ(cqe_of(chain[1]).status(), wire::sc::success);
}

// ---- 4. in-capsule data ---------------------------------------------------------------

TEST_F(RdmaQueueTest, InCapsuleDataIsTakenFromTheCapsuleWithoutARead) {
    open();
    const auto data = connect_data(nvm_nqn, host_a);
    const auto slot = fake.deliver(offset_capsule(with_cid(connect_sqe(0, 31), 0x33), data));
    const auto before = fake.next_seq();
    ASSERT_TRUE(queue->serve());
    const auto sends = fake.sends();
    ASSERT_EQ(sends.size(), 1u);
    ASSERT_EQ(sends[0].chain.size(), 1u);
    EXPECT_EQ(sends[0].chain[0].opcode, IBV_WR_SEND);  // no key to invalidate
    EXPECT_EQ(sends[0].chain[0].send_flags, inline_signaled);
    EXPECT_EQ(cqe_of(sends[0].chain[0]).cid(), 0x33);
    EXPECT_EQ(cqe_of(sends[0].chain[0]).status(), wire::sc::success);
    EXPECT_TRUE(queue->set_up());  // the Connect read its data from the capsule
    EXPECT_EQ(count_opcode(sends, IBV_WR_RDMA_READ), 0u);
    EXPECT_EQ(fake.srq_posts_of(slot, before), 1u);
}

// The queue pair and its completion queue were sized by the request's
// HSQSIZE: a Connect asking for a deeper queue is refused, pointing at SQSIZE.
TEST_F(RdmaQueueTest, AConnectDeeperThanTheRequestsHsqsizeIsRefused) {
    open(0, 15);
    const auto data = connect_data(nvm_nqn, host_a);
    const auto deeper = run(offset_capsule(with_cid(connect_sqe(0, 31), 0x41), data));
    EXPECT_EQ(deeper.status(), wire::sc::connect_invalid_parameters);
    EXPECT_EQ(deeper.dw0(), std::uint32_t(connect_offset::sqsize));  // in the SQE, at SQSIZE
    EXPECT_FALSE(queue->set_up());
    EXPECT_EQ(run(offset_capsule(with_cid(connect_sqe(0, 15), 0x42), data)).status(), wire::sc::success);
    EXPECT_TRUE(queue->set_up());
}

// ---- 5. ending the queue --------------------------------------------------------------

TEST_F(RdmaQueueTest, AShortCapsuleEndsTheQueueAndEveryBufferGoesBack) {
    open();
    const auto before = fake.next_seq();
    const auto shorter = fake.deliver(std::vector<std::uint8_t>(40, 0xAB));
    const auto data = connect_data(nvm_nqn, host_a);
    const auto waiting1 = fake.deliver(offset_capsule(connect_sqe(0, 31), data));
    const auto waiting2 = fake.deliver(offset_capsule(connect_sqe(0, 31), data));
    EXPECT_EQ(fake.srq_posted(), pool_entries - 3);
    EXPECT_FALSE(queue->serve());
    EXPECT_TRUE(fake.sends().empty());  // nothing to answer: a short capsule has no cid
    for (auto slot : {shorter, waiting1, waiting2}) EXPECT_EQ(fake.srq_posts_of(slot, before), 1u) << slot;
    EXPECT_EQ(fake.srq_posted(), pool_entries);
    EXPECT_EQ(fake.disconnects(), std::vector<rdma_cm_id*>{&id});
    EXPECT_FALSE(queue->serve());  // ended for good
    EXPECT_EQ(fake.disconnects().size(), 1u);
}

TEST_F(RdmaQueueTest, AFailedReceiveEndsTheQueue) {
    open();
    const auto before = fake.next_seq();
    const auto good = fake.deliver(offset_capsule(connect_sqe(0, 31), connect_data(nvm_nqn, host_a)));
    const auto bad = fake.deliver(std::vector<std::uint8_t>(64), IBV_WC_LOC_LEN_ERR);
    EXPECT_FALSE(queue->serve());
    EXPECT_TRUE(fake.sends().empty());  // the capsule before it was received, never run
    EXPECT_EQ(fake.srq_posts_of(good, before), 1u);
    EXPECT_EQ(fake.srq_posts_of(bad, before), 1u);
    EXPECT_EQ(fake.srq_posted(), pool_entries);
    EXPECT_EQ(fake.disconnects().size(), 1u);
}

TEST_F(RdmaQueueTest, AFailedWriteEndsTheQueueAndLeavesTheSrqAlone) {
    connect_and_enable();
    ASSERT_TRUE(queue->serve());  // the completions of the set-up
    fake.deliver(keyed_capsule(with_cid(identify_sqe(1), 12), rdma_wire::sgl_keyed, 0x20000, 4096, 0x42));
    ASSERT_TRUE(queue->serve());
    ASSERT_EQ(fake.sends().back().chain.size(), 2u);
    const auto before = fake.next_seq();
    // The host's key is bad: the unsignaled WRITE fails (an error completes
    // it, with its own wr_id), the SEND behind it is flushed.
    fake.fail_sends(IBV_WC_REM_ACCESS_ERR);
    EXPECT_FALSE(queue->serve());
    EXPECT_EQ(fake.disconnects().size(), 1u);
    // No buffer of the SRQ was the failed WR's: none goes back (the fake
    // flags a buffer posted twice).
    EXPECT_LT(fake.srq_posts().back().seq, before);
    EXPECT_EQ(fake.srq_posted(), pool_entries);
}

TEST_F(RdmaQueueTest, AFailedReadEndsTheQueueAndCapsulesBehindItGoBack) {
    open();
    std::uint64_t behind = ~0ull;
    // The READ fails, and meanwhile the host sent another capsule.
    fake.on_send = [&](const PostSend& p) {
        if (p.chain.front().opcode != IBV_WR_RDMA_READ) return;
        behind = fake.deliver(offset_capsule(with_cid(prop_get(wire::prop::cap, true), 2)));
        fake.fail_sends(IBV_WC_REM_ACCESS_ERR);
    };
    const auto before = fake.next_seq();
    const auto slot = fake.deliver(
        keyed_capsule(connect_sqe(0, 31), rdma_wire::sgl_keyed_invalidate, 0x30000, wire::connect_data_len, 7));
    EXPECT_FALSE(queue->serve());
    ASSERT_EQ(fake.sends().size(), 1u);  // the READ; no answer for either command
    EXPECT_EQ(fake.sends()[0].chain[0].opcode, IBV_WR_RDMA_READ);
    EXPECT_EQ(fake.srq_posts_of(slot, before), 1u);
    EXPECT_EQ(fake.srq_posts_of(behind, before), 1u);
    EXPECT_EQ(fake.srq_posted(), pool_entries);
    EXPECT_FALSE(queue->set_up());
}

TEST_F(RdmaQueueTest, CapsulesStillInTheCqGoBackWhenTheQueueIsDestroyed) {
    open();
    const auto before = fake.next_seq();
    const auto a = fake.deliver(offset_capsule(connect_sqe(0, 31), connect_data(nvm_nqn, host_a)));
    const auto b = fake.deliver(std::vector<std::uint8_t>(64));
    EXPECT_EQ(fake.srq_posted(), pool_entries - 2);
    queue.reset();  // never served
    EXPECT_EQ(fake.srq_posts_of(a, before), 1u);
    EXPECT_EQ(fake.srq_posts_of(b, before), 1u);
    EXPECT_EQ(fake.srq_posted(), pool_entries);
    EXPECT_TRUE(fake.sends().empty());
}

// ---- 6. close() from another thread ---------------------------------------------------

TEST_F(RdmaQueueTest, CloseWakesAServeWaitingForItsRead) {
    open();
    const auto before = fake.next_seq();
    const auto slot = fake.deliver(
        keyed_capsule(connect_sqe(0, 31), rdma_wire::sgl_keyed, 0x40000, wire::connect_data_len, 0x77));
    // The host never answers the READ: serve() waits on the queue's fd.
    auto served = std::async(std::launch::async, [this] { return queue->serve(); });
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (fake.sends().empty() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
    ASSERT_EQ(fake.sends().size(), 1u);
    std::this_thread::sleep_for(20ms);  // let it reach its wait
    const auto t0 = std::chrono::steady_clock::now();
    queue->close();
    if (served.wait_for(5s) != std::future_status::ready) {
        ADD_FAILURE() << "serve() did not return after close()";
        fake.fail_sends(IBV_WC_WR_FLUSH_ERR);  // unblock it, so the test ends
    }
    const bool result = served.get();
    const auto took = std::chrono::steady_clock::now() - t0;
    EXPECT_FALSE(result);
    // The wake, not the wait's one-second timeout, ended it.
    EXPECT_LT(took, 900ms);
    EXPECT_EQ(fake.disconnects().size(), 1u);
    EXPECT_EQ(fake.srq_posts_of(slot, before), 1u);
}

// ---- 7. data for the host with nowhere to go ------------------------------------------

TEST_F(RdmaQueueTest, DataForTheHostOfAnOffsetSglIsRefusedWithoutAWrite) {
    connect_and_enable();
    // Identify's 4 KiB named by an offset SGL: the capsule has room, the
    // host memory has no key. NVMe/RDMA cannot put the data anywhere.
    const std::vector<std::uint8_t> room(4096);
    fake.deliver(offset_capsule(with_cid(identify_sqe(1), 13), room));
    ASSERT_TRUE(queue->serve());
    const auto sends = fake.sends();
    const auto& chain = sends.back().chain;
    ASSERT_EQ(chain.size(), 1u);
    EXPECT_EQ(chain[0].opcode, IBV_WR_SEND);
    const auto cqe = cqe_of(chain[0]);
    EXPECT_EQ(cqe.cid(), 13);
    EXPECT_EQ(cqe.status(), wire::sc::sgl_descriptor_type_invalid);
    EXPECT_EQ(count_opcode(sends, IBV_WR_RDMA_WRITE), 0u);
    EXPECT_TRUE(queue->serve());  // a refused command: the queue goes on
}

} // namespace
} // namespace rpm::nvmf::target::test
