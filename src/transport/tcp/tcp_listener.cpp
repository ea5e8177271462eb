// TcpListener: bind, accept, and keep track of sessions for Server::send.
#include "transport/tcp/tcp_listener.hpp"

namespace rpm::tcp {

TcpListener::TcpListener(server::Core& core)
    : core_(core), work_(asio::make_work_guard(io_)), acceptor_(io_) {}

TcpListener::~TcpListener() { stop(); }

Result<void> TcpListener::setup_tls() {
    const auto& tls = core_.options().tls;
    if (!tls) return {};
    tls_ = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_server);
    boost::system::error_code ec;
    tls_->use_certificate_chain_file(tls->certificate.string(), ec);
    if (ec) return Error(errc::bad_config, "TLS certificate " + tls->certificate.string() + ": " + ec.message());
    tls_->use_private_key_file(tls->private_key.string(), asio::ssl::context::pem, ec);
    if (ec) return Error(errc::bad_config, "TLS private key " + tls->private_key.string() + ": " + ec.message());
    return {};
}

Result<void> TcpListener::start(const std::string& host, std::uint16_t port) {
    if (auto r = setup_tls(); !r) return r;
    boost::system::error_code ec;
    auto addr = asio::ip::make_address(host, ec);
    if (ec) return Error(errc::invalid_argument, "listen address '" + host + "' is not an IP address");
    tcp::endpoint ep(addr, port);
    const std::string where = "tcp://" + host + ":" + std::to_string(port);
    if (acceptor_.open(ep.protocol(), ec); ec) return Error(errc::io_error, where + ": " + ec.message());
    acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
    if (acceptor_.bind(ep, ec); ec) return Error(errc::io_error, "cannot bind " + where + ": " + ec.message());
    if (acceptor_.listen(asio::socket_base::max_listen_connections, ec); ec)
        return Error(errc::io_error, "cannot listen on " + where + ": " + ec.message());
    port_ = acceptor_.local_endpoint().port();
    // Made now rather than on the first accept, which then finds entries.
    (void)read_pool();
    accept_next();
    thread_ = std::thread([this] { io_.run(); });
    return {};
}

void TcpListener::accept_next() {
    acceptor_.async_accept([this](const boost::system::error_code& ec, tcp::socket socket) {
        if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
        if (!ec) {
            socket.set_option(tcp::no_delay(true));
            auto s = std::make_shared<TcpSession>(*this, std::move(socket));
            {
                std::lock_guard lock(mu_);
                sessions_[s->id()] = s;
            }
            s->start();
        }
        accept_next();
    });
}

void TcpListener::forget(std::uint64_t session) {
    std::lock_guard lock(mu_);
    sessions_.erase(session);
}

Result<void> TcpListener::send(std::uint64_t session, std::span<const std::byte> payload) {
    std::shared_ptr<TcpSession> s;
    {
        std::lock_guard lock(mu_);
        auto it = sessions_.find(session);
        if (it != sessions_.end()) s = it->second.lock();
    }
    if (!s) return Error(errc::invalid_argument, "no session " + std::to_string(session) + " on this listener");
    std::vector<std::byte> frame;
    proto::encode_message(frame, 0, payload);
    asio::post(io_, [s, frame = std::move(frame)]() mutable { s->send_message(std::move(frame)); });
    return {};
}

void TcpListener::stop() noexcept {
    if (!thread_.joinable()) return;
    asio::post(io_, [this] {
        boost::system::error_code ec;
        acceptor_.close(ec);
        std::vector<std::shared_ptr<TcpSession>> live;
        {
            std::lock_guard lock(mu_);
            for (auto& [id, w] : sessions_)
                if (auto s = w.lock()) live.push_back(std::move(s));
        }
        for (auto& s : live) s->close();
    });
    work_.reset();
    thread_.join();
}

} // namespace rpm::tcp

namespace rpm::server {

Result<std::unique_ptr<Listener>> listen_tcp(Core& core, const std::string& host, std::uint16_t port) {
    auto l = std::make_unique<tcp::TcpListener>(core);
    if (auto r = l->start(host, port); !r) return r.error();
    return std::unique_ptr<Listener>(std::move(l));
}

} // namespace rpm::server
