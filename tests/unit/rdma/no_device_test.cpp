// The real verbs layer on a machine without an RDMA device: rdma:// must say so
// clearly (errc::rdma_unavailable), on both sides, and leak nothing.
#include "client/transport.hpp"
#include "server/service.hpp"
#include "server/listener.hpp"
#include "transport/rdma/api.hpp"
#include "transport/rdma/verbs/objects.hpp"

#include <rpm/client.hpp>

#include <gtest/gtest.h>

#include <filesystem>

namespace rpm {
namespace {

bool has_rdma_device() {
    std::error_code ec;
    return std::filesystem::exists("/sys/class/infiniband", ec) &&
           !std::filesystem::is_empty("/sys/class/infiniband", ec);
}

TEST(RdmaNoDevice, ConnectRdmaSaysNoDevice) {
    if (has_rdma_device()) GTEST_SKIP() << "this machine has an RDMA device";
    ClientOptions opts;
    opts.secret = "x";
    auto t = client::connect_rdma("192.0.2.1", 7000, opts);
    ASSERT_FALSE(t);
    EXPECT_EQ(t.error(), errc::rdma_unavailable);
    EXPECT_NE(t.error().detail().find("rdma://192.0.2.1:7000"), std::string::npos) << t.error().message();
    EXPECT_NE(t.error().detail().find("no RDMA device"), std::string::npos) << t.error().message();
    EXPECT_NE(t.error().detail().find("tcp://"), std::string::npos) << t.error().message();
}

TEST(RdmaNoDevice, ClientConnectReportsRdmaUnavailable) {
    if (has_rdma_device()) GTEST_SKIP() << "this machine has an RDMA device";
    ClientOptions o;
    o.secret = "x";
    o.timeout = std::chrono::milliseconds(2000);
    Client c(o);
    auto conn = c.connect("rdma://192.0.2.1:7000");
    ASSERT_FALSE(conn);
    EXPECT_EQ(conn.error(), errc::rdma_unavailable) << conn.error().message();
}

TEST(RdmaNoDevice, ListenRdmaSaysNoDevice) {
    if (has_rdma_device()) GTEST_SKIP() << "this machine has an RDMA device";
    ServerOptions opts;
    opts.secrets = {{"a", "b"}};
    server::Service service(opts, {}, "{}");
    auto l = server::listen_rdma(service, "127.0.0.1", 0);
    ASSERT_FALSE(l);
    EXPECT_EQ(l.error(), errc::rdma_unavailable);
    EXPECT_NE(l.error().detail().find("no RDMA device has the address 127.0.0.1"), std::string::npos)
        << l.error().message();
}

TEST(RdmaNoDevice, ErrorNamesAreReadable) {
    EXPECT_EQ(rdma::error_name(rdma::kErrProvider), "provider error");
    EXPECT_EQ(rdma::error_name(rdma::kErrNoSupp), "not supported");
    // The rdma-core call that failed on this thread joins the next name, once.
    EXPECT_EQ(rdma::verbs::fail("rdma_resolve_addr", ENODEV), rdma::kErrProvider);
    EXPECT_EQ(rdma::error_name(rdma::kErrProvider), "provider error (rdma_resolve_addr: No such device)");
    EXPECT_EQ(rdma::error_name(rdma::kErrProvider), "provider error");
    EXPECT_EQ(rdma::code_of(rdma::kErrNoSupp), errc::unsupported);
    EXPECT_EQ(rdma::code_of(rdma::kErrInval), errc::invalid_argument);
    EXPECT_EQ(rdma::code_of(rdma::kErrProvider), errc::io_error);
    EXPECT_FALSE(rdma::code_of(0));
}

} // namespace
} // namespace rpm
