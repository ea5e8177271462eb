// The TCP server transport: an acceptor and one session per connection on
// a single I/O thread. A session reads frames, runs them through Core in
// order (so a flush covers every write before it), and answers each with a
// response; answers to one read batch leave in one gathered write.
#pragma once

#include "server/core.hpp"
#include "server/listener.hpp"
#include "transport/tcp/read_buffer.hpp"
#include "transport/tcp/stream.hpp"

#include <deque>
#include <mutex>
#include <thread>
#include <unordered_map>

namespace rpm::tcp {

class TcpListener;

class TcpSession : public std::enable_shared_from_this<TcpSession> {
public:
    TcpSession(TcpListener& owner, tcp::socket socket);
    void start();
    void send_message(std::vector<std::byte> frame);
    void close() noexcept;
    [[nodiscard]] std::uint64_t id() const noexcept { return session_.id; }

private:
    void greet();
    void read_more();
    void on_frame(const proto::Header& h, std::span<const std::byte> body);
    void on_auth(const proto::Header& h, std::span<const std::byte> body);
    void on_request(const proto::Header& h, std::span<const std::byte> body);
    Result<std::vector<std::byte>> run_request(const proto::Header& h, std::span<const std::byte> body);
    void respond(std::uint32_t id, const Result<void>& r, std::span<const std::byte> data = {});
    void refuse_and_close(std::uint32_t id, const Error& e);
    void enqueue(std::vector<std::byte> frame);
    void write_next();

    TcpListener& owner_;
    Stream stream_;
    proto::FrameReader reader_;
    server::Session session_;
    ReadBuffer rbuf_;  // pinned, from the process-wide pool
    std::deque<std::vector<std::byte>> outq_;
    bool writing_ = false;
    bool closing_ = false;  ///< close once the queued answers are written
    bool closed_ = false;
};

class TcpListener final : public server::Listener {
public:
    explicit TcpListener(server::Core& core);
    ~TcpListener() override;
    Result<void> start(const std::string& host, std::uint16_t port);
    [[nodiscard]] std::uint16_t port() const noexcept override { return port_; }
    void stop() noexcept override;
    Result<void> send(std::uint64_t session, std::span<const std::byte> payload) override;

    server::Core& core() noexcept { return core_; }
    asio::ssl::context* tls() noexcept { return tls_.get(); }
    void forget(std::uint64_t session);

private:
    void accept_next();
    Result<void> setup_tls();

    server::Core& core_;
    asio::io_context io_;
    std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_;
    tcp::acceptor acceptor_;
    std::unique_ptr<asio::ssl::context> tls_;
    std::thread thread_;
    std::uint16_t port_ = 0;
    std::mutex mu_;
    std::unordered_map<std::uint64_t, std::weak_ptr<TcpSession>> sessions_;
};

} // namespace rpm::tcp
