#pragma once
// One NVMe/TCP connection on the target: one queue (the admin queue or an
// I/O queue) of one controller. Between PDUs it waits in the target's
// Workers set without a thread; a worker serves it with blocking Asio
// socket calls while it has bytes (workers.hpp). Commands of a queue
// run in order, which NVMe allows (the host may see completions in any
// order, and in order is one). The session is NVMe/TCP's transport only:
// PDUs in and out, R2T and H2CData; what a command does is the queue's
// command core (queue_commands.hpp).

#include "nvmf/pdu/pdu.hpp"
#include "nvmf/target/queue_commands.hpp"
#include "nvmf/target/served_queue.hpp"

#include <rpm/nvmf.hpp>

#include <boost/asio/ip/tcp.hpp>

#include <atomic>
#include <chrono>
#include <string>
#include <deque>
#include <cstdint>
#include <memory>
#include <vector>

namespace rpm::nvmf::target {

/// What every NVMe/TCP session of a target needs.
struct SessionEnv {
    Registry* registry = nullptr;
    SharedStats* stats = nullptr;
    bool allow_hdgst = true;
    bool allow_ddgst = true;
    std::uint32_t max_h2c_data = 128 * 1024;
};

class Session final : public ServedQueue, private QueueTransport {
public:
    Session(boost::asio::ip::tcp::socket socket, const SessionEnv& env);
    ~Session();

    // Workers::Conn: serve the PDUs that arrived (the ICReq first), until
    // none is left read ahead (true) or the connection ends (false: the
    // host disconnected, a protocol error, or close()).
    int fd() const override { return fd_; }
    bool serve() override;
    void retire() override { finished_ = true; }
    /// From another thread: make serve() return soon (it wakes a parked
    /// session too: a shut-down socket is readable).
    void close() override;
    std::shared_ptr<Controller> controller() const override { return core_.controller(); }
    std::uint16_t qid() const override { return core_.qid(); }
    bool finished() const override { return finished_.load(); }
    /// ICReq and Connect done.
    bool set_up() const override { return core_.set_up(); }
    std::chrono::steady_clock::time_point accepted() const override { return accepted_; }
    const std::string& peer() const override { return peer_; }

private:
    // framing (session.cpp)
    bool handshake();
    /// Nothing read ahead and no capsule waiting: wait in the set.
    bool idle() const { return rx_pos_ == rx_len_ && pending_.empty(); }
    /// The end of a connection: shut down, give back the staging slot and
    /// the controller's queue. RETURN VALUE: false (serve()'s).
    bool end();
    bool read_pdu(std::vector<std::uint8_t>& buf, pdu::Pdu& out);
    void terminate(const pdu::Refusal& r, std::span<const std::uint8_t> header);
    bool send(std::span<const std::uint8_t> header, std::span<const std::uint8_t> data);
    /// QueueTransport: the CapsuleResp, preceded by `c2h` as one C2HData
    /// PDU when it is not empty: one write for both, so the host wakes once.
    bool complete(const wire::Sqe& sqe, const wire::Cqe& cqe, std::span<const std::uint8_t> c2h) override;
    /// Copy `n` received bytes into `dst`, from what was read ahead first.
    bool receive(std::uint8_t* dst, std::size_t n);

    // capsules (session_capsules.cpp)
    /// A CapsuleCmd PDU: its SGL as NVMe/TCP carries data, to the core.
    bool on_capsule(const pdu::Pdu& p);
    bool run_pending();
    /// QueueTransport: an R2T for the whole transfer and its H2CData PDUs
    /// (capsules that arrive meanwhile wait in pending_).
    bool pull(const wire::Sqe& sqe, std::span<std::uint8_t> into, bool& intact) override;

    boost::asio::ip::tcp::socket socket_;
    int fd_ = -1;
    SessionEnv env_;
    bool handshaken_ = false;
    bool ended_ = false;
    std::vector<std::uint8_t> pdu_buf_;  // the PDU being read (kept between PDUs: no allocation each)
    pdu::Context ctx_;
    std::uint32_t send_align_ = 4;        // (hpda + 1) * 4
    std::uint16_t next_ttag_ = 1;
    QueueCommands core_{QueueEnv{env_.registry, env_.stats}, *this};
    // Read-ahead: one recv usually brings a whole capsule (and often the
    // next), instead of one for the common header and one for the rest.
    std::vector<std::uint8_t> rx_ = std::vector<std::uint8_t>(16384);
    std::size_t rx_pos_ = 0, rx_len_ = 0;
    // Capsules that arrived while a command waited for its H2CData: hosts
    // pipeline commands, so they run next, in order (at most sqsize + 1).
    std::deque<std::vector<std::uint8_t>> pending_;
    std::atomic<bool> finished_{false};
    std::atomic<bool> closing_{false};
    const std::chrono::steady_clock::time_point accepted_ = std::chrono::steady_clock::now();
    std::string peer_;
};

} // namespace rpm::nvmf::target
