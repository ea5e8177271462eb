// The TCP client transport. One connection, one I/O thread (an EventLoop
// of an IoGroup: its own, or one it shares with other connections) for the
// callback forms; the synchronous forms drive the socket from the
// caller's thread when nothing else is in flight.
//
// Requests are pipelined in order and the server answers in order, so the
// pending requests are a FIFO checked against each answer's request id.
// Who touches the socket:
//   - sending: whoever queues a request, under mu_, without blocking
//     (EPOLLOUT hands a remainder to the I/O thread); requests queued by
//     completions on the I/O thread leave together after the batch;
//   - receiving: the I/O thread while it watches the socket, or a
//     synchronous caller ("driver") that owns the socket for its call: it
//     sends its request, blocks in recv for the answer and parses it itself,
//     so a blocking call costs what the callback form costs, without two
//     thread hand-offs. The I/O thread stops watching when it finds a
//     driver; the driver hands back what else it read;
//   - or a thread driving the connection's IoGroup (client/io_group.hpp): a
//     request that thread sends claims the connection until its drive
//     ends; it polls the socket and runs the completions itself, and
//     anyone still sends (the receive side alone is the driver's).
// TLS connections never drive from the caller's thread: OpenSSL can raise
// SIGPIPE, which rpm's own threads block and an application's may not.
#pragma once

#include "client/io_group.hpp"
#include "client/transport.hpp"
#include "transport/tcp/event_loop.hpp"
#include "transport/tcp/out_queue.hpp"
#include "transport/tcp/read_buffer.hpp"
#include "transport/tcp/stream.hpp"

#include <poll.h>

#include <deque>
#include <future>
#include <mutex>
#include <optional>
#include <thread>

namespace rpm::tcp {

class TcpClient final : public client::Transport, private EventLoop::Watcher {
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
    void persist(const proto::RegionGrant& g, std::span<const proto::Slice> slices, client::Done done) override;
    void send(std::span<const std::byte> payload, client::Done done) override;
    void recv(std::span<std::byte> out, client::RecvDone done) override;
    Result<void> call(client::Start start, std::chrono::milliseconds timeout) override;
    [[nodiscard]] const std::string& profile_json() const noexcept override { return profile_; }
    [[nodiscard]] Scheme scheme() const noexcept override { return Scheme::tcp; }
    void close() noexcept override;

    /// A completion to run outside mu_ (on the I/O thread unless direct,
    /// or on the thread driving the group).
    struct Completion {
        client::Done done;
        client::RecvDone recv_done;
        std::function<void(Result<proto::RegionGrant>)> region_done;
        std::optional<Result<proto::RegionGrant>> grant;
        Error err;  ///< code {}: success (no text, no allocation)
        std::size_t n = 0;
    };
    using Completions = std::vector<Completion>;
    static void run(Completions& done);

    // The group's driver (client_drive.cpp; IoGroup holds its claim
    // lock around each).
    /// What to poll for: the socket, or fd -1 when the connection is closed.
    [[nodiscard]] pollfd driver_poll();
    /// Send and receive what poll said is ready; completions go to `out`.
    void driver_io(short revents, Completions& out);
    /// Requests still wait for answers.
    [[nodiscard]] bool owes_answers();
    /// The drive ended: the I/O thread watches the socket again if
    /// anything is still expected from it.
    void release_claim();

private:
    enum class State { connecting, ready, closed };
    enum class Kind : std::uint8_t { status, read, region };
    struct Pending {
        std::uint32_t id = 0;
        Kind kind = Kind::status;
        bool direct = false;           ///< the driver's own call: completed on its thread
        const char* op = "request";    ///< what it asks, for an error's detail
        client::Done done;
        std::span<std::byte> out;      ///< read: where the data goes
        std::function<void(Result<proto::RegionGrant>)> region_done;
    };
    // Set-up (client.cpp).
    Result<void> handshake(const std::string& host, std::uint16_t port, Deadline deadline);
    Result<std::pair<proto::Header, std::vector<std::byte>>> read_frame_wait(Deadline deadline);

    // Queueing and sending (client_io.cpp).
    /// A non-owning callable that builds a request (its id given) into
    /// outq_: no allocation per request, unlike std::function.
    class Build {
    public:
        template <class F>
        Build(F& f) noexcept  // NOLINT: implicit on purpose, from a lambda
            : obj_(&f), call_([](void* o, std::uint32_t id) { (*static_cast<F*>(o))(id); }) {}
        void operator()(std::uint32_t id) const { call_(obj_, id); }

    private:
        void* obj_;
        void (*call_)(void*, std::uint32_t);
    };
    std::uint32_t next_id() noexcept { return next_id_++; }
    /// Queue and send a request. `refused`: complete it with that error
    /// instead (nothing is sent).
    void submit(Pending p, Build build);
    /// One request frame each (write() and persist() split what is larger).
    void write_frame(const proto::RegionGrant& g, std::uint64_t offset, std::span<const std::byte> data,
                     client::Done done);
    void persist_frame(const proto::RegionGrant& g, std::span<const proto::Slice> slices, client::Done done);
    void read_frame(const proto::RegionGrant& g, std::uint64_t offset, std::span<std::byte> out, client::Done done);
    void flush_locked();
    void update_watch_locked();
    void on_events(std::uint32_t events) override;
    void read_locked(Completions& out);
    void drain_frames_locked(Completions& out);
    /// The calling thread drives the group: take the receive side (mu_ held).
    [[nodiscard]] bool claim_locked();
    void finish_dispatch(Completions& done);
    void run_on_loop(Completions done);
    void drive(std::unique_lock<std::mutex>& lock, Deadline deadline, bool& finished);
    void end_drive_locked();

    // Frames (client_frames.cpp).
    void on_frame_locked(const proto::Header& h, std::span<const std::byte> body, Completions& out);
    void on_answer_locked(const proto::Header& h, std::span<const std::byte> body, Completions& out);
    void on_goodbye_locked(std::span<const std::byte> body, Completions& out);
    void on_message_locked(std::span<const std::byte> body, Completions& out);
    void fail_locked(std::error_code ec, const std::string& why, Completions& out);
    void complete_locked(Pending& p, Error err, Completions& out);
    /// What a request fails with once the connection has failed or closed:
    /// its op, and why the connection went.
    [[nodiscard]] Error failed_locked(const char* op) const;

    ClientOptions opts_;
    std::uint32_t max_payload_;
    std::shared_ptr<IoGroup> io_;  ///< the thread this connection's I/O runs on: its own, or shared
    EventLoop& loop_;              ///< io_->loop()
    std::mutex mu_;
    Stream stream_;
    ReadBuffer rbuf_;  ///< pinned, from the process-wide pool: the reader's primary buffer
    proto::FrameReader reader_;
    OutQueue outq_;
    std::deque<Pending> pending_;
    std::uint32_t next_id_ = 1;  ///< under mu_
    State state_ = State::connecting;
    std::string failure_;        ///< why the connection closed
    std::string where_;          ///< tcp://host:port, for errors' details
    /// What later requests fail with: io_error, or the server's reason
    /// (errc::fenced) when it said goodbye with one.
    std::error_code failure_ec_ = make_error_code(errc::io_error);
    bool watched_ = false;       ///< the socket is in loop_'s epoll
    std::uint32_t watch_events_ = 0;
    bool dispatching_ = false;   ///< the I/O thread runs completions; it sends what they queue after
    bool driver_ = false;        ///< a synchronous caller or the group's driver owns the receive side
    bool claimed_ = false;       ///< ... and it is the group's driver
    std::thread::id driver_thread_;
    std::string profile_;
    std::deque<std::vector<std::byte>> inbox_;
    std::deque<std::pair<std::span<std::byte>, client::RecvDone>> recv_waiters_;
};

} // namespace rpm::tcp
