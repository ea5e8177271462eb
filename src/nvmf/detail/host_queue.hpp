#pragma once
// One NVMe/TCP queue of the host: a TCP connection after ICReq/ICResp, on
// which commands run one at a time (a mutex serialises callers), with data
// sent in the capsule, after R2T as H2CData, or received as C2HData.

#include "nvmf/detail/pdu.hpp"

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

class Queue {
public:
    /// Connect TCP and exchange ICReq/ICResp.
    /// ERRORS: errc::io_error (connect failed, timeout), errc::protocol_error
    /// (bad ICResp: the detail says which field).
    static Result<std::unique_ptr<Queue>> open(const HostOptions& o);

    /// Run one command: cid and the SGL are set here. `out` goes to the
    /// controller (in the capsule if it fits, else after R2T), `in` is
    /// filled from C2HData. At most one of them may be non-empty.
    /// ERRORS: errc::io_error / protocol_error (the queue is then broken).
    Result<Completion> submit(wire::Sqe sqe, std::span<const std::byte> out, std::span<std::byte> in);

    /// Most in-capsule data the controller accepts on this queue.
    void set_in_capsule_limit(std::uint32_t bytes) { in_capsule_ = bytes; }
    bool broken() const { return broken_; }
    /// Shut the connection down (wakes a blocked submit()).
    void close();

private:
    Queue(const HostOptions& o);
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
