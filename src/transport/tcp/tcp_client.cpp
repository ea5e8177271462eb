// TcpClient: connection set-up, the handshake, the read/write loops and
// failure. Everything after start() runs on the connection's I/O thread;
// the public operations only post work to it.
#include "transport/tcp/tcp_client.hpp"

namespace rpm::tcp {

std::error_code io_error_code() noexcept { return errc::io_error; }

TcpClient::TcpClient(const ClientOptions& opts, std::uint32_t max_payload)
    : opts_(opts), work_(asio::make_work_guard(io_)), stream_(tcp::socket(io_)), reader_(max_payload) {}

TcpClient::~TcpClient() { close(); }

Result<void> TcpClient::start(const std::string& host, std::uint16_t port) {
    auto ready = ready_.get_future();
    thread_ = std::thread([this] { io_.run(); });
    auto resolver = std::make_shared<tcp::resolver>(io_);
    resolver->async_resolve(host, std::to_string(port),
        [this, resolver, host, port](const boost::system::error_code& ec, tcp::resolver::results_type res) {
            if (ec) return fail(io_error_code(), "cannot resolve " + host + ": " + ec.message());
            asio::async_connect(stream_.socket(), res,
                [this, host, port](const boost::system::error_code& e, const tcp::endpoint&) {
                    if (e) return fail(io_error_code(), "cannot connect to " + host + ":" +
                                                            std::to_string(port) + ": " + e.message());
                    stream_.socket().set_option(tcp::no_delay(true));
                    if (!opts_.tls) return state_ = State::awaiting_hello, read_more();
                    tls_ctx_ = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_client);
                    if (opts_.tls_ca) {
                        boost::system::error_code le;
                        tls_ctx_->load_verify_file(opts_.tls_ca->string(), le);
                        if (le) return fail(io_error_code(), "TLS CA " + opts_.tls_ca->string() + ": " + le.message());
                        tls_ctx_->set_verify_mode(asio::ssl::verify_peer);
                    }
                    stream_.start_tls(*tls_ctx_, asio::ssl::stream_base::client, [this](const boost::system::error_code& he) {
                        if (he) return fail(io_error_code(), "TLS handshake failed: " + he.message());
                        state_ = State::awaiting_hello;
                        read_more();
                    });
                });
        });
    if (ready.wait_for(opts_.timeout) != std::future_status::ready) {
        close();
        return Error(errc::io_error, "connecting to " + host + ":" + std::to_string(port) + " timed out");
    }
    return ready.get();
}

void TcpClient::finish_handshake(Result<void> r) {
    if (ready_set_) return;
    ready_set_ = true;
    ready_.set_value(std::move(r));
}

void TcpClient::read_more() {
    stream_.read_some(rbuf_.bytes(), [this](const boost::system::error_code& ec, std::size_t n) {
        if (ec) return fail(io_error_code(), ec == asio::error::eof ? "the server closed the connection"
                                                                   : "connection lost: " + ec.message());
        reader_.feed(rbuf_.bytes().first(n));
        while (state_ != State::closed) {
            auto frame = reader_.next();
            if (!frame) break;
            on_frame(frame->first, frame->second);
        }
        if (reader_.error()) return fail(io_error_code(), "bad frame from server: " + reader_.error()->message());
        if (state_ != State::closed) read_more();
    });
}

void TcpClient::enqueue(std::vector<std::byte> frame) {
    outq_.push_back(std::move(frame));
    if (!writing_) write_next();
}

void TcpClient::write_next() {
    // Everything queued goes out in one gathered write: a persist's write
    // and flush frames leave in one segment.
    auto batch = std::make_shared<std::vector<std::vector<std::byte>>>();
    while (!outq_.empty()) batch->push_back(std::move(outq_.front())), outq_.pop_front();
    std::vector<asio::const_buffer> bufs;
    for (const auto& f : *batch) bufs.emplace_back(f.data(), f.size());
    writing_ = true;
    auto handler = [this, batch](const boost::system::error_code& ec, std::size_t) {
        writing_ = false;
        if (ec) return fail(io_error_code(), "send failed: " + ec.message());
        if (!outq_.empty() && state_ != State::closed) write_next();
    };
    stream_.write_all(bufs, handler);
}

void TcpClient::fail(std::error_code ec, const std::string& why) {
    if (state_ == State::closed) return;
    state_ = State::closed;
    stream_.close();
    finish_handshake(Error(ec, why));
    auto pending = std::move(pending_);
    pending_.clear();
    for (auto& [id, reply] : pending) reply(ec, nullptr, {});
    auto waiters = std::move(recv_waiters_);
    recv_waiters_.clear();
    for (auto& [buf, done] : waiters) done(ec, 0);
    outq_.clear();
}

void TcpClient::close() noexcept {
    if (!thread_.joinable()) return;
    if (std::this_thread::get_id() == thread_.get_id()) {
        fail(errc::io_error, "connection closed");
        work_.reset();
        return;
    }
    asio::post(io_, [this] { fail(errc::io_error, "connection closed"); });
    work_.reset();
    thread_.join();
}

} // namespace rpm::tcp
