// An established connection: its cm events, its completion queue (events,
// re-arming, polling) and its teardown.
#include "fixture.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string>
#include <utility>

namespace rpm::rdma::verbs::test {
namespace {

using ConnTest = VerbsTest;

TEST_F(ConnTest, CmEventsMapToConnectionEventsAndAreEachAcknowledged) {
    ASSERT_NO_FATAL_FAILURE(open());
    const std::pair<rdma_cm_event_type, ConnEvent> cases[] = {
        {RDMA_CM_EVENT_ESTABLISHED, kConnEstablished},   {RDMA_CM_EVENT_DISCONNECTED, kConnClosed},
        {RDMA_CM_EVENT_TIMEWAIT_EXIT, kConnClosed},      {RDMA_CM_EVENT_REJECTED, kConnRejected},
        {RDMA_CM_EVENT_UNREACHABLE, kConnUnreachable},   {RDMA_CM_EVENT_CONNECT_ERROR, kConnUnreachable},
        {RDMA_CM_EVENT_ADDR_ERROR, kConnUnreachable},    {RDMA_CM_EVENT_ROUTE_ERROR, kConnUnreachable},
        {RDMA_CM_EVENT_DEVICE_REMOVAL, kConnLost},       {RDMA_CM_EVENT_ADDR_CHANGE, kConnLost},
    };
    const int live_before = fake::live();
    std::vector<rdma_cm_event_type> queued;
    for (const auto& [type, want] : cases) {
        SCOPED_TRACE(std::to_string(static_cast<int>(type)));
        fake::queue_cm_event(conn_fd(), type);
        queued.push_back(type);
        ConnEvent ev = kConnUndefined;
        ASSERT_EQ(api.conn_next_event(conn, &ev), 0);
        EXPECT_EQ(ev, want);
        EXPECT_EQ(fake::acked_events(), queued);
    }
    ConnEvent ev = kConnUndefined;
    EXPECT_EQ(api.conn_next_event(conn, &ev), kErrNoEvent);
    EXPECT_EQ(ev, kConnUndefined);
    EXPECT_EQ(fake::live(), live_before) << "an event is not acknowledged: " << fake::live_report();
}

TEST_F(ConnTest, NoPendingEventIsNoEventNotAnError) {
    ASSERT_NO_FATAL_FAILURE(open());
    ConnEvent ev = kConnUndefined;
    EXPECT_EQ(api.conn_next_event(conn, &ev), kErrNoEvent);
    fake::fail_next("get_cm_event", EIO);
    EXPECT_EQ(api.conn_next_event(conn, &ev), kErrProvider);
    EXPECT_TRUE(fake::acked_events().empty());
}

TEST_F(ConnTest, EventsQueuedInOrderComeOutInOrder) {
    ASSERT_NO_FATAL_FAILURE(open());
    fake::queue_cm_event(conn_fd(), RDMA_CM_EVENT_ESTABLISHED);
    fake::queue_cm_event(conn_fd(), RDMA_CM_EVENT_DISCONNECTED);
    ConnEvent a = kConnUndefined;
    ConnEvent b = kConnUndefined;
    ASSERT_EQ(api.conn_next_event(conn, &a), 0);
    ASSERT_EQ(api.conn_next_event(conn, &b), 0);
    EXPECT_EQ(a, kConnEstablished);
    EXPECT_EQ(b, kConnClosed);
}

TEST_F(ConnTest, EmptyCompletionQueueIsNoCompletion) {
    ASSERT_NO_FATAL_FAILURE(open());
    Cq* cq = nullptr;
    ASSERT_EQ(api.conn_get_cq(conn, &cq), 0);
    ibv_wc wc[4]{};
    int got = -1;
    EXPECT_EQ(api.cq_get_wc(cq, 4, wc, &got), kErrNoCompletion);
    EXPECT_EQ(got, -1);
    EXPECT_EQ(api.cq_get_wc(cq, 0, wc, &got), kErrInval);
}

TEST_F(ConnTest, CompletionsComeBackUpToTheNumberAsked) {
    ASSERT_NO_FATAL_FAILURE(open());
    Cq* cq = nullptr;
    ASSERT_EQ(api.conn_get_cq(conn, &cq), 0);
    for (std::uint64_t id : {0x10u, 0x20u, 0x30u}) {
        ibv_wc w{};
        w.wr_id = id;
        w.status = id == 0x20 ? IBV_WC_REM_ACCESS_ERR : IBV_WC_SUCCESS;
        w.opcode = IBV_WC_RDMA_WRITE;
        fake::push_wc(cq_fd(), w);
    }
    ibv_wc wc[4]{};
    int got = 0;
    ASSERT_EQ(api.cq_get_wc(cq, 2, wc, &got), 0);
    ASSERT_EQ(got, 2);
    EXPECT_EQ(wc[0].wr_id, 0x10u);
    EXPECT_EQ(wc[1].wr_id, 0x20u);
    EXPECT_EQ(wc[1].status, IBV_WC_REM_ACCESS_ERR);
    ASSERT_EQ(api.cq_get_wc(cq, 4, wc, &got), 0);
    ASSERT_EQ(got, 1);
    EXPECT_EQ(wc[0].wr_id, 0x30u);
    EXPECT_EQ(api.cq_get_wc(cq, 4, wc, &got), kErrNoCompletion);
    fake::fail_next("poll_cq", EIO);
    EXPECT_EQ(api.cq_get_wc(cq, 4, wc, &got), kErrProvider);
}

TEST_F(ConnTest, CqWaitAcknowledgesTheEventAndReArms) {
    ASSERT_NO_FATAL_FAILURE(open());
    Cq* cq = nullptr;
    ASSERT_EQ(api.conn_get_cq(conn, &cq), 0);
    int fd = -1;
    ASSERT_EQ(api.cq_get_fd(cq, &fd), 0);
    EXPECT_EQ(fd, cq_fd());
    EXPECT_TRUE(fake::armed(fd)) << "a new CQ must be armed, or its first completion raises no event";

    EXPECT_EQ(api.cq_wait(cq), kErrNoCompletion);
    EXPECT_EQ(fake::cq_events_acked(), 0u);

    for (int round = 0; round < 3; ++round) {
        SCOPED_TRACE(round);
        ASSERT_TRUE(fake::raise_cq_event(fd)) << "the CQ was not re-armed";
        EXPECT_FALSE(fake::armed(fd));
        fake::clear_calls();
        ASSERT_EQ(api.cq_wait(cq), 0);
        EXPECT_EQ(fake::cq_events_acked(), static_cast<unsigned>(round + 1));
        // Re-armed before the caller drains the CQ: a completion arriving
        // meanwhile raises a new event.
        EXPECT_EQ(fake::calls(), (std::vector<std::string>{"get_cq_event", "ack_cq_events", "req_notify_cq"}));
        EXPECT_TRUE(fake::armed(fd));
    }
    EXPECT_EQ(api.cq_wait(cq), kErrNoCompletion);
}

TEST_F(ConnTest, CqWaitReportsAFailedReArm) {
    ASSERT_NO_FATAL_FAILURE(open());
    Cq* cq = nullptr;
    ASSERT_EQ(api.conn_get_cq(conn, &cq), 0);
    ASSERT_TRUE(fake::raise_cq_event(cq_fd()));
    fake::fail_next("req_notify_cq", EIO);
    const int ret = api.cq_wait(cq);
    EXPECT_EQ(ret, kErrProvider);
    const std::string why = error_name(ret);  // reading clears the reason: once
    EXPECT_NE(why.find("ibv_req_notify_cq"), std::string::npos) << why;
    EXPECT_EQ(fake::cq_events_acked(), 1u);  // acknowledged all the same
}

TEST_F(ConnTest, DisconnectThenDeleteFreesEverythingInOrder) {
    ASSERT_NO_FATAL_FAILURE(open());
    // Completions left unpolled and deferred requests left unrung are dropped.
    const int fd = cq_fd();
    fake::push_wc(fd, ibv_wc{});
    ASSERT_EQ(api.write(conn, remote, 0, mr, 0, 8, kCompletionAlways | kDeferDoorbell, tag(1)), 0);
    ASSERT_TRUE(fake::raise_cq_event(fd));
    Cq* cq = nullptr;
    ASSERT_EQ(api.conn_get_cq(conn, &cq), 0);
    ASSERT_EQ(api.cq_wait(cq), 0);

    ASSERT_EQ(api.conn_disconnect(conn), 0);
    ASSERT_EQ(fake::disconnects().size(), 1u);
    fake::queue_cm_event(conn_fd(), RDMA_CM_EVENT_DISCONNECTED);
    ConnEvent ev = kConnUndefined;
    ASSERT_EQ(api.conn_next_event(conn, &ev), 0);
    EXPECT_EQ(ev, kConnClosed);

    fake::clear_calls();
    ASSERT_EQ(api.conn_delete(&conn), 0);
    EXPECT_EQ(conn, nullptr);
    const long qp = fake::index_of("destroy_qp");
    ASSERT_GE(qp, 0);
    EXPECT_LT(qp, fake::index_of("dereg_mr")) << "flush buffer deregistered under a live queue pair";
    EXPECT_LT(qp, fake::index_of("destroy_cq")) << "CQ destroyed under a live queue pair";
    EXPECT_LT(fake::index_of("destroy_cq"), fake::index_of("destroy_comp_channel"));
    EXPECT_LT(fake::index_of("destroy_id"), fake::index_of("destroy_event_channel"));
    EXPECT_EQ(fake::count("post_send"), 0u);
    ASSERT_EQ(fake::deregistrations().size(), 1u);
    EXPECT_EQ(fake::deregistrations()[0].length, 8u);
    EXPECT_EQ(fake::deregistrations()[0].addr, flush_buffer().addr);

    EXPECT_EQ(api.mr_remote_delete(&remote), 0);
    EXPECT_EQ(api.mr_dereg(&mr), 0);
    EXPECT_EQ(api.conn_cfg_delete(&cfg), 0);
    EXPECT_EQ(api.peer_delete(&peer), 0);
    EXPECT_EQ(fake::live(), 0) << fake::live_report();
    EXPECT_EQ(api.conn_delete(&conn), 0);  // a NULL connection: nothing to do
}

TEST_F(ConnTest, AFailedDisconnectIsReported) {
    ASSERT_NO_FATAL_FAILURE(open());
    fake::fail_next("disconnect", EINVAL);
    const int ret = api.conn_disconnect(conn);
    EXPECT_EQ(ret, kErrProvider);
    const std::string why = error_name(ret);  // reading clears the reason: once
    EXPECT_NE(why.find("rdma_disconnect"), std::string::npos) << why;
}

TEST_F(ConnTest, PortLookupGoesThroughTheTable) {
    // The transport finds a free port for "port 0" with these four.
    fake::config().src_port = 40123;
    rdma_cm_id* id = nullptr;
    ASSERT_EQ(api.cm_create_id(nullptr, &id, nullptr, RDMA_PS_TCP), 0);
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    sin.sin_port = htons(0);
    ASSERT_EQ(api.cm_bind_addr(id, reinterpret_cast<sockaddr*>(&sin)), 0);
    EXPECT_EQ(ntohs(api.cm_get_src_port(id)), 40123);
    ASSERT_EQ(api.cm_destroy_id(id), 0);
    EXPECT_EQ(fake::calls(), (std::vector<std::string>{"create_id", "bind_addr", "get_src_port", "destroy_id"}));
    EXPECT_EQ(fake::live(), 0) << fake::live_report();
}

TEST_F(ConnTest, NullArgumentsAreRefused) {
    ASSERT_NO_FATAL_FAILURE(open());
    int fd = 0;
    Cq* cq = nullptr;
    ConnEvent ev{};
    AtomicWriteKind kind{};
    EXPECT_EQ(api.conn_get_event_fd(nullptr, &fd), kErrInval);
    EXPECT_EQ(api.conn_get_event_fd(conn, nullptr), kErrInval);
    EXPECT_EQ(api.conn_next_event(nullptr, &ev), kErrInval);
    EXPECT_EQ(api.conn_next_event(conn, nullptr), kErrInval);
    EXPECT_EQ(api.conn_get_cq(nullptr, &cq), kErrInval);
    EXPECT_EQ(api.conn_atomic_write_kind(conn, nullptr), kErrInval);
    EXPECT_EQ(api.conn_atomic_write_kind(nullptr, &kind), kErrInval);
    EXPECT_EQ(api.conn_apply_remote_peer_cfg(conn, nullptr), kErrInval);
    EXPECT_EQ(api.conn_disconnect(nullptr), kErrInval);
    EXPECT_EQ(api.conn_delete(nullptr), kErrInval);
    EXPECT_EQ(api.cq_wait(nullptr), kErrInval);
    EXPECT_EQ(api.cq_get_fd(nullptr, &fd), kErrInval);
    EXPECT_EQ(fake::count("get_cm_event") + fake::count("disconnect") + fake::count("get_cq_event"), 0u);
}

} // namespace
} // namespace rpm::rdma::verbs::test
