// Replica nodes for the replicator's tests: each an in-process rpm::Server
// on 127.0.0.1 serving one region file in /dev/shm, which can be stopped
// and started again on the same port, and a pausable TCP proxy in front of
// a node (a hung or partitioned replica that still holds its connection).
#pragma once

#include <rpm/replication.hpp>
#include <rpm/server.hpp>

#include <boost/asio.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>

namespace rpm::test {

inline const std::string kSecret = "replication-test-secret";

class ReplicaNode {
public:
    ReplicaNode(const std::filesystem::path& dir, std::string name, std::size_t size)
        : path_(dir / (name + ".pool")), size_(size) {}
    ~ReplicaNode() { stop(); }

    /// Start serving; port 0 the first time, the same port afterwards.
    void start() {
        ServerOptions o;
        o.listen = {"tcp://127.0.0.1:" + std::to_string(port_)};
        o.secrets["primary"] = kSecret;
        o.regions.push_back({"kv", path_, size_, true, {}});
        auto s = Server::start(std::move(o));
        ASSERT_TRUE(s) << s.error().message();
        server_.emplace(std::move(*s));
        port_ = server_->port(Scheme::tcp);
    }
    void stop() {
        if (server_) server_->stop();
        server_.reset();
    }
    /// The node's disk is replaced: a blank region of the same size.
    void wipe() {
        std::filesystem::remove(path_);
    }
    [[nodiscard]] std::string uri() const { return "tcp://127.0.0.1:" + std::to_string(port_); }
    [[nodiscard]] const std::filesystem::path& path() const { return path_; }
    [[nodiscard]] std::uint16_t port() const { return port_; }
    /// The region's data area as the server's file holds it.
    [[nodiscard]] std::string data(std::size_t off, std::size_t n) const {
        std::ifstream f(path_, std::ios::binary);
        f.seekg(static_cast<std::streamoff>(kReplicaHeaderSize + off));
        std::string s(n, '\0');
        f.read(s.data(), static_cast<std::streamsize>(n));
        return s;
    }

private:
    std::filesystem::path path_;
    std::size_t size_;
    std::uint16_t port_ = 0;
    std::optional<Server> server_;
};

inline ReplicaSpec spec_for(const std::string& uri) {
    ReplicaSpec s;
    s.uri = uri;
    s.region = "kv";
    s.client.client_id = "primary";
    s.client.secret = kSecret;
    s.client.timeout = std::chrono::milliseconds(3000);
    return s;
}

/// Forwards 127.0.0.1:port() to a node. pause(true) stops forwarding in
/// both directions while keeping the connections open, as a hung node or a
/// partition does; bytes wait in the kernel until pause(false). A new
/// connection is still accepted while paused, so a dial hangs in its
/// handshake (a black hole). refuse(true) closes each connection as soon as
/// it carries a byte and each new one as it is accepted (a node that is
/// down), counting those (refused()). delay(d) holds each chunk d before
/// passing it on, each way (a slow link: TCP retransmitting).
/// swallow(true) takes each new connection and never forwards it, even
/// after swallow(false): a connect whose SYN was lost, which hangs until its
/// dial gives up however soon the link returns (counted: swallowed()).
class PausableProxy {
public:
    explicit PausableProxy(std::uint16_t target) : target_(target), acceptor_(io_, {boost::asio::ip::address_v4::loopback(), 0}) {
        accept();
        thread_ = std::thread([this] { io_.run(); });
    }
    ~PausableProxy() {
        io_.stop();
        thread_.join();
    }
    void pause(bool on) { paused_ = on; }
    void refuse(bool on) { refusing_ = on; }
    void swallow(bool on) { swallowing_ = on; }
    [[nodiscard]] unsigned swallowed() const { return swallowed_; }
    void delay(std::chrono::milliseconds d) { delay_ms_ = static_cast<unsigned>(d.count()); }
    [[nodiscard]] unsigned refused() const { return refused_; }
    [[nodiscard]] std::string uri() const { return "tcp://127.0.0.1:" + std::to_string(acceptor_.local_endpoint().port()); }

private:
    using tcp = boost::asio::ip::tcp;
    struct Pipe {
        std::shared_ptr<tcp::socket> from, to;
        std::array<char, 65536> buf{};
    };
    void accept() {
        auto client = std::make_shared<tcp::socket>(io_);
        acceptor_.async_accept(*client, [this, client](boost::system::error_code ec) {
            if (ec) return;
            if (swallowing_) {
                ++swallowed_;
                held_.push_back(client);  // open, never read: on the io thread only
                return accept();
            }
            if (refusing_) {
                ++refused_;
                client->close(ec);
                return accept();
            }
            auto server = std::make_shared<tcp::socket>(io_);
            boost::system::error_code cec;
            server->connect({boost::asio::ip::address_v4::loopback(), target_}, cec);
            if (!cec) {
                server->set_option(tcp::no_delay(true));
                client->set_option(tcp::no_delay(true));
                pump(std::make_shared<Pipe>(Pipe{client, server}));
                pump(std::make_shared<Pipe>(Pipe{server, client}));
            }
            accept();
        });
    }
    void pump(std::shared_ptr<Pipe> p) {
        p->from->async_read_some(boost::asio::buffer(p->buf), [this, p](boost::system::error_code ec, std::size_t n) {
            if (ec) return close(p);
            forward(p, n);
        });
    }
    // Checked after the read, so nothing read while paused goes through.
    void forward(std::shared_ptr<Pipe> p, std::size_t n, bool delayed = false) {
        if (refusing_) return close(p);
        if (paused_) {
            auto t = std::make_shared<boost::asio::steady_timer>(io_, std::chrono::milliseconds(5));
            t->async_wait([this, p, t, n, delayed](boost::system::error_code) { forward(p, n, delayed); });
            return;
        }
        if (const unsigned ms = delay_ms_; ms > 0 && !delayed) {
            auto t = std::make_shared<boost::asio::steady_timer>(io_, std::chrono::milliseconds(ms));
            t->async_wait([this, p, t, n](boost::system::error_code) { forward(p, n, true); });
            return;
        }
        boost::asio::async_write(*p->to, boost::asio::buffer(p->buf.data(), n),
                                 [this, p](boost::system::error_code ec, std::size_t) {
                                     if (ec) return close(p);
                                     pump(p);
                                 });
    }
    static void close(const std::shared_ptr<Pipe>& p) {
        boost::system::error_code ec;
        p->from->close(ec);
        p->to->close(ec);
    }

    std::uint16_t target_;
    boost::asio::io_context io_;
    tcp::acceptor acceptor_;
    std::thread thread_;
    std::atomic<bool> paused_{false}, refusing_{false}, swallowing_{false};
    std::atomic<unsigned> refused_{0}, delay_ms_{0}, swallowed_{0};
    std::vector<std::shared_ptr<tcp::socket>> held_;
};

} // namespace rpm::test
