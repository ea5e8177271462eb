#pragma once
// One NVMe/TCP connection on the target: one queue (the admin queue or an
// I/O queue) of one controller. Between PDUs it waits in the target's
// Workers set without a thread; a worker serves it with blocking Asio
// socket calls while it has bytes (detail/workers.hpp). Commands of a queue
// run in order, which NVMe allows (the host may see completions in any
// order, and in order is one).

#include "nvmf/detail/controller.hpp"
#include "nvmf/detail/pdu.hpp"
#include "nvmf/detail/workers.hpp"

#include <rpm/nvmf.hpp>

#include <boost/asio/ip/tcp.hpp>

#include <atomic>
#include <chrono>
#include <string>
#include <deque>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace rpm::nvmf::target {

/// RPM_NVMF_TRACE: unset 0; "errors" 1 (failed commands); anything else 2
/// (every command). Printed to stderr, for debugging interoperability.
int trace_level();

/// Counters the sessions of a target share.
struct SharedStats {
    std::atomic<std::uint64_t> connections{0}, terminated{0}, controllers{0}, keep_alive_expired{0};
    std::atomic<std::uint64_t> admin{0}, io{0}, offloaded{0}, errors{0}, digest_errors{0};
    std::atomic<std::uint64_t> refused{0}, setup_timeouts{0};
};

/// What every session of a target needs.
struct SessionEnv {
    Registry* registry = nullptr;
    SharedStats* stats = nullptr;
    bool allow_hdgst = true;
    bool allow_ddgst = true;
    std::uint32_t max_h2c_data = 128 * 1024;
};

class Session final : public Workers::Conn {
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
    void close();
    /// The controller this queue belongs to (null before Connect).
    std::shared_ptr<Controller> controller() const;
    /// The queue's id (meaningful once controller() is set).
    std::uint16_t qid() const;
    /// Ended and out of the Workers set: the owner may destroy it.
    bool finished() const { return finished_.load(); }
    /// ICReq and Connect done (thread-safe): the set-up timeout no longer applies.
    bool set_up() const { return set_up_.load(std::memory_order_acquire); }
    std::chrono::steady_clock::time_point accepted() const { return accepted_; }
    /// The host's address, as the per-address set-up limit counts it.
    const std::string& peer() const { return peer_; }

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
    /// The CapsuleResp, preceded by `c2h` as one C2HData PDU when it is not
    /// empty: one write for both, so the host wakes once.
    bool respond(const wire::Sqe& sqe, std::uint16_t status, std::uint32_t dw0 = 0, std::uint32_t dw1 = 0,
                 std::span<const std::uint8_t> c2h = {});
    /// Copy `n` received bytes into `dst`, from what was read ahead first.
    bool receive(std::uint8_t* dst, std::size_t n);

    // commands (session_commands.cpp)
    bool on_capsule(const pdu::Pdu& p);
    bool run_pending();
    bool receive_r2t_data(const wire::Sqe& sqe, std::span<std::uint8_t> into, bool& digest_ok);
    bool dispatch(const wire::Sqe& sqe, std::span<const std::uint8_t> data, std::uint32_t data_len);
    bool on_connect(const wire::Sqe& sqe, std::span<const std::uint8_t> data);
    bool on_admin(const wire::Sqe& sqe, std::span<const std::uint8_t> data);
    bool on_io(const wire::Sqe& sqe, std::uint32_t data_len);
    std::span<std::uint8_t> io_buffer();
    std::uint32_t block_size(std::uint32_t nsid);
    bool finish(const wire::Sqe& sqe, const Outcome& o);

    boost::asio::ip::tcp::socket socket_;
    int fd_ = -1;
    SessionEnv env_;
    bool handshaken_ = false;
    bool ended_ = false;
    std::vector<std::uint8_t> pdu_buf_;  // the PDU being read (kept between PDUs: no allocation each)
    pdu::Context ctx_;
    std::uint32_t send_align_ = 4;        // (hpda + 1) * 4
    std::uint16_t qid_ = 0;
    std::uint16_t sqsize_ = 0;
    std::uint16_t sq_head_ = 0;
    std::uint16_t next_ttag_ = 1;
    bool connected_ = false;
    std::shared_ptr<Controller> controller_;
    std::unique_ptr<OffloadQueue> offload_;
    std::vector<std::uint8_t> software_buf_;  // io_buffer() uses a 4096-aligned view of it
    std::vector<std::uint8_t> data_buf_;  // R2T-received data for non-I/O commands
    // Read-ahead: one recv usually brings a whole capsule (and often the
    // next), instead of one for the common header and one for the rest.
    std::vector<std::uint8_t> rx_ = std::vector<std::uint8_t>(16384);
    std::size_t rx_pos_ = 0, rx_len_ = 0;
    // Capsules that arrived while a command waited for its H2CData: hosts
    // pipeline commands, so they run next, in order (at most sqsize + 1).
    std::deque<std::vector<std::uint8_t>> pending_;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> block_sizes_;
    mutable std::mutex mu_;               // controller_ (read by the target's watchdog)
    std::atomic<bool> finished_{false};
    std::atomic<bool> closing_{false};
    std::atomic<bool> set_up_{false};
    const std::chrono::steady_clock::time_point accepted_ = std::chrono::steady_clock::now();
    std::string peer_;
};

} // namespace rpm::nvmf::target
