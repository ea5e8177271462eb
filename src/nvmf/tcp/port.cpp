// NVMe/TCP's port: an Asio acceptor and the thread that takes its
// connections, each an NVMe/TCP queue (queue.hpp) handed to the Target's
// admit. NVMe/TCP's entry in the fabric table (serve/fabric.hpp).
#include "nvmf/serve/fabric.hpp"
#include "nvmf/tcp/queue.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <sys/socket.h>

#include <atomic>
#include <string>
#include <thread>

namespace rpm::nvmf::target {

namespace {

namespace asio = boost::asio;

class TcpPort final : public FabricPort {
public:
    TcpPort(const TargetOptions& o, SharedStats* stats, AdmitQueue admit)
        : env_{nullptr, stats, o.allow_header_digest, o.allow_data_digest, o.max_h2c_data}, admit_(std::move(admit)) {}
    ~TcpPort() override {
        stop();
        boost::system::error_code ec;
        acceptor_.close(ec);
    }

    /// Bind and listen. ERRORS: as Fabric::listen.
    Result<void> listen(const std::string& address, std::uint16_t port) {
        boost::system::error_code ec;
        auto addr = asio::ip::make_address(address, ec);
        if (ec) return Error(errc::invalid_argument, "address '" + address + "': " + ec.message());
        asio::ip::tcp::endpoint ep(addr, port);
        acceptor_.open(ep.protocol(), ec);
        if (!ec) acceptor_.set_option(asio::ip::tcp::acceptor::reuse_address(true), ec);
        if (!ec) acceptor_.bind(ep, ec);
        if (!ec) acceptor_.listen(64, ec);
        if (ec) return Error(errc::io_error, "listen on " + address + ":" + std::to_string(port) + ": " + ec.message());
        port_ = acceptor_.local_endpoint().port();
        return {};
    }

    [[nodiscard]] std::uint16_t port() const override { return port_; }

    void start(Registry* registry) override {
        env_.registry = registry;
        thread_ = std::thread([this] { accept_loop(); });
    }

    void stop() override {
        stopping_ = true;
        // shutdown() on a listening socket makes the blocking accept() return.
        if (acceptor_.is_open()) ::shutdown(acceptor_.native_handle(), SHUT_RDWR);
        if (thread_.joinable()) thread_.join();
    }

private:
    void accept_loop() {
        while (!stopping_) {
            boost::system::error_code ec;
            asio::ip::tcp::socket s(io_);
            acceptor_.accept(s, ec);
            // A refused queue (and its socket) goes when this one does, unserved.
            if (!ec) admit_(std::make_shared<TcpQueue>(std::move(s), env_));
        }
    }

    TcpEnv env_;
    AdmitQueue admit_;
    asio::io_context io_;
    asio::ip::tcp::acceptor acceptor_{io_};
    std::uint16_t port_ = 0;
    std::atomic<bool> stopping_{false};
    std::thread thread_;
};

Result<std::unique_ptr<FabricPort>> listen_tcp(const TargetOptions& o, SharedStats* stats, AdmitQueue admit) {
    auto p = std::make_unique<TcpPort>(o, stats, std::move(admit));
    if (auto ok = p->listen(o.address, o.port); !ok) return ok.error();
    return std::unique_ptr<FabricPort>(std::move(p));
}

} // namespace

const Fabric tcp_fabric{listen_tcp};

} // namespace rpm::nvmf::target
