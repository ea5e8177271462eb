// Connection set-up on both sides, as the transport drives it: the client
// (conn_req_new, receives posted ahead, connect) and the server (ep_listen,
// a CONNECT_REQUEST, accept or reject), and the clean-up of every partial
// object when an rdma-core call fails on the way.
#include "fixture.hpp"

#include <fcntl.h>
#include <string>

namespace rpm::rdma::verbs::test {
namespace {

bool nonblocking(int fd) {
    const int flags = ::fcntl(fd, F_GETFL);
    return flags >= 0 && (flags & O_NONBLOCK) != 0;
}

class SetupTest : public VerbsTest {
protected:
    // A listener as RdmaListener makes one: device, peer, connection
    // configuration, endpoint on port 7205.
    void listen(Ep*& ep) {
        ASSERT_EQ(api.utils_get_ibv_context("127.0.0.1", kContextLocal, &ctx), 0);
        ASSERT_EQ(api.peer_new(ctx, &peer), 0);
        ASSERT_EQ(api.conn_cfg_new(&cfg), 0);
        ASSERT_EQ(api.ep_listen(peer, "127.0.0.1", "7205", &ep), 0);
    }

    // The steps of ClientConnectsTheWayTheTransportDrivesIt, in order.

    // The device found by resolving the address, the id used for it gone.
    void find_remote_device() {
        ASSERT_EQ(api.utils_get_ibv_context("127.0.0.1", kContextRemote, &ctx), 0);
        EXPECT_EQ(ctx, fake::device());
        EXPECT_EQ(fake::count("resolve_addr"), 1u);
        EXPECT_EQ(fake::count("bind_addr"), 0u);
        EXPECT_EQ(fake::live(), 0) << "the id that found the device outlived it: " << fake::live_report();
    }

    // A connection request as the transport makes one, with its calls and
    // their arguments.
    void request_connection(ConnReq*& req) {
        ASSERT_EQ(api.peer_new(ctx, &peer), 0);
        ASSERT_EQ(api.mr_reg(peer, buf.data(), buf.size(), kLocalUsage, &mr), 0);
        ASSERT_EQ(api.conn_cfg_new(&cfg), 0);
        ASSERT_EQ(api.conn_cfg_set_sq_size(cfg, 7), 0);
        ASSERT_EQ(api.conn_cfg_set_rq_size(cfg, 5), 0);
        ASSERT_EQ(api.conn_cfg_set_cq_size(cfg, 13), 0);
        ASSERT_EQ(api.conn_cfg_set_timeout(cfg, 1234), 0);
        fake::clear_calls();
        ASSERT_EQ(api.conn_req_new(peer, "127.0.0.1", "7204", cfg, &req), 0);
        EXPECT_EQ(fake::calls(), (std::vector<std::string>{"create_id", "resolve_addr", "resolve_route",
                                                           "create_comp_channel", "create_cq", "req_notify_cq",
                                                           "create_qp_ex", "reg_mr"}));
        EXPECT_EQ(fake::cm_args().resolve_addr_timeout, 1234);
        EXPECT_EQ(fake::cm_args().resolve_route_timeout, 1234);
        EXPECT_EQ(fake::cm_args().resolved_port, 7204);
        EXPECT_EQ(fake::cm_args().cqe, 13);
    }

    // The queue pair request_connection created, and its flush buffer.
    void expect_client_queue_pair() {
        ASSERT_EQ(fake::qp_attrs().size(), 1u);
        const auto& a = fake::qp_attrs()[0];
        EXPECT_EQ(a.qp_type, IBV_QPT_RC);
        EXPECT_NE(a.send_cq, nullptr);
        EXPECT_EQ(a.send_cq, a.recv_cq);  // one CQ for both queues
        EXPECT_EQ(a.cap.max_send_wr, 7u);
        EXPECT_EQ(a.cap.max_recv_wr, 5u);
        EXPECT_EQ(a.cap.max_send_sge, 1u);
        EXPECT_EQ(a.cap.max_recv_sge, 1u);
        EXPECT_EQ(a.cap.max_inline_data, 64u);
        EXPECT_EQ(a.sq_sig_all, 0);
        EXPECT_EQ(a.comp_mask, unsigned{IBV_QP_INIT_ATTR_PD});
        EXPECT_EQ(flush_buffer().access, IBV_ACCESS_LOCAL_WRITE);
    }

    // Receives go on the queue pair before connecting.
    void post_receive_before_connecting(ConnReq* req) {
        ASSERT_EQ(api.conn_req_recv(req, mr, 256, 128, tag(0x99)), 0);
        ASSERT_NO_FATAL_FAILURE(expect_one_recv(0x99, local_sge(256, 128)));
    }

    void connect_request(ConnReq*& req) {
        fake::clear_calls();
        ASSERT_EQ(api.conn_req_connect(&req, nullptr, &conn), 0);
        EXPECT_EQ(req, nullptr);
        EXPECT_EQ(fake::calls(), (std::vector<std::string>{"create_event_channel", "migrate_id", "connect"}));
        ASSERT_EQ(fake::connects().size(), 1u);
        const auto& p = fake::connects()[0].param;
        EXPECT_EQ(p.responder_resources, RDMA_MAX_RESP_RES);
        EXPECT_EQ(p.initiator_depth, RDMA_MAX_INIT_DEPTH);
        EXPECT_EQ(p.flow_control, 1);
        EXPECT_EQ(p.retry_count, 7);
        EXPECT_EQ(p.rnr_retry_count, 7);
        EXPECT_TRUE(nonblocking(conn_fd()));
        EXPECT_TRUE(nonblocking(cq_fd()));
    }

    // The connection established, disconnected and deleted, then every
    // object left: nothing of the fake's is live after.
    void establish_and_delete() {
        fake::queue_cm_event(conn_fd(), RDMA_CM_EVENT_ESTABLISHED);
        ConnEvent ev = kConnUndefined;
        ASSERT_EQ(api.conn_next_event(conn, &ev), 0);
        EXPECT_EQ(ev, kConnEstablished);
        EXPECT_EQ(fake::acked_events(), std::vector<rdma_cm_event_type>{RDMA_CM_EVENT_ESTABLISHED});

        ASSERT_EQ(api.conn_disconnect(conn), 0);
        EXPECT_EQ(fake::disconnects().size(), 1u);
        fake::clear_calls();
        ASSERT_EQ(api.conn_delete(&conn), 0);
        EXPECT_EQ(conn, nullptr);
        // The queue pair first: nothing may land in the flush buffer or the CQ after.
        EXPECT_EQ(fake::calls(), (std::vector<std::string>{"destroy_qp", "dereg_mr", "destroy_cq", "destroy_comp_channel",
                                                           "destroy_id", "destroy_event_channel"}));
        ASSERT_EQ(fake::deregistrations().size(), 1u);
        EXPECT_EQ(fake::deregistrations()[0].length, 8u);
        EXPECT_EQ(api.mr_dereg(&mr), 0);
        EXPECT_EQ(api.conn_cfg_delete(&cfg), 0);
        EXPECT_EQ(api.peer_delete(&peer), 0);
        EXPECT_EQ(fake::live(), 0) << fake::live_report();
    }
};

TEST_F(SetupTest, ClientConnectsTheWayTheTransportDrivesIt) {
    ASSERT_NO_FATAL_FAILURE(find_remote_device());
    ConnReq* req = nullptr;
    ASSERT_NO_FATAL_FAILURE(request_connection(req));
    ASSERT_NO_FATAL_FAILURE(expect_client_queue_pair());
    ASSERT_NO_FATAL_FAILURE(post_receive_before_connecting(req));
    ASSERT_NO_FATAL_FAILURE(connect_request(req));
    ASSERT_NO_FATAL_FAILURE(establish_and_delete());
}

TEST_F(SetupTest, LocalContextBindsInsteadOfResolving) {
    ASSERT_EQ(api.utils_get_ibv_context("127.0.0.1", kContextLocal, &ctx), 0);
    EXPECT_EQ(ctx, fake::device());
    EXPECT_EQ(fake::count("bind_addr"), 1u);
    EXPECT_EQ(fake::count("resolve_addr"), 0u);
    EXPECT_EQ(fake::live(), 0) << fake::live_report();
    ctx = nullptr;
    fake::fail_next("bind_addr", EADDRNOTAVAIL);
    EXPECT_EQ(api.utils_get_ibv_context("127.0.0.1", kContextLocal, &ctx), kErrProvider);
    EXPECT_EQ(ctx, nullptr);
    EXPECT_EQ(fake::live(), 0) << fake::live_report();
}

TEST_F(SetupTest, ServerListensAcceptsAndShutsDown) {
    ASSERT_EQ(api.utils_get_ibv_context("127.0.0.1", kContextLocal, &ctx), 0);
    ASSERT_EQ(api.peer_new(ctx, &peer), 0);
    ASSERT_EQ(api.mr_reg(peer, buf.data(), buf.size(), kLocalUsage, &mr), 0);
    ASSERT_EQ(api.conn_cfg_new(&cfg), 0);
    Ep* ep = nullptr;
    fake::clear_calls();
    ASSERT_EQ(api.ep_listen(peer, "127.0.0.1", "7205", &ep), 0);
    EXPECT_EQ(fake::calls(), (std::vector<std::string>{"create_event_channel", "create_id", "bind_addr", "listen"}));
    EXPECT_EQ(fake::cm_args().bound_port, 7205);
    EXPECT_EQ(fake::cm_args().backlog, 16);
    int ep_fd = -1;
    ASSERT_EQ(api.ep_get_fd(ep, &ep_fd), 0);
    EXPECT_TRUE(nonblocking(ep_fd));

    ConnReq* req = nullptr;
    EXPECT_EQ(api.ep_next_conn_req(ep, cfg, &req), kErrNoEvent);
    rdma_cm_id* id = fake::incoming_id();
    fake::queue_cm_event(ep_fd, RDMA_CM_EVENT_CONNECT_REQUEST, id);
    ASSERT_EQ(api.ep_next_conn_req(ep, cfg, &req), 0);
    EXPECT_EQ(fake::acked_events(), std::vector<rdma_cm_event_type>{RDMA_CM_EVENT_CONNECT_REQUEST});
    EXPECT_NE(fake::qp_of(id), nullptr) << "the request's queue pair is built on the incoming id";
    ASSERT_EQ(api.conn_req_recv(req, mr, 0, 64, tag(7)), 0);
    EXPECT_EQ(fake::recvs().size(), 1u);

    ASSERT_EQ(api.conn_req_connect(&req, nullptr, &conn), 0);
    EXPECT_EQ(req, nullptr);
    ASSERT_EQ(fake::connects().size(), 1u);
    EXPECT_EQ(fake::connects()[0].call, "accept");
    EXPECT_EQ(fake::connects()[0].id, id);
    EXPECT_EQ(fake::count("connect"), 0u);
    EXPECT_TRUE(fake::rejects().empty());
    EXPECT_NE(conn_fd(), ep_fd) << "the connection reports on a channel of its own";
    fake::queue_cm_event(conn_fd(), RDMA_CM_EVENT_ESTABLISHED);
    ConnEvent ev = kConnUndefined;
    ASSERT_EQ(api.conn_next_event(conn, &ev), 0);
    EXPECT_EQ(ev, kConnEstablished);

    // The listener may go before its connections: they left its channel.
    ASSERT_EQ(api.ep_shutdown(&ep), 0);
    EXPECT_EQ(ep, nullptr);
    close();
    EXPECT_EQ(fake::live(), 0) << fake::live_report();
}

TEST_F(SetupTest, DeletingAnOfferedRequestRejectsIt) {
    Ep* ep = nullptr;
    ASSERT_NO_FATAL_FAILURE(listen(ep));
    const int live_before = fake::live();
    int ep_fd = -1;
    ASSERT_EQ(api.ep_get_fd(ep, &ep_fd), 0);
    rdma_cm_id* id = fake::incoming_id();
    fake::queue_cm_event(ep_fd, RDMA_CM_EVENT_CONNECT_REQUEST, id);
    ConnReq* req = nullptr;
    ASSERT_EQ(api.ep_next_conn_req(ep, cfg, &req), 0);
    ASSERT_EQ(api.conn_req_delete(&req), 0);
    EXPECT_EQ(req, nullptr);
    EXPECT_EQ(fake::rejects(), std::vector<rdma_cm_id*>{id});
    EXPECT_TRUE(fake::connects().empty());
    EXPECT_EQ(fake::live(), live_before) << fake::live_report();
    ASSERT_EQ(api.ep_shutdown(&ep), 0);
    close();
    EXPECT_EQ(fake::live(), 0) << fake::live_report();
}

TEST_F(SetupTest, DeletingAClientRequestDoesNotReject) {
    ASSERT_EQ(api.utils_get_ibv_context("127.0.0.1", kContextRemote, &ctx), 0);
    ASSERT_EQ(api.peer_new(ctx, &peer), 0);
    ASSERT_EQ(api.conn_cfg_new(&cfg), 0);
    ConnReq* req = nullptr;
    ASSERT_EQ(api.conn_req_new(peer, "127.0.0.1", "7204", cfg, &req), 0);
    ASSERT_EQ(api.conn_req_delete(&req), 0);
    EXPECT_EQ(req, nullptr);
    EXPECT_TRUE(fake::rejects().empty());
    close();
    EXPECT_EQ(fake::live(), 0) << fake::live_report();
}

TEST_F(SetupTest, AListenerEventThatIsNoRequestIsConsumedAndRefused) {
    Ep* ep = nullptr;
    ASSERT_NO_FATAL_FAILURE(listen(ep));
    int ep_fd = -1;
    ASSERT_EQ(api.ep_get_fd(ep, &ep_fd), 0);
    fake::queue_cm_event(ep_fd, RDMA_CM_EVENT_DEVICE_REMOVAL);
    ConnReq* req = nullptr;
    EXPECT_EQ(api.ep_next_conn_req(ep, cfg, &req), kErrInval);
    EXPECT_EQ(req, nullptr);
    EXPECT_EQ(fake::acked_events(), std::vector<rdma_cm_event_type>{RDMA_CM_EVENT_DEVICE_REMOVAL});
    EXPECT_EQ(fake::count("create_qp_ex"), 0u);
    EXPECT_EQ(api.ep_next_conn_req(ep, cfg, &req), kErrNoEvent);
    ASSERT_EQ(api.ep_shutdown(&ep), 0);
}

TEST_F(SetupTest, ARequestOnAnotherDeviceIsRejected) {
    Ep* ep = nullptr;
    ASSERT_NO_FATAL_FAILURE(listen(ep));
    const int live_before = fake::live();
    int ep_fd = -1;
    ASSERT_EQ(api.ep_get_fd(ep, &ep_fd), 0);
    rdma_cm_id* id = fake::incoming_id(fake::other_device());
    fake::queue_cm_event(ep_fd, RDMA_CM_EVENT_CONNECT_REQUEST, id);
    ConnReq* req = nullptr;
    EXPECT_EQ(api.ep_next_conn_req(ep, cfg, &req), kErrInval);
    EXPECT_EQ(req, nullptr);
    EXPECT_EQ(fake::rejects(), std::vector<rdma_cm_id*>{id});
    EXPECT_EQ(fake::live(), live_before) << fake::live_report();
    ASSERT_EQ(api.ep_shutdown(&ep), 0);
}

TEST_F(SetupTest, AClientRouteToAnotherDeviceIsRefused) {
    ASSERT_EQ(api.utils_get_ibv_context("127.0.0.1", kContextRemote, &ctx), 0);
    ASSERT_EQ(api.peer_new(ctx, &peer), 0);
    ASSERT_EQ(api.conn_cfg_new(&cfg), 0);
    const int live_before = fake::live();
    fake::config().route_device = fake::other_device();
    ConnReq* req = nullptr;
    EXPECT_EQ(api.conn_req_new(peer, "127.0.0.1", "7204", cfg, &req), kErrInval);
    EXPECT_EQ(req, nullptr);
    EXPECT_EQ(fake::count("create_qp_ex"), 0u);
    EXPECT_EQ(fake::live(), live_before) << fake::live_report();
}

// BUG (verbs layer): the reason error_name() appends is the last one
// recorded on the thread, whatever call it came from. The data path's
// failures are read with code_of() only (client_ops.cpp), so their reason
// stays behind, and a later error that records none (build_conn's
// kErrInval for a route to another device, setup.cpp:52) is reported with
// it: "invalid argument (ibv_post_send: Cannot allocate memory)".
TEST_F(SetupTest, AnErrorIsNotBlamedOnAnEarlierFailure) {
    ASSERT_NO_FATAL_FAILURE(open());
    fake::fail_next("post_send", ENOMEM);
    ASSERT_EQ(api.send(conn, mr, 0, 8, kCompletionAlways, tag(1)), kErrNoMem);  // its reason is never read
    fake::config().route_device = fake::other_device();
    ConnReq* req = nullptr;
    const int ret = api.conn_req_new(peer, "127.0.0.1", "7204", cfg, &req);
    ASSERT_EQ(ret, kErrInval);
    const std::string why = error_name(ret);  // reading clears the reason: once
    EXPECT_EQ(why.find("ibv_post_send"), std::string::npos) << why;
}

TEST_F(SetupTest, AQueuePairRefusedWithInlineDataIsRetriedWithout) {
    fake::fail_next("create_qp_ex", EINVAL);
    ASSERT_NO_FATAL_FAILURE(open({.granted_inline = -1}));
    ASSERT_EQ(fake::qp_attrs().size(), 2u);
    EXPECT_EQ(fake::qp_attrs()[0].cap.max_inline_data, 64u);
    EXPECT_EQ(fake::qp_attrs()[1].cap.max_inline_data, 0u);
    // No inline data now: small writes and sends go from registered memory,
    // and an atomic write has no way to go.
    ASSERT_EQ(api.write(conn, remote, 0, mr, 0, 8, kCompletionAlways, tag(1)), 0);
    ASSERT_EQ(api.send(conn, mr, 0, 8, kCompletionAlways, tag(2)), 0);
    ASSERT_TRUE(posted(2, 1));
    EXPECT_EQ(fake::sends()[0].chain[0].send_flags, kSig);
    EXPECT_EQ(fake::sends()[1].chain[0].send_flags, kSig);
    const char value[8] = {};
    EXPECT_EQ(api.atomic_write(conn, remote, 0, value, kCompletionAlways, tag(3)), kErrNoSupp);
}

TEST_F(SetupTest, EveryFailureOnTheWayToARequestFreesWhatWasBuilt) {
    for (const char* call : {"create_id", "resolve_addr", "resolve_route", "create_comp_channel", "create_cq",
                             "req_notify_cq", "create_qp_ex", "reg_mr"}) {
        SCOPED_TRACE(call);
        ASSERT_EQ(api.utils_get_ibv_context("127.0.0.1", kContextRemote, &ctx), 0);
        ASSERT_EQ(api.peer_new(ctx, &peer), 0);
        ASSERT_EQ(api.conn_cfg_new(&cfg), 0);
        const int live_before = fake::live();
        fake::fail_next(call, ENODEV, 2);  // twice: create_qp_ex is retried once
        ConnReq* req = nullptr;
        const int ret = api.conn_req_new(peer, "127.0.0.1", "7204", cfg, &req);
        EXPECT_EQ(ret, kErrProvider);
        EXPECT_EQ(req, nullptr);
        const std::string why = error_name(ret);  // reading clears the reason: once
        EXPECT_NE(why.find("No such device"), std::string::npos) << why;
        EXPECT_EQ(fake::live(), live_before) << fake::live_report();
        close();
        EXPECT_EQ(fake::live(), 0) << fake::live_report();
        fake::reset();
    }
}

TEST_F(SetupTest, EveryFailureOnTheWayToAConnectionFreesIt) {
    for (const char* call : {"create_event_channel", "migrate_id", "connect"}) {
        SCOPED_TRACE(call);
        ASSERT_EQ(api.utils_get_ibv_context("127.0.0.1", kContextRemote, &ctx), 0);
        ASSERT_EQ(api.peer_new(ctx, &peer), 0);
        ASSERT_EQ(api.conn_cfg_new(&cfg), 0);
        const int live_before = fake::live();
        ConnReq* req = nullptr;
        ASSERT_EQ(api.conn_req_new(peer, "127.0.0.1", "7204", cfg, &req), 0);
        fake::fail_next(call, ETIMEDOUT);
        EXPECT_EQ(api.conn_req_connect(&req, nullptr, &conn), kErrProvider);
        EXPECT_EQ(req, nullptr) << "the request is consumed whatever connect returns";
        EXPECT_EQ(conn, nullptr);
        EXPECT_EQ(fake::live(), live_before) << fake::live_report();
        close();
        fake::reset();
    }
}

TEST_F(SetupTest, AFailedListenFreesTheEndpoint) {
    ASSERT_EQ(api.utils_get_ibv_context("127.0.0.1", kContextLocal, &ctx), 0);
    ASSERT_EQ(api.peer_new(ctx, &peer), 0);
    const int live_before = fake::live();
    for (const char* call : {"create_event_channel", "create_id", "bind_addr", "listen"}) {
        SCOPED_TRACE(call);
        fake::fail_next(call, EADDRINUSE);
        Ep* ep = nullptr;
        EXPECT_EQ(api.ep_listen(peer, "127.0.0.1", "7205", &ep), kErrProvider);
        EXPECT_EQ(ep, nullptr);
        EXPECT_EQ(fake::live(), live_before) << fake::live_report();
    }
}

TEST_F(SetupTest, PeerNeedsAProtectionDomainButNotTheExtendedQuery) {
    ASSERT_EQ(api.utils_get_ibv_context("127.0.0.1", kContextRemote, &ctx), 0);
    fake::fail_next("alloc_pd", ENOMEM);
    EXPECT_EQ(api.peer_new(ctx, &peer), kErrProvider);
    EXPECT_EQ(peer, nullptr);
    EXPECT_EQ(api.peer_new(nullptr, &peer), kErrInval);
    // An old provider without ibv_query_device_ex: no atomic write, no failure.
    fake::config().device_cap_flags_ex = kAtomicWriteCap;
    fake::fail_next("query_device_ex", EOPNOTSUPP);
    ASSERT_NO_FATAL_FAILURE(open({.cap_flags = kAtomicWriteCap}));
    AtomicWriteKind kind{};
    ASSERT_EQ(api.conn_atomic_write_kind(conn, &kind), 0);
    EXPECT_EQ(kind, AtomicWriteKind::fenced_write);
    EXPECT_EQ(fake::qp_attrs().back().comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS, 0u);
}

} // namespace
} // namespace rpm::rdma::verbs::test
