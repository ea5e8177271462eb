// The TCP client transport: one Asio I/O thread per connection, frames
// pipelined in order, responses matched to requests by request id.
#pragma once

#include "client/transport.hpp"
#include "transport/tcp/read_buffer.hpp"
#include "transport/tcp/stream.hpp"

#include <atomic>
#include <deque>
#include <future>
#include <optional>
#include <thread>
#include <unordered_map>

namespace rpm::tcp {

class TcpClient final : public client::Transport {
public:
    TcpClient(const ClientOptions& opts, std::uint32_t max_payload);
    ~TcpClient() override;

    /// Connect, (TLS,) handshake. Blocks up to opts.timeout.
    Result<void> start(const std::string& host, std::uint16_t port);

    Result<proto::RegionGrant> open_region(const proto::OpenRegion& req) override;
    void write(const proto::RegionGrant& g, std::uint64_t offset, std::span<const std::byte> data,
               client::Done done) override;
    void read(const proto::RegionGrant& g, std::uint64_t offset, std::span<std::byte> out,
              client::Done done) override;
    void atomic_write(const proto::RegionGrant& g, std::uint64_t offset, std::uint64_t value,
                      client::Done done) override;
    void flush(const proto::RegionGrant& g, std::span<const proto::Range> ranges, client::Done done) override;
    void send(std::span<const std::byte> payload, client::Done done) override;
    void recv(std::span<std::byte> out, client::RecvDone done) override;
    [[nodiscard]] const std::string& profile_json() const noexcept override { return profile_; }
    [[nodiscard]] std::string_view name() const noexcept override { return "tcp"; }
    void close() noexcept override;

private:
    // A pending request: called once with the response frame, or with an
    // error (header null) when the connection fails first.
    using Reply = std::function<void(std::error_code, const proto::Header*, std::span<const std::byte>)>;
    enum class State { connecting, awaiting_hello, awaiting_welcome, ready, closed };

    void post_request(std::vector<std::byte> frame, std::uint32_t id, Reply reply);
    std::uint32_t next_id() noexcept;
    void enqueue(std::vector<std::byte> frame);
    void write_next();
    void read_more();
    void on_frame(const proto::Header& h, std::span<const std::byte> body);
    void on_handshake_frame(const proto::Header& h, std::span<const std::byte> body);
    void on_message(std::span<const std::byte> body);
    void fail(std::error_code ec, const std::string& why);
    void finish_handshake(Result<void> r);
    static Reply status_reply(client::Done done);

    ClientOptions opts_;
    asio::io_context io_;
    std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_;
    std::thread thread_;
    std::unique_ptr<asio::ssl::context> tls_ctx_;
    Stream stream_;
    proto::FrameReader reader_;
    ReadBuffer rbuf_;  // pinned, from the process-wide pool
    std::deque<std::vector<std::byte>> outq_;
    bool writing_ = false;
    std::unordered_map<std::uint32_t, Reply> pending_;
    std::atomic<std::uint32_t> next_id_{1};
    State state_ = State::connecting;
    client::HandshakeState hs_;
    std::string profile_;
    std::promise<Result<void>> ready_;
    bool ready_set_ = false;
    std::deque<std::vector<std::byte>> inbox_;
    std::deque<std::pair<std::span<std::byte>, client::RecvDone>> recv_waiters_;
};

} // namespace rpm::tcp
