// The TCP server transport: an acceptor and several I/O threads (one
// EventLoop each); every session lives on one of them, so it runs its
// frames through Service in order (a flush covers every write before it) and
// answers in order. A session reads what the socket has, runs every whole
// frame, and sends all the answers of that batch in one gathered write.
#pragma once

#include "server/service.hpp"
#include "server/listener.hpp"
#include "server/admission.hpp"
#include "transport/tcp/event_loop.hpp"
#include "transport/tcp/out_queue.hpp"
#include "transport/tcp/read_buffer.hpp"
#include "transport/tcp/stream.hpp"

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace rpm::tcp {

class TcpListener;

class TcpSession : public std::enable_shared_from_this<TcpSession>, private EventLoop::Watcher {
public:
    /// `peer`: the client's address, counted by the listener's Admission
    /// until the session authenticates or closes.
    TcpSession(TcpListener& owner, EventLoop& loop, Stream stream, std::string peer);
    /// On the session's loop: TLS, then the Hello.
    void start();
    /// On the session's loop.
    void send_message(std::span<const std::byte> payload);
    /// On the session's loop. Idempotent.
    void close() noexcept;
    [[nodiscard]] std::uint64_t id() const noexcept { return session_.id; }
    [[nodiscard]] EventLoop& loop() noexcept { return loop_; }
    /// Thread-safe: authenticated (the handshake timeout no longer applies).
    [[nodiscard]] bool set_up() const noexcept { return set_up_.load(std::memory_order_acquire); }
    [[nodiscard]] std::chrono::steady_clock::time_point accepted() const noexcept { return accepted_; }
    /// On the session's loop: close it unless it authenticated meanwhile.
    void handshake_timed_out();
    /// On the session's loop: if it holds a grant of an older term on `r`,
    /// say goodbye with errc::fenced and close.
    void fence(const server::Region* r, std::uint64_t term);

private:
    void on_events(std::uint32_t events) override;
    void step_tls();
    void greet();
    void read_frames();
    void process_frames();
    [[nodiscard]] bool view_blocks() const noexcept { return view_pending_ && !outq_.empty(); }
    /// The client has not taken its answers (ServerOptions::max_queued_answer_bytes),
    /// or a read answer from the region must leave first: read no requests.
    [[nodiscard]] bool too_far_ahead() const noexcept;
    void on_frame(const proto::Header& h, std::span<const std::byte> body);
    void on_auth(const proto::Header& h, std::span<const std::byte> body);
    void run_request(const proto::Header& h, std::span<const std::byte> body);
    void run_open_region(std::uint32_t id, std::span<const std::byte> body);
    void run_read(std::uint32_t id, std::span<const std::byte> body);
    /// Answer; a fenced error also ends the session (say_fenced).
    void respond(std::uint32_t id, const Result<void>& r);
    void queue_response(std::uint32_t id, const Result<void>& r);
    void refuse_and_close(std::uint32_t id, const Error& e);
    void say_fenced(std::string why);
    void flush();
    void update_watch();

    TcpListener& owner_;
    EventLoop& loop_;
    Stream stream_;
    ReadBuffer rbuf_;  ///< pinned, from the process-wide pool: the reader's primary buffer
    proto::FrameReader reader_;
    server::Session session_;
    OutQueue outq_;
    proto::Persist persist_;  ///< reused by every persist request: no allocation per request
    bool tls_pending_ = false;
    bool view_pending_ = false;  ///< outq_ holds region bytes (a read answer) not yet sent
    bool closing_ = false;  ///< close once the queued answers are written
    bool closed_ = false;
    bool watched_ = false;
    std::uint32_t watch_events_ = 0;
    const std::string peer_;
    const std::chrono::steady_clock::time_point accepted_ = std::chrono::steady_clock::now();
    std::atomic<bool> set_up_{false};  ///< authenticated; until then the listener's Admission counts it
};

class TcpListener final : public server::Listener, private EventLoop::Watcher, private server::FenceHook {
public:
    explicit TcpListener(server::Service& service);
    ~TcpListener() override;
    Result<void> start(const std::string& host, std::uint16_t port);
    [[nodiscard]] std::uint16_t port() const noexcept override { return port_; }
    void stop() noexcept override;
    Result<void> send(std::uint64_t session, std::span<const std::byte> payload) override;

    server::Service& service() noexcept { return service_; }
    const TlsContext* tls() const noexcept { return tls_ ? &*tls_ : nullptr; }
    /// On the session's loop, once it is closed: drop it after this batch.
    void forget(std::uint64_t session);
    /// The session from `peer` authenticated, or closed before it did.
    void handshake_over(const std::string& peer);
    server::Admission& admission() noexcept { return admission_; }
    [[nodiscard]] std::size_t io_threads() const noexcept { return loops_.size(); }

private:
    struct IoThread {
        EventLoop loop;
        std::thread thread;
    };
    void on_events(std::uint32_t events) override;  // the listening socket
    /// Loop 0, about every quarter of the handshake timeout: close sessions
    /// past it, and resume accepting after a pause.
    void tick();
    /// accept failed for lack of resources (EMFILE...): stop watching the
    /// listening socket until the next tick, rather than spin on it.
    void pause_accepting(int err);
    /// Every session is told, on its own loop (its grants are its own).
    void region_fenced(server::Region& r, std::uint64_t term) noexcept override;

    server::Service& service_;
    std::optional<TlsContext> tls_;
    int listen_fd_ = -1;
    std::uint16_t port_ = 0;
    std::vector<std::unique_ptr<IoThread>> loops_;
    std::size_t next_loop_ = 0;  ///< round robin; loop 0's thread only
    std::mutex mu_;
    std::unordered_map<std::uint64_t, std::shared_ptr<TcpSession>> sessions_;
    server::Admission admission_;  ///< under mu_ (its log() is thread-safe)
    bool accept_paused_ = false;  ///< loop 0's thread only
    std::atomic<bool> stopped_{false};
};

} // namespace rpm::tcp
