// The NVMe/TCP queue's framing: the ICReq/ICResp exchange, reading PDUs
// (refusing bad ones with a C2HTermReq and closing, as the transport
// specification asks of a fatal error), and sending completions and data
// (FabricQueue::complete).
#include "nvmf/tcp/queue.hpp"
#include "nvmf/pdu/write.hpp"

#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <cstdio>

namespace rpm::nvmf::target {

namespace asio = boost::asio;
using wire::PduType;

namespace {

std::string peer_of(const asio::ip::tcp::socket& s) {
    boost::system::error_code ec;
    const auto remote = s.remote_endpoint(ec);
    return ec ? std::string("an unknown address") : remote.address().to_string();
}

} // namespace

TcpQueue::TcpQueue(asio::ip::tcp::socket socket, const TcpEnv& env)
    : QueueBase(QueueEnv{env.registry, env.stats}, peer_of(socket)), socket_(std::move(socket)),
      fd_(socket_.native_handle()), env_(env) {
    ctx_.receiver = pdu::Receiver::controller;
    // Before ICReq only the 128-byte ICReq itself may arrive.
    ctx_.max_data = 0;
    boost::system::error_code ec;
    socket_.set_option(asio::ip::tcp::no_delay(true), ec);
}

TcpQueue::~TcpQueue() = default;

void TcpQueue::close() {
    closing_ = true;
    // shutdown() on the descriptor is safe from another thread and wakes a
    // blocking read; the socket itself is closed by its owner.
    ::shutdown(socket_.native_handle(), SHUT_RDWR);
}

bool TcpQueue::receive(std::uint8_t* dst, std::size_t n) {
    boost::system::error_code ec;
    while (n > 0) {
        if (rx_pos_ == rx_len_) {
            if (n >= rx_.size()) {  // a large payload: straight into place
                asio::read(socket_, asio::buffer(dst, n), ec);
                return !ec;
            }
            rx_pos_ = 0;
            rx_len_ = socket_.read_some(asio::buffer(rx_), ec);
            if (ec) return false;
        }
        const auto k = std::min(n, rx_len_ - rx_pos_);
        std::memcpy(dst, rx_.data() + rx_pos_, k);
        rx_pos_ += k;
        dst += k;
        n -= k;
    }
    return true;
}

bool TcpQueue::read_pdu(std::vector<std::uint8_t>& buf, pdu::Pdu& out) {
    buf.resize(wire::common_header_len);
    if (!receive(buf.data(), buf.size())) return false;
    auto checked = pdu::check_common(std::span<const std::uint8_t, wire::common_header_len>(buf.data(), 8), ctx_);
    if (auto* r = std::get_if<pdu::Refusal>(&checked)) {
        terminate(*r, buf);
        return false;
    }
    const auto plen = std::get<pdu::HeaderInfo>(checked).plen;
    buf.resize(plen);
    if (!receive(buf.data() + 8, plen - 8)) return false;
    auto parsed = pdu::parse_pdu(buf, ctx_);
    if (auto* r = std::get_if<pdu::Refusal>(&parsed)) {
        if (r->fes == wire::Fes::header_digest_error) ++env_.stats->digest_errors;
        terminate(*r, buf);
        return false;
    }
    out = std::get<pdu::Pdu>(parsed);
    if (!out.data_digest_ok) ++env_.stats->digest_errors;
    return true;
}

void TcpQueue::terminate(const pdu::Refusal& r, std::span<const std::uint8_t> header) {
    std::array<std::uint8_t, wire::term_max_plen> out{};
    const auto bad = header.first(std::min<std::size_t>(header.size(), 128));
    const auto n = pdu::encode_term(out, PduType::c2h_term, {r.fes, r.fei}, bad);
    boost::system::error_code ec;
    asio::write(socket_, asio::buffer(out.data(), n), ec);
    ++env_.stats->terminated;
}

bool TcpQueue::handshake() {
    std::vector<std::uint8_t> buf;
    pdu::Pdu p;
    if (!read_pdu(buf, p)) return false;
    // A TermReq may arrive before ICReq (check_common lets it through, so a
    // host can learn why its ICReq was refused): from a host it ends the
    // connection, unanswered, and is never taken for set-up.
    if (p.info.type != PduType::ic_req) return false;
    const auto req = pdu::decode_icreq(p.header);
    if (req.pfv != 0) {
        terminate({wire::Fes::unsupported_parameter, 8, "ICReq PFV is not 0"}, p.header);
        return false;
    }
    if (req.hpda > 31) {  // the specification's limit: 128-byte alignment
        terminate({wire::Fes::invalid_header_field, 10, "ICReq HPDA over 31"}, p.header);
        return false;
    }
    // Grant a digest only if asked and allowed: the host refuses an ICResp
    // whose digests differ from what it asked, and closes cleanly.
    pdu::IcResp resp{.pfv = 0, .cpda = 0, .hdgst = req.hdgst && env_.allow_hdgst,
                     .ddgst = req.ddgst && env_.allow_ddgst, .maxh2cdata = env_.max_h2c_data};
    std::array<std::uint8_t, pdu::max_header_bytes> out{};
    const auto n = pdu::encode_icresp(out, resp);
    if (!send(std::span(out.data(), n), {})) return false;
    ctx_.initialized = true;
    ctx_.hdgst = resp.hdgst;
    ctx_.ddgst = resp.ddgst;
    ctx_.max_data = std::max(env_.registry->limits().in_capsule_data, env_.max_h2c_data);
    send_align_ = (std::uint32_t(req.hpda) + 1) * 4;
    return true;
}

bool TcpQueue::send(std::span<const std::uint8_t> header, std::span<const std::uint8_t> data) {
    return !pdu::write_pdu(socket_, header, data, ctx_.ddgst);
}

bool TcpQueue::complete(const wire::Sqe& sqe, const wire::Cqe& cqe, std::span<const std::uint8_t> c2h) {
    std::array<std::uint8_t, pdu::max_header_bytes> resp{}, data_hdr{}, digest{};
    const auto n = pdu::encode_capsule_resp(resp, cqe, ctx_.hdgst);
    if (n == 0) return false;
    std::array<asio::const_buffer, 4> bufs;
    std::size_t count = 0;
    if (!c2h.empty()) {
        pdu::DataHeader h{.cccid = sqe.cid(), .ttag = 0, .offset = 0, .length = std::uint32_t(c2h.size()),
                          .last = true, .success = false};
        const auto hn = pdu::encode_data(data_hdr, PduType::c2h_data, h, ctx_.hdgst, ctx_.ddgst, send_align_);
        if (hn == 0) return false;
        bufs[count++] = asio::buffer(data_hdr.data(), hn);
        bufs[count++] = asio::buffer(c2h.data(), c2h.size());
        if (ctx_.ddgst) {
            wire::put32(digest.data(), pdu::crc32c(c2h));
            bufs[count++] = asio::buffer(digest.data(), wire::digest_len);
        }
    }
    bufs[count++] = asio::buffer(resp.data(), n);
    boost::system::error_code ec;
    asio::write(socket_, std::span(bufs.data(), count), ec);
    return !ec;
}

bool TcpQueue::serve() {
    if (!handshaken_) {
        if (closing_ || !handshake()) return end();
        handshaken_ = true;
        if (idle()) return true;
    }
    pdu::Pdu p;
    while (!closing_ && read_pdu(pdu_buf_, p)) {
        if (!on_pdu(p)) return end();
        if (idle()) return true;
    }
    return end();
}

bool TcpQueue::on_pdu(const pdu::Pdu& p) {
    if (p.info.type == PduType::h2c_term) return false;
    if (p.info.type == PduType::capsule_cmd) {
        // While an R2T is outstanding, kept in turn with those that wait.
        if (r2t_) return stash(p, pdu_buf_) && run_pending();
        return on_capsule(p) && run_pending();
    }
    if (p.info.type == PduType::h2c_data && r2t_)
        return take_h2c(p) && (!r2t_->complete() || finish_transfer());
    // H2CData with no R2T outstanding: out of sequence.
    terminate({wire::Fes::pdu_sequence_error, 0, "H2CData without an R2T"}, p.header);
    return false;
}

bool TcpQueue::end() {
    if (ended_) return false;
    ended_ = true;
    boost::system::error_code ec;
    socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ec);
    commands_.release();
    return false;
}

} // namespace rpm::nvmf::target
