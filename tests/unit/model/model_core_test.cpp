// The crash test's plumbing: Service grants what flush::decide() says, its
// handlers reach the model, and the oracle judges bytes as documented.
#include "tests/support/pm_model_crash.hpp"
#include "tests/support/pm_model_oracle.hpp"
#include "tests/support/pm_model_server.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace {
using namespace rpm;
using namespace rpm::test;
using D = PersistenceDomain;
using SP = flush::ServerPersist;
using server::Range;
using server::TransportKind;

ModelServerOptions options(D domain, Ddio ddio, TransportKind kind, bool native = false) {
    ModelServerOptions o;
    o.model.domain = domain;
    o.model.ddio = ddio;
    o.model.size = 4096;
    o.kind = kind;
    o.native_flush = native;
    return o;
}

std::unique_ptr<ModelServer> start(const ModelServerOptions& o) {
    auto s = ModelServer::start(o);
    if (!s) ADD_FAILURE() << s.error().message();
    return s ? std::move(*s) : nullptr;
}

TEST(ModelCore, GrantsAreTheDecisionForEveryCell) {
    for (D d : {D::cpu_cache, D::memory_controller, D::none, D::unknown, D::not_pmem}) {
        for (Ddio ddio : {Ddio::on, Ddio::off, Ddio::unknown}) {
            for (bool native : {false, true}) {
                SCOPED_TRACE(std::string(to_string(d)) + "/" + std::string(to_string(ddio)) +
                             (native ? "/native" : ""));
                auto s = start(options(d, ddio, TransportKind::rdma, native));
                ASSERT_TRUE(s);
                const auto want = detected_decision(d, ddio, native);
                EXPECT_EQ(s->grant().method, want.method);
                EXPECT_EQ(s->grant().server_persist, want.server_persist);
            }
            auto tcp = start(options(d, ddio, TransportKind::tcp));
            ASSERT_TRUE(tcp);
            EXPECT_EQ(tcp->grant().method, flush::Method::send_flush);
            EXPECT_EQ(tcp->grant().server_persist, flush::server_persist_for(d));
        }
    }
}

TEST(ModelCore, HandlersDriveTheModel) {
    auto s = start(options(D::memory_controller, Ddio::on, TransportKind::tcp));
    ASSERT_TRUE(s);
    const std::vector<std::byte> data(100, std::byte{0x7E});
    ASSERT_TRUE(s->write(60, data));
    EXPECT_EQ(s->model().level_of(60), Level::llc) << "handle_write is a CPU store";
    ASSERT_TRUE(s->atomic_write(256, 0x0102030405060708ull));
    EXPECT_EQ(s->model().stats().store8s, 1u);
    const Range r{60, 100};
    ASSERT_TRUE(s->flush({&r, 1}));
    EXPECT_EQ(s->model().stats().persists, 1u);
    EXPECT_EQ(s->model().level_of(60), Level::wpq) << "the granted cache_flush_sfence ran";
    EXPECT_EQ(s->model().level_of(256), Level::llc) << "not named in the flush";
    std::vector<std::byte> seen(100);
    ASSERT_TRUE(s->read(60, seen));
    EXPECT_EQ(seen, data);
}

TEST(ModelCore, AFlushOrPersistOfManyRangesReachesEveryOne) {
    // Up to eight ranges live on the stack (server/handlers.cpp, RangeRoom);
    // twelve take the other path. Every named line must be flushed, the
    // empty range skipped, and the line between them left alone.
    auto s = start(options(D::memory_controller, Ddio::on, TransportKind::tcp));
    ASSERT_TRUE(s);
    const std::vector<std::byte> data(8, std::byte{0x5A});
    std::vector<Range> ranges;
    for (std::uint64_t i = 0; i < 12; ++i) {
        ASSERT_TRUE(s->write(i * 256, data));
        ranges.push_back({i * 256, 8});
    }
    ASSERT_TRUE(s->write(128, data));  // not named
    ranges.push_back({512, 0});        // empty: no persist work
    ASSERT_TRUE(s->flush(ranges));
    EXPECT_EQ(s->model().stats().persists, 1u);
    for (std::uint64_t i = 0; i < 12; ++i) EXPECT_EQ(s->model().level_of(i * 256), Level::wpq) << "range " << i;
    EXPECT_EQ(s->model().level_of(128), Level::llc);
    std::vector<proto::Slice> slices;
    for (std::uint64_t i = 0; i < 10; ++i) slices.push_back({2048 + i * 128, data});
    ASSERT_TRUE(s->persist(slices));
    for (std::uint64_t i = 0; i < 10; ++i) EXPECT_EQ(s->model().level_of(2048 + i * 128), Level::wpq) << "slice " << i;
}

TEST(ModelCore, RejectedRequestsLeaveTheModelUntouched) {
    auto s = start(options(D::none, Ddio::on, TransportKind::tcp));
    ASSERT_TRUE(s);
    const std::vector<std::byte> data(16, std::byte{1});
    EXPECT_FALSE(s->write(s->model().size() - 8, data));
    EXPECT_FALSE(s->atomic_write(12, 1)) << "misaligned";
    EXPECT_FALSE(s->atomic_write(s->model().size(), 1));
    const Range bad{s->model().size(), 1};
    EXPECT_FALSE(s->flush({&bad, 1}));
    EXPECT_EQ(s->model().stats().stores, 0u);
    EXPECT_EQ(s->model().stats().store8s, 0u);
    EXPECT_EQ(s->model().stats().persists, 0u);
}

TEST(ModelCore, OverriddenStepIsWhatTheHandlerRuns) {
    auto s = start(options(D::none, Ddio::on, TransportKind::rdma));
    ASSERT_TRUE(s);
    ASSERT_EQ(s->grant().server_persist, SP::cache_flush_sfence_deep_flush);
    s->override_step(SP::cache_flush_sfence);
    s->model().nic_write(0, std::vector<std::byte>(8, std::byte{2}));
    s->model().nic_receive();
    const Range r{0, 8};
    ASSERT_TRUE(s->flush({&r, 1}));
    EXPECT_EQ(s->model().level_of(0), Level::wpq) << "no deep flush ran";
}

TEST(ModelOracle, AcceptsTheAcknowledgedValueOrAnyLaterOne) {
    DurabilityOracle o;
    const std::vector<std::byte> initial(16, std::byte{0});
    o.reset(initial);
    const std::byte a[] = {std::byte{1}}, b[] = {std::byte{2}}, c[] = {std::byte{3}};
    o.wrote(0, a);
    auto image = initial;
    EXPECT_EQ(o.lost_bytes(image), 0u) << "an unacknowledged write may be lost";
    const Range r{0, 1};
    o.acknowledged({&r, 1});
    EXPECT_EQ(o.lost_bytes(image), 1u) << "an acknowledged one may not";
    o.wrote(0, b);
    o.wrote(0, c);
    for (std::byte v : {a[0], b[0], c[0]}) {
        image[0] = v;
        EXPECT_EQ(o.lost_bytes(image), 0u);
    }
    image[0] = std::byte{0};
    image[5] = std::byte{9};
    EXPECT_EQ(o.lost_bytes(image), 2u) << "a never-written byte must keep its initial value";
    EXPECT_EQ(o.newest()[0], c[0]);
}

TEST(ModelOracle, ResetForgetsThePreviousRun) {
    DurabilityOracle o;
    const std::vector<std::byte> initial(4, std::byte{0});
    o.reset(initial);
    const std::byte a[] = {std::byte{1}};
    o.wrote(2, a);
    o.reset(initial);
    auto image = initial;
    image[2] = a[0];
    EXPECT_EQ(o.lost_bytes(image), 1u);
}

} // namespace
