// The host's NVMe/TCP queue: ICReq/ICResp, then commands one at a time.
// Reads wait with poll() and a deadline because Asio's blocking reads
// retry forever on a socket receive timeout.
#include "nvmf/host/queue.hpp"
#include "nvmf/pdu/write.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/write.hpp>

#include <poll.h>
#include <sys/socket.h>

#include <array>
#include <cstring>

namespace rpm::nvmf::host {

namespace asio = boost::asio;
using wire::PduType;

namespace {
// The most data one C2HData may bring us; larger reads fail cleanly.
constexpr std::uint32_t max_receive = 16u << 20;
} // namespace

TcpHostQueue::TcpHostQueue(const HostOptions& o) : options_(o) {
    ctx_.receiver = pdu::Receiver::host;
}

Error TcpHostQueue::fail(errc e, std::string why) {
    broken_ = true;
    boost::system::error_code ec;
    socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ec);
    return Error(e, options_.address + ":" + std::to_string(options_.port) + ": " + why);
}

void TcpHostQueue::close() { ::shutdown(socket_.native_handle(), SHUT_RDWR); }

Result<std::unique_ptr<Queue>> TcpHostQueue::open(const HostOptions& o) {
    std::unique_ptr<TcpHostQueue> q(new TcpHostQueue(o));
    boost::system::error_code ec;
    auto addr = asio::ip::make_address(o.address, ec);
    if (ec) return Error(errc::invalid_argument, "address '" + o.address + "': " + ec.message());
    q->socket_.connect({addr, o.port}, ec);
    if (ec) return Error(errc::io_error, "connect to " + o.address + ":" + std::to_string(o.port) + ": " + ec.message());
    q->socket_.set_option(asio::ip::tcp::no_delay(true), ec);
    if (auto ok = q->handshake(); !ok) return ok.error();
    return std::unique_ptr<Queue>(std::move(q));
}

Result<void> TcpHostQueue::read_exact(std::span<std::uint8_t> into) {
    const auto deadline = std::chrono::steady_clock::now() + options_.timeout;
    std::size_t got = 0;
    while (got < into.size()) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        pollfd p{socket_.native_handle(), POLLIN, 0};
        if (left.count() <= 0 || ::poll(&p, 1, int(left.count())) == 0) return fail(errc::io_error, "no reply within the timeout");
        boost::system::error_code ec;
        got += socket_.read_some(asio::buffer(into.data() + got, into.size() - got), ec);
        if (ec) return fail(errc::io_error, "connection lost: " + ec.message());
    }
    return {};
}

Result<pdu::Pdu> TcpHostQueue::read_pdu() {
    buf_.resize(wire::common_header_len);
    if (auto ok = read_exact(buf_); !ok) return ok.error();
    auto checked = pdu::check_common(std::span<const std::uint8_t, 8>(buf_.data(), 8), ctx_);
    if (auto* r = std::get_if<pdu::Refusal>(&checked)) return fail(errc::protocol_error, r->why);
    const auto plen = std::get<pdu::HeaderInfo>(checked).plen;
    buf_.resize(plen);
    if (auto ok = read_exact(std::span(buf_).subspan(8)); !ok) return ok.error();
    auto parsed = pdu::parse_pdu(buf_, ctx_);
    if (auto* r = std::get_if<pdu::Refusal>(&parsed)) return fail(errc::protocol_error, r->why);
    auto p = std::get<pdu::Pdu>(parsed);
    if (p.info.type == PduType::c2h_term) {
        const auto t = pdu::decode_term(p.header);
        return fail(errc::protocol_error, "the controller terminated the connection (FES " +
                                              std::to_string(unsigned(t.fes)) + ", FEI " + std::to_string(t.fei) + ")");
    }
    if (!p.data_digest_ok) return fail(errc::protocol_error, "data digest mismatch");
    return p;
}

Result<void> TcpHostQueue::send(std::span<const std::uint8_t> header, std::span<const std::uint8_t> data) {
    if (auto ec = pdu::write_pdu(socket_, header, data, ctx_.ddgst)) return fail(errc::io_error, "send: " + ec.message());
    return {};
}

Result<void> TcpHostQueue::handshake() {
    pdu::IcReq req{.pfv = 0, .hpda = 0, .hdgst = options_.header_digest, .ddgst = options_.data_digest, .maxr2t = 0};
    std::array<std::uint8_t, pdu::max_header_bytes> out{};
    if (auto ok = send(std::span(out.data(), pdu::encode_icreq(out, req)), {}); !ok) return ok;
    auto p = read_pdu();
    if (!p) return p.error();
    if (p->info.type != PduType::ic_resp) return fail(errc::protocol_error, "expected ICResp");
    const auto resp = pdu::decode_icresp(p->header);
    if (resp.pfv != 0) return fail(errc::protocol_error, "ICResp PFV " + std::to_string(resp.pfv));
    if (resp.hdgst != req.hdgst || resp.ddgst != req.ddgst)
        return fail(errc::protocol_error, "the controller did not grant the digests asked for");
    if (resp.maxh2cdata < wire::min_maxh2cdata || resp.maxh2cdata % 4)
        return fail(errc::protocol_error, "ICResp maxh2cdata " + std::to_string(resp.maxh2cdata));
    if (resp.cpda > 31) return fail(errc::protocol_error, "ICResp cpda " + std::to_string(resp.cpda));
    ctx_.initialized = true;
    ctx_.hdgst = resp.hdgst;
    ctx_.ddgst = resp.ddgst;
    ctx_.max_data = max_receive;
    maxh2cdata_ = resp.maxh2cdata;
    send_align_ = (std::uint32_t(resp.cpda) + 1) * 4;
    return {};
}

Result<void> TcpHostQueue::send_h2c(const pdu::DataHeader& r2t, std::span<const std::byte> out) {
    if (std::uint64_t(r2t.offset) + r2t.length > out.size() || r2t.length == 0)
        return fail(errc::protocol_error, "R2T outside the command's data");
    std::uint32_t done = 0;
    while (done < r2t.length) {
        const auto n = std::min(maxh2cdata_, r2t.length - done);
        pdu::DataHeader h{.cccid = r2t.cccid, .ttag = r2t.ttag, .offset = r2t.offset + done, .length = n,
                          .last = done + n == r2t.length};
        std::array<std::uint8_t, pdu::max_header_bytes + 128> hdr{};
        const auto len = pdu::encode_data(hdr, PduType::h2c_data, h, ctx_.hdgst, ctx_.ddgst, send_align_);
        auto bytes = std::span(reinterpret_cast<const std::uint8_t*>(out.data()) + h.offset, n);
        if (auto ok = send(std::span(hdr.data(), len), bytes); !ok) return ok;
        done += n;
    }
    return {};
}

Result<Completion> TcpHostQueue::await_completion(std::uint16_t cid, std::span<const std::byte> out, std::span<std::byte> in) {
    for (;;) {
        auto p = read_pdu();
        if (!p) return p.error();
        switch (p->info.type) {
        case PduType::r2t:
            if (auto h = pdu::decode_data(p->header); h.cccid != cid) return fail(errc::protocol_error, "R2T for another command");
            else if (auto ok = send_h2c(h, out); !ok) return ok.error();
            break;
        case PduType::c2h_data: {
            const auto h = pdu::decode_data(p->header);
            if (h.cccid != cid || std::uint64_t(h.offset) + h.length > in.size())
                return fail(errc::protocol_error, "C2HData outside the command's buffer");
            std::memcpy(in.data() + h.offset, p->data.data(), h.length);
            if (h.success) return Completion{};
            break;
        }
        case PduType::capsule_resp: {
            const auto cqe = pdu::decode_capsule_resp(p->header);
            if (cqe.cid() != cid) return fail(errc::protocol_error, "completion for another command");
            return Completion{std::uint16_t(cqe.status() & 0x7FFF), cqe.dw0(), cqe.dw1()};
        }
        default:
            return fail(errc::protocol_error, "unexpected PDU type " + std::to_string(unsigned(p->info.type)));
        }
    }
}

Result<Completion> TcpHostQueue::submit(wire::Sqe sqe, std::span<const std::byte> out, std::span<std::byte> in) {
    std::lock_guard lock(mu_);
    if (broken_) return Error(errc::io_error, "the queue's connection failed earlier");
    const auto cid = stamp(sqe, next_cid_);
    const bool inline_data = !out.empty() && out.size() <= in_capsule_;
    const auto len = std::uint32_t(out.empty() ? in.size() : out.size());
    sqe.set_sgl(inline_data ? wire::sgl_incapsule : wire::sgl_transport, 0, len);
    std::array<std::uint8_t, pdu::max_header_bytes + 128> hdr{};
    const auto data_len = inline_data ? std::uint32_t(out.size()) : 0u;
    const auto n = pdu::encode_capsule_cmd(hdr, sqe, data_len, ctx_.hdgst, ctx_.ddgst, send_align_);
    auto data = inline_data ? std::span(reinterpret_cast<const std::uint8_t*>(out.data()), out.size())
                            : std::span<const std::uint8_t>{};
    if (auto ok = send(std::span(hdr.data(), n), data); !ok) return ok.error();
    return await_completion(cid, out, in);
}

} // namespace rpm::nvmf::host
