#pragma once
// One queue of the host, whatever its fabric: commands run one at a time
// (a mutex serialises callers). NVMe/TCP's (TcpHostQueue): a TCP connection
// after ICReq/ICResp, data in the capsule, after R2T as H2CData, or back as
// C2HData. NVMe/RDMA's (RdmaHostQueue, nvmf/rdma/queue.hpp): a queue
// pair through rdma_cm, data in the capsule or in a registered buffer the
// controller reads and writes with RDMA READ / WRITE.

#include "nvmf/pdu/pdu.hpp"

#include <rpm/nvmf.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

namespace rpm::nvmf::host {

/// Give `sqe` the queue's next command identifier and SGL data transfer
/// (PSDT 01b), as every fabric carries it. RETURN VALUE: the cid.
inline std::uint16_t stamp(wire::Sqe& sqe, std::uint16_t& next_cid) {
    const auto cid = next_cid++;
    sqe.set_cid(cid);
    sqe.set_flags(std::uint8_t((sqe.flags() & 0x3F) | wire::psdt_sgl));
    return cid;
}

class Queue {
public:
    virtual ~Queue() = default;

    /// Connect queue `qid` of `depth` entries over o.transport (NVMe/TCP:
    /// ICReq/ICResp; NVMe/RDMA: the CM request's private data carries qid
    /// and depth).
    /// ERRORS: errc::invalid_argument (address), errc::io_error (connect
    /// failed, timeout, rejected: the detail says why), errc::protocol_error
    /// (bad ICResp: the detail says which field).
    static Result<std::unique_ptr<Queue>> open(const HostOptions& o, std::uint16_t qid, std::uint16_t depth);

    /// Run one command: cid and the SGL are set here. `out` goes to the
    /// controller (in the capsule if it fits, else as the transport moves
    /// data), `in` is filled by the controller. At most one may be non-empty.
    /// ERRORS: errc::io_error / protocol_error (the queue is then broken).
    virtual Result<Completion> submit(wire::Sqe sqe, std::span<const std::byte> out, std::span<std::byte> in) = 0;
    /// Most in-capsule data the controller accepts on this queue.
    virtual void set_in_capsule_limit(std::uint32_t bytes) = 0;
    virtual bool broken() const = 0;
    /// Shut the connection down (wakes a blocked submit()).
    virtual void close() = 0;
};

class TcpHostQueue final : public Queue {
public:
    /// Connect TCP and exchange ICReq/ICResp.
    static Result<std::unique_ptr<Queue>> open(const HostOptions& o);

    Result<Completion> submit(wire::Sqe sqe, std::span<const std::byte> out, std::span<std::byte> in) override;
    void set_in_capsule_limit(std::uint32_t bytes) override { in_capsule_ = bytes; }
    bool broken() const override { return broken_; }
    void close() override;

private:
    explicit TcpHostQueue(const HostOptions& o);
    Result<void> handshake();
    Result<void> read_exact(std::span<std::uint8_t> into);
    Result<pdu::Pdu> read_pdu();
    Result<void> send(std::span<const std::uint8_t> header, std::span<const std::uint8_t> data);
    Result<void> send_h2c(const pdu::DataHeader& r2t, std::span<const std::byte> out);
    Result<Completion> await_completion(std::uint16_t cid, std::span<const std::byte> out, std::span<std::byte> in);
    Error fail(errc e, std::string why);

    HostOptions options_;
    boost::asio::io_context io_;
    boost::asio::ip::tcp::socket socket_{io_};
    pdu::Context ctx_;
    std::uint32_t maxh2cdata_ = wire::min_maxh2cdata;
    std::uint32_t send_align_ = 4;
    std::uint32_t in_capsule_ = 8192;
    std::uint16_t next_cid_ = 0;
    bool broken_ = false;
    std::vector<std::uint8_t> buf_;
    std::mutex mu_;
};

} // namespace rpm::nvmf::host
