// tcp:// over TLS (Asio SSL): a certificate made for the test with the
// openssl command, verified by the client against it as CA.
#include "common/server_fixture.hpp"

#include "tests/support/result.hpp"

#include <cstdlib>

namespace {
using namespace rpm;
using rpm::test::bytes_of;
using rpm::test::ok;

class TcpTls : public ::testing::Test {
protected:
    void SetUp() override {
        dir = std::filesystem::temp_directory_path() / ("rpm-tls-" + std::to_string(::getpid()));
        std::filesystem::create_directories(dir);
        const std::string cmd = "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost "
                                "-addext subjectAltName=IP:127.0.0.1 -keyout " + (dir / "key.pem").string() +
                                " -out " + (dir / "cert.pem").string() + " >/dev/null 2>&1";
        ASSERT_EQ(std::system(cmd.c_str()), 0) << "openssl could not make a test certificate";
        pool = dir / "kv.pool";
        ServerOptions o;
        o.listen = {"tcp://127.0.0.1:0"};
        o.secrets = {{"app", "pw"}};
        o.regions = {{"kv", pool, 1 << 16, true, {}}};
        o.tls = TlsOptions{dir / "cert.pem", dir / "key.pem"};
        auto s = Server::start(std::move(o));
        ASSERT_TRUE(s) << s.error().message();
        server.emplace(std::move(*s));
    }
    void TearDown() override {
        server.reset();
        std::filesystem::remove_all(dir);
    }
    Result<Connection> connect(bool tls, std::optional<std::filesystem::path> ca) {
        ClientOptions c;
        c.client_id = "app";
        c.secret = "pw";
        c.tls = tls;
        c.tls_ca = std::move(ca);
        c.timeout = std::chrono::seconds(2);
        return Client(c).connect("tcp://127.0.0.1:" + std::to_string(server->port(Scheme::tcp)));
    }
    std::filesystem::path dir, pool;
    std::optional<Server> server;
};

TEST_F(TcpTls, PersistOverVerifiedTls) {
    auto c = connect(true, dir / "cert.pem");
    ASSERT_TRUE(c) << c.error().message();
    auto r = c->open_region("kv");
    ASSERT_TRUE(r) << r.error().message();
    const std::string rec = "over TLS";
    ASSERT_TRUE(ok(r->persist(0, bytes_of(rec))));
    std::string back(rec.size(), '\0');
    ASSERT_TRUE(ok(r->read(0, std::as_writable_bytes(std::span(back.data(), back.size())))));
    EXPECT_EQ(back, rec);
}

TEST_F(TcpTls, PlainClientCannotTalkToATlsServer) {
    auto c = connect(false, std::nullopt);
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().code(), errc::io_error);
}

TEST_F(TcpTls, UntrustedCertificateIsRefused) {
    // A CA that did not sign the server's certificate.
    const auto other = dir / "other";
    std::filesystem::create_directories(other);
    const std::string cmd = "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=other -keyout " +
                            (other / "k.pem").string() + " -out " + (other / "c.pem").string() + " >/dev/null 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
    auto c = connect(true, other / "c.pem");
    ASSERT_FALSE(c);
    EXPECT_NE(c.error().message().find("TLS"), std::string::npos) << c.error().message();
}

} // namespace
