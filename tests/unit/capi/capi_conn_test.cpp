// Connections through the C API: connect, scheme and profile, bad URIs,
// authentication, unknown regions, registered memory, TLS, and what a
// closed or deleted connection answers (synchronous calls; the async ones
// are in capi_async_test.cpp).
#include "capi_helpers.hpp"

#include <cstring>
#include <string>

namespace capi {
namespace {

using CapiConn = CapiFixture;

TEST_F(CapiConn, SchemeAndServerProfile) {
    int scheme = -1;
    CAPI_ASSERT_OK(rpm_conn_get_scheme(conn, &scheme));
    EXPECT_EQ(scheme, RPM_SCHEME_TCP);
    const char* json = nullptr;
    CAPI_ASSERT_OK(rpm_conn_get_server_profile(conn, &json));
    ASSERT_NE(json, nullptr);
    const std::string profile = json;
    ASSERT_FALSE(profile.empty());
    EXPECT_EQ(profile.front(), '{') << profile;
    EXPECT_EQ(profile.back(), '}') << profile;
    EXPECT_EQ(rpm_conn_get_scheme(nullptr, &scheme), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_conn_get_scheme(conn, nullptr), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_conn_get_server_profile(nullptr, &json), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_conn_get_server_profile(conn, nullptr), RPM_E_INVALID_ARGUMENT);
}

TEST_F(CapiConn, BadUrisAreRefused) {
    for (const char* uri : {"", "not a uri", "http://127.0.0.1:1", "tcp://127.0.0.1:notaport"}) {
        rpm_conn* c = nullptr;
        EXPECT_EQ(rpm_conn_new(uri, nullptr, &c), RPM_E_INVALID_ARGUMENT) << uri;
        EXPECT_EQ(c, nullptr) << uri;
        EXPECT_NE(std::string(rpm_errormsg()), "") << uri;
    }
    rpm_conn* c = nullptr;
    EXPECT_EQ(rpm_conn_new(nullptr, nullptr, &c), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_conn_new(server.uri().c_str(), nullptr, nullptr), RPM_E_INVALID_ARGUMENT);
}

TEST_F(CapiConn, WrongSecretFailsAuthentication) {
    Conn bad;
    EXPECT_EQ(connect(server.uri(), bad, kClientId, "not-the-secret"), RPM_E_AUTH_FAILED);
    EXPECT_EQ(bad.get(), nullptr);
    EXPECT_NE(std::string(rpm_errormsg()).find(rpm_err_2str(RPM_E_AUTH_FAILED)), std::string::npos)
        << rpm_errormsg();
    Conn unknown;
    EXPECT_EQ(connect(server.uri(), unknown, "nobody", kSecret), RPM_E_AUTH_FAILED);
    // NULL options: client id "default" with no secret, which this server
    // does not know.
    rpm_conn* c = nullptr;
    EXPECT_EQ(rpm_conn_new(server.uri().c_str(), nullptr, &c), RPM_E_AUTH_FAILED);
    EXPECT_EQ(c, nullptr);
}

TEST_F(CapiConn, UnknownRegionIsRefusedByName) {
    rpm_region* r = nullptr;
    EXPECT_EQ(rpm_region_open(conn, "no-such-region", nullptr, &r), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(r, nullptr);
    EXPECT_NE(std::string(rpm_errormsg()).find("no-such-region"), std::string::npos) << rpm_errormsg();
    EXPECT_EQ(rpm_region_open(nullptr, "r0", nullptr, &r), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_region_open(conn, nullptr, nullptr, &r), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_region_open(conn, "r0", nullptr, nullptr), RPM_E_INVALID_ARGUMENT);
    // The connection goes on.
    Region r1;
    CAPI_ASSERT_OK(rpm_region_open(conn, "r1", nullptr, r1.out()));
    std::uint64_t size = 0;
    CAPI_ASSERT_OK(rpm_region_get_size(r1, &size));
    EXPECT_EQ(size, 64u * 1024);
}

TEST_F(CapiConn, RegisteredMemoryPersistsAndDeregisters) {
    std::vector<unsigned char> buf = pattern(8192, 3);
    Mem mem;
    CAPI_ASSERT_OK(rpm_mem_register(conn, buf.data(), buf.size(), mem.out()));
    int registered = -1;
    CAPI_ASSERT_OK(rpm_mem_get_registered(mem, &registered));
    EXPECT_EQ(registered, 0);  // tcp:// registers nothing
    CAPI_ASSERT_OK(rpm_region_persist(region, 65536, buf.data() + 100, 4000));
    std::vector<unsigned char> back(4000);
    CAPI_ASSERT_OK(rpm_region_read(region, 65536, back.data(), back.size()));
    EXPECT_EQ(0, std::memcmp(back.data(), buf.data() + 100, back.size()));
    rpm_mem* m = mem.p;
    mem.p = nullptr;
    CAPI_EXPECT_OK(rpm_mem_deregister(&m));
    EXPECT_EQ(m, nullptr);
    CAPI_EXPECT_OK(rpm_mem_deregister(&m));
    EXPECT_EQ(rpm_mem_deregister(nullptr), RPM_E_INVALID_ARGUMENT);
    rpm_mem* out = nullptr;
    EXPECT_EQ(rpm_mem_register(nullptr, buf.data(), 10, &out), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_mem_register(conn, nullptr, 10, &out), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_mem_register(conn, buf.data(), 10, nullptr), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(out, nullptr);
    EXPECT_EQ(rpm_mem_get_registered(nullptr, &registered), RPM_E_INVALID_ARGUMENT);
}

TEST_F(CapiConn, SynchronousCallsAfterCloseFailWithIoError) {
    CAPI_ASSERT_OK(rpm_conn_close(conn));
    const char msg[] = "late";
    char buf[16];
    std::size_t len = 0;
    EXPECT_EQ(rpm_conn_send(conn, msg, sizeof msg), RPM_E_IO_ERROR);
    EXPECT_EQ(rpm_conn_recv(conn, buf, sizeof buf, &len), RPM_E_IO_ERROR);
    EXPECT_EQ(rpm_region_persist(region, 0, msg, sizeof msg), RPM_E_IO_ERROR);
    EXPECT_EQ(rpm_region_write(region, 0, msg, sizeof msg), RPM_E_IO_ERROR);
    EXPECT_EQ(rpm_region_read(region, 0, buf, sizeof buf), RPM_E_IO_ERROR);
    EXPECT_EQ(rpm_region_flush(region, 0, 8), RPM_E_IO_ERROR);
    EXPECT_EQ(rpm_region_atomic_write(region, 0, 1), RPM_E_IO_ERROR);
    EXPECT_NE(std::string(rpm_errormsg()), "");
    rpm_region* r = nullptr;
    EXPECT_EQ(rpm_region_open(conn, "r1", nullptr, &r), RPM_E_IO_ERROR);
    EXPECT_EQ(r, nullptr);
    // The handles stay valid: the region's getters answer from its grant,
    // the connection's from its handshake.
    std::uint64_t size = 0;
    CAPI_EXPECT_OK(rpm_region_get_size(region, &size));
    EXPECT_EQ(size, kRegionSize);
    int scheme = -1;
    CAPI_EXPECT_OK(rpm_conn_get_scheme(conn, &scheme));
    EXPECT_EQ(scheme, RPM_SCHEME_TCP);
    const char* json = nullptr;
    CAPI_EXPECT_OK(rpm_conn_get_server_profile(conn, &json));
    EXPECT_NE(json, nullptr);
    CAPI_EXPECT_OK(rpm_conn_close(conn));  // a second close is harmless
}

TEST_F(CapiConn, DeleteSetsNullAndItsRegionsFailAfterwards) {
    rpm_conn* c = conn.p;
    conn.p = nullptr;
    CAPI_ASSERT_OK(rpm_conn_delete(&c));
    EXPECT_EQ(c, nullptr);
    CAPI_EXPECT_OK(rpm_conn_delete(&c));  // *conn NULL does nothing
    EXPECT_EQ(rpm_conn_delete(nullptr), RPM_E_INVALID_ARGUMENT);
    EXPECT_EQ(rpm_conn_close(nullptr), RPM_E_INVALID_ARGUMENT);
    const char msg[] = "after delete";
    EXPECT_EQ(rpm_region_persist(region, 0, msg, sizeof msg), RPM_E_IO_ERROR);
    rpm_region* r = region.p;
    region.p = nullptr;
    CAPI_EXPECT_OK(rpm_region_delete(&r));
    EXPECT_EQ(r, nullptr);
    CAPI_EXPECT_OK(rpm_region_delete(&r));
    EXPECT_EQ(rpm_region_delete(nullptr), RPM_E_INVALID_ARGUMENT);
}

TEST_F(CapiConn, LongTimeoutsWork) {
    // Any timeout_ms > 0 is accepted (client.h); 10^12 ms (about 31 years)
    // must not expire before the connection is made.
    ClientOpts o;
    CAPI_ASSERT_OK(make_client_opts(o));
    CAPI_ASSERT_OK(rpm_client_opts_set_timeout(o, std::int64_t{1000000000000}));
    Conn c;
    CAPI_ASSERT_OK(rpm_conn_new(server.uri().c_str(), o, c.out()));
    Region r;
    CAPI_ASSERT_OK(rpm_region_open(c, "r1", nullptr, r.out()));
    CAPI_ASSERT_OK(rpm_region_persist(r, 0, "long", 4));
}

TEST_F(CapiConn, LargestTimeoutDoesNotExpireAtOnce) {
    // INT64_MAX ms once overflowed the deadline steady_clock::now() +
    // timeout: rpm_conn_new failed at once ("the handshake timed out").
    // Waits over ten years now count as ten years (src/core/longest_wait.hpp).
    ClientOpts o;
    CAPI_ASSERT_OK(make_client_opts(o));
    CAPI_ASSERT_OK(rpm_client_opts_set_timeout(o, INT64_MAX));
    Conn c;
    CAPI_ASSERT_OK(rpm_conn_new(server.uri().c_str(), o, c.out()));
}

TEST(CapiConnTls, PersistOverTlsVerifiedAgainstItsCa) {
    TempDir dir;
    const std::string cert = dir.path("cert.pem"), key = dir.path("key.pem");
    const std::string cmd = "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost "
                            "-addext subjectAltName=IP:127.0.0.1 -keyout " + key + " -out " + cert +
                            " >/dev/null 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << "openssl could not make a test certificate";
    ServerOpts so;
    CAPI_ASSERT_OK(make_server_opts(dir, {{"r0", 65536}}, so));
    CAPI_ASSERT_OK(rpm_server_opts_set_tls(so, cert.c_str(), key.c_str()));
    TestServer server;
    CAPI_ASSERT_OK(server.start(so));
    ClientOpts co;
    CAPI_ASSERT_OK(make_client_opts(co));
    CAPI_ASSERT_OK(rpm_client_opts_set_tls(co, 1, cert.c_str()));
    Conn conn;
    CAPI_ASSERT_OK(rpm_conn_new(server.uri().c_str(), co, conn.out()));
    Region region;
    CAPI_ASSERT_OK(rpm_region_open(conn, "r0", nullptr, region.out()));
    const auto bytes = pattern(1000, 9);
    CAPI_ASSERT_OK(rpm_region_persist(region, 500, bytes.data(), bytes.size()));
    std::vector<unsigned char> back(bytes.size());
    CAPI_ASSERT_OK(rpm_region_read(region, 500, back.data(), back.size()));
    EXPECT_EQ(back, bytes);
    // A plain client does not get through a TLS listener.
    Conn plain;
    EXPECT_LT(connect(server.uri(), plain), 0);
    EXPECT_EQ(plain.get(), nullptr);
}

TEST(CapiConnTls, ServerRefusesMissingCertificateFiles) {
    TempDir dir;
    ServerOpts so;
    CAPI_ASSERT_OK(make_server_opts(dir, {{"r0", 65536}}, so));
    CAPI_ASSERT_OK(rpm_server_opts_set_tls(so, dir.path("missing-cert.pem").c_str(),
                                           dir.path("missing-key.pem").c_str()));
    rpm_server* s = nullptr;
    EXPECT_LT(rpm_server_start(so, &s), 0);
    EXPECT_EQ(s, nullptr);
    EXPECT_NE(std::string(rpm_errormsg()).find("missing-"), std::string::npos) << rpm_errormsg();
}

}  // namespace
}  // namespace capi
