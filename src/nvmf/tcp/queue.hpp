#pragma once
// One NVMe/TCP connection on the target: one queue (the admin queue or an
// I/O queue) of one controller, NVMe/TCP's FabricQueue (serve/fabric.hpp).
// Between PDUs it waits in the target's Workers set without a thread; a
// worker serves it with blocking Asio socket calls while it has bytes
// (serve/workers.hpp). The queue is NVMe/TCP's transport only: PDUs in
// and out, R2T and H2CData; what a command does is its QueueCommands
// (serve/queue_commands.hpp).
//
// Capsules run in the order they arrive, but for one case: a capsule that
// arrives while an R2T is outstanding runs at once (the host may wait for
// its answer before it sends the R2T's data), unless it needs an R2T of
// its own, which waits until the outstanding transfer is complete: one
// R2T at a time, so that a transfer's data never waits behind another's.
// NVMe lets a controller complete commands in any order.

#include "nvmf/pdu/pdu.hpp"
#include "nvmf/serve/fabric.hpp"

#include <rpm/nvmf.hpp>

#include <boost/asio/ip/tcp.hpp>

#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace rpm::nvmf::target {

/// What every NVMe/TCP queue of a target needs.
struct TcpEnv {
    Registry* registry = nullptr;
    SharedStats* stats = nullptr;
    bool allow_hdgst = true;
    bool allow_ddgst = true;
    std::uint32_t max_h2c_data = 128 * 1024;
};

class TcpQueue final : public QueueBase {
public:
    TcpQueue(boost::asio::ip::tcp::socket socket, const TcpEnv& env);
    ~TcpQueue() override;

    /// Serve the PDUs that arrived (the ICReq first), until none is left
    /// read ahead (true) or the connection ends (false: the host
    /// disconnected, a protocol error, or close()).
    int fd() const override { return fd_; }
    bool serve() override;
    /// From another thread: make serve() return soon (it wakes a parked
    /// queue too: a shut-down socket is readable).
    void close() override;

private:
    /// An R2T's transfer, while its H2CData PDUs come.
    struct Transfer {
        wire::Sqe sqe;
        std::uint16_t ttag = 0;
        std::span<std::uint8_t> into;  ///< QueueCommands' buffer, or `saved`
        std::uint32_t got = 0;
        bool intact = true;
        std::vector<std::uint8_t> saved;
        bool complete() const { return got == into.size(); }
    };

    // framing (queue.cpp)
    bool handshake();
    /// Serve one PDU after the handshake. RETURN VALUE: false when the queue ends.
    bool on_pdu(const pdu::Pdu& p);
    /// Nothing read ahead and no capsule waiting: wait in the set.
    bool idle() const { return rx_pos_ == rx_len_ && pending_.empty(); }
    /// The end of a connection: shut down, give back the staging slot and
    /// the controller's queue. RETURN VALUE: false (serve()'s).
    bool end();
    bool read_pdu(std::vector<std::uint8_t>& buf, pdu::Pdu& out);
    void terminate(const pdu::Refusal& r, std::span<const std::uint8_t> header);
    bool send(std::span<const std::uint8_t> header, std::span<const std::uint8_t> data);
    /// FabricQueue: the CapsuleResp, preceded by `c2h` as one C2HData
    /// PDU when it is not empty: one write for both, so the host wakes once.
    bool complete(const wire::Sqe& sqe, const wire::Cqe& cqe, std::span<const std::uint8_t> c2h) override;
    /// Copy `n` received bytes into `dst`, from what was read ahead first.
    bool receive(std::uint8_t* dst, std::size_t n);

    // capsules and R2T (queue_capsules.cpp)
    /// A CapsuleCmd PDU: its SGL as NVMe/TCP carries data, to QueueCommands.
    bool on_capsule(const pdu::Pdu& p);
    /// Keep a capsule (its PDU's bytes) for run_pending(). RETURN VALUE:
    /// false when the host sent more than its queue holds (terminated).
    bool stash(const pdu::Pdu& p, const std::vector<std::uint8_t>& bytes);
    /// Run the kept capsules, but those held_back().
    bool run_pending();
    /// A kept capsule that may pull while r2t_ is outstanding: it waits at
    /// the front of pending_, in order, until the transfer is complete.
    bool held_back(const std::vector<std::uint8_t>& bytes);
    /// FabricQueue: an R2T for the whole transfer; its H2CData PDUs read
    /// here (Pulled::done) until a capsule arrives first: then the
    /// transfer goes on in serve() (Pulled::later).
    Pulled pull(const wire::Sqe& sqe, std::span<std::uint8_t> into, bool& intact) override;
    /// One H2CData PDU of r2t_. RETURN VALUE: false when it is refused (terminated).
    bool take_h2c(const pdu::Pdu& p);
    /// r2t_'s data all came while serve() read: the command runs.
    bool finish_transfer();

    boost::asio::ip::tcp::socket socket_;
    int fd_ = -1;
    TcpEnv env_;
    bool handshaken_ = false;
    bool ended_ = false;
    std::vector<std::uint8_t> pdu_buf_;  // the PDU being read (kept between PDUs: no allocation each)
    std::vector<std::uint8_t> r2t_buf_;  // a PDU read while pull() waits for H2CData
    pdu::Context ctx_;
    std::uint32_t send_align_ = 4;        // (hpda + 1) * 4
    std::uint16_t next_ttag_ = 1;
    // Read-ahead: one recv usually brings a whole capsule (and often the
    // next), instead of one for the common header and one for the rest.
    std::vector<std::uint8_t> rx_ = std::vector<std::uint8_t>(16384);
    std::size_t rx_pos_ = 0, rx_len_ = 0;
    std::optional<Transfer> r2t_;  ///< the outstanding R2T, if any
    // Capsules that arrived while a command waited for its H2CData: hosts
    // pipeline commands (at most sqsize + 1 of them).
    std::deque<std::vector<std::uint8_t>> pending_;
};

} // namespace rpm::nvmf::target
