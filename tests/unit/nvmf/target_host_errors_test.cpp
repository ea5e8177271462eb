// rpm's NVMe/TCP host against peers that misbehave: nothing listening, a
// silent peer, a bad ICResp, a TermReq. Each is an Error, never a hang.
#include "target_support.hpp"

#include <thread>

namespace rpm::nvmf {
namespace {

/// A peer on 127.0.0.1 that reads the ICReq and answers `reply` (nothing
/// when empty), then waits for the host to go away.
class FakeController {
public:
    explicit FakeController(std::vector<std::uint8_t> reply) : acceptor_(io_, {boost::asio::ip::make_address("127.0.0.1"), 0}) {
        thread_ = std::thread([this, reply = std::move(reply)] {
            boost::asio::ip::tcp::socket s(io_);
            boost::system::error_code ec;
            acceptor_.accept(s, ec);
            if (ec) return;
            std::array<std::uint8_t, wire::ic_len> icreq{};
            boost::asio::read(s, boost::asio::buffer(icreq), ec);
            if (!reply.empty()) boost::asio::write(s, boost::asio::buffer(reply), ec);
            std::uint8_t c;
            s.read_some(boost::asio::buffer(&c, 1), ec);  // until the host closes
        });
    }
    ~FakeController() {
        ::shutdown(acceptor_.native_handle(), SHUT_RDWR);
        thread_.join();
    }
    std::uint16_t port() const { return acceptor_.local_endpoint().port(); }

private:
    boost::asio::io_context io_;
    boost::asio::ip::tcp::acceptor acceptor_;
    std::thread thread_;
};

HostOptions quick(std::uint16_t port) {
    auto o = testing::host_options(port);
    o.timeout = std::chrono::milliseconds(300);
    return o;
}

std::vector<std::uint8_t> icresp(std::uint32_t maxh2cdata) {
    std::vector<std::uint8_t> out(pdu::max_header_bytes);
    out.resize(pdu::encode_icresp(out, {.pfv = 0, .cpda = 0, .hdgst = false, .ddgst = false, .maxh2cdata = maxh2cdata}));
    return out;
}

TEST(NvmfHostErrors, NothingListeningIsAnIoError) {
    std::uint16_t port;
    {
        FakeController gone({});
        port = gone.port();
    }
    auto h = Host::connect(quick(port));
    ASSERT_FALSE(h);
    EXPECT_EQ(h.error(), errc::io_error);
}

TEST(NvmfHostErrors, SilentPeerTimesOut) {
    FakeController silent({});
    const auto t0 = std::chrono::steady_clock::now();
    auto h = Host::connect(quick(silent.port()));
    ASSERT_FALSE(h);
    EXPECT_EQ(h.error(), errc::io_error);
    EXPECT_NE(h.error().detail().find("timeout"), std::string::npos) << h.error().detail();
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
}

TEST(NvmfHostErrors, IcRespWithTooSmallMaxH2CDataIsRefused) {
    FakeController bad(icresp(100));
    auto h = Host::connect(quick(bad.port()));
    ASSERT_FALSE(h);
    EXPECT_EQ(h.error(), errc::protocol_error);
    EXPECT_NE(h.error().detail().find("maxh2cdata"), std::string::npos) << h.error().detail();
}

TEST(NvmfHostErrors, TermReqEndsTheConnectionWithItsFes) {
    std::vector<std::uint8_t> term(wire::term_max_plen);
    term.resize(pdu::encode_term(term, wire::PduType::c2h_term, {wire::Fes::invalid_header_field, 2}, {}));
    FakeController terminating(term);
    auto h = Host::connect(quick(terminating.port()));
    ASSERT_FALSE(h);
    EXPECT_EQ(h.error(), errc::protocol_error);
    EXPECT_NE(h.error().detail().find("FES 1"), std::string::npos) << h.error().detail();
}

TEST(NvmfHostErrors, ConnectWithoutSubsystemIsInvalidArgument) {
    HostOptions o;
    o.subnqn.clear();
    EXPECT_EQ(Host::connect(o).error(), errc::invalid_argument);
    o.subnqn = "x";
    o.queue_size = 1;
    EXPECT_EQ(Host::connect(o).error(), errc::invalid_argument);
    o.queue_size = 32;
    o.timeout = std::chrono::milliseconds(0);
    EXPECT_EQ(Host::connect(o).error(), errc::invalid_argument);
}

// discover() and connect() refuse a timeout that is not positive before
// opening any connection: the listener here never sees one arrive.
TEST(NvmfHostErrors, NonPositiveTimeoutIsRefusedBeforeConnecting) {
    boost::asio::io_context io;
    boost::asio::ip::tcp::acceptor listener(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
    auto o = testing::host_options(listener.local_endpoint().port());
    for (const auto t : {std::chrono::milliseconds(0), std::chrono::milliseconds(-1)}) {
        SCOPED_TRACE(t.count());
        o.timeout = t;
        auto d = Host::discover(o);
        ASSERT_FALSE(d);
        EXPECT_EQ(d.error(), errc::invalid_argument) << d.error().message();
        EXPECT_NE(d.error().detail().find("HostOptions::timeout"), std::string::npos) << d.error().detail();
        auto c = Host::connect(o);
        ASSERT_FALSE(c);
        EXPECT_EQ(c.error(), errc::invalid_argument) << c.error().message();
        EXPECT_NE(c.error().detail().find("timeout"), std::string::npos) << c.error().detail();
    }
    listener.non_blocking(true);
    boost::asio::ip::tcp::socket s(io);
    boost::system::error_code ec;
    listener.accept(s, ec);
    EXPECT_EQ(ec, boost::asio::error::would_block) << "a connection arrived: " << ec.message();
}

} // namespace
} // namespace rpm::nvmf
