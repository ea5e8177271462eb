#pragma once
// Shared by the target tests: a target on 127.0.0.1 (port chosen by the OS)
// over files in a temporary directory, and a raw NVMe/TCP connection for
// sending what rpm's own host never would.

#include "nvmf/pdu/pdu.hpp"

#include <rpm/nvmf.hpp>

#include <gtest/gtest.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>

#include <filesystem>
#include <fstream>
#include <optional>
#include <random>

namespace rpm::nvmf::testing {

inline constexpr char nqn[] = "nqn.2026-11.io.rpm:test";

class TempDir {
public:
    TempDir() {
        std::random_device rd;
        path_ = std::filesystem::temp_directory_path() / ("rpm-nvmf-" + std::to_string(rd()));
        std::filesystem::create_directories(path_);
    }
    ~TempDir() { std::filesystem::remove_all(path_); }
    const std::filesystem::path& path() const { return path_; }

private:
    std::filesystem::path path_;
};

/// nsid 1: a 4 MiB file (block); nsid 2: a 4 MiB PM region on a file.
inline TargetOptions options(const TempDir& dir) {
    TargetOptions o;
    o.port = 0;
    SubsystemSpec s;
    s.nqn = nqn;
    s.namespaces.push_back({.nsid = 1, .path = dir.path() / "disk", .kind = BackendKind::block, .block_size = 512,
                            .create = true, .size = 4 << 20});
    s.namespaces.push_back({.nsid = 2, .path = dir.path() / "pm", .kind = BackendKind::pmem, .block_size = 4096,
                            .create = true, .size = 4 << 20});
    o.subsystems.push_back(s);
    return o;
}

inline HostOptions host_options(std::uint16_t port) {
    HostOptions h;
    h.port = port;
    h.subnqn = nqn;
    h.timeout = std::chrono::milliseconds(5000);
    return h;
}

inline std::vector<std::byte> random_bytes(std::size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::vector<std::byte> v(n);
    for (auto& b : v) b = std::byte(rng() & 0xFF);
    return v;
}

inline std::vector<std::byte> file_bytes(const std::filesystem::path& p, std::size_t off, std::size_t n) {
    std::ifstream in(p, std::ios::binary);
    in.seekg(std::streamoff(off));
    std::vector<std::byte> v(n);
    in.read(reinterpret_cast<char*>(v.data()), std::streamsize(n));
    return v;
}

/// A raw NVMe/TCP connection to the target, for malformed input.
class Raw {
public:
    explicit Raw(std::uint16_t port) : socket_(io_) {
        socket_.connect({boost::asio::ip::make_address("127.0.0.1"), port});
    }
    void send(std::span<const std::uint8_t> bytes) { boost::asio::write(socket_, boost::asio::buffer(bytes.data(), bytes.size())); }
    /// ICReq with the digests asked for; returns the ICResp's.
    pdu::IcResp handshake(bool hdgst, bool ddgst) {
        std::array<std::uint8_t, pdu::max_header_bytes> out{};
        send(std::span(out.data(), pdu::encode_icreq(out, {.hdgst = hdgst, .ddgst = ddgst})));
        auto p = read();
        ctx_.initialized = true;
        ctx_.hdgst = hdgst;
        ctx_.ddgst = ddgst;
        return pdu::decode_icresp(std::span(p).first(128));
    }
    /// Read one whole PDU (empty when the connection closed first, or the
    /// target stayed silent for 5 s: a test fails, never hangs).
    std::vector<std::uint8_t> read() {
        std::vector<std::uint8_t> b(8);
        if (!read_exactly(b.data(), 8)) return {};
        const auto plen = wire::get32(&b[4]);
        if (plen < 8 || plen > (1u << 24)) return {};
        b.resize(plen);
        return read_exactly(b.data() + 8, plen - 8) ? b : std::vector<std::uint8_t>{};
    }
    /// True if the peer closed the connection (read returns EOF) within 5 s.
    bool closed() {
        std::uint8_t c;
        if (!wait_readable()) return false;
        const ssize_t n = ::recv(socket_.native_handle(), &c, 1, 0);
        return n == 0 || (n < 0 && errno == ECONNRESET);
    }
    /// A Connect capsule (admin queue unless qid) with in-capsule data.
    std::vector<std::uint8_t> connect_capsule(std::uint32_t kato_ms, bool corrupt_digest = false, std::uint16_t qid = 0,
                                              std::uint16_t cntlid = wire::dynamic_cntlid) {
        wire::Sqe s;
        s.set_opcode(wire::admin::fabrics);
        s.set_flags(wire::psdt_sgl);
        s.set_fctype(wire::fctype::connect);
        s.set_cid(7);
        wire::put16(&s.b[42], qid);
        wire::put16(&s.b[44], 31);
        wire::put32(&s.b[48], kato_ms);
        s.set_sgl(wire::sgl_incapsule, 0, wire::connect_data_len);
        std::vector<std::uint8_t> data(wire::connect_data_len);
        wire::put16(&data[16], cntlid);
        std::copy_n(nqn, sizeof nqn - 1, data.begin() + 256);
        std::copy_n(default_host_nqn, sizeof default_host_nqn - 1, data.begin() + 512);
        std::vector<std::uint8_t> out(pdu::max_header_bytes + 128);
        out.resize(pdu::encode_capsule_cmd(out, s, std::uint32_t(data.size()), ctx_.hdgst, ctx_.ddgst, 4));
        out.insert(out.end(), data.begin(), data.end());
        if (ctx_.ddgst) {
            auto crc = pdu::crc32c(data) ^ (corrupt_digest ? 1u : 0u);
            out.resize(out.size() + 4);
            wire::put32(&out[out.size() - 4], crc);
        }
        return out;
    }

    /// A capsule without data; the SGL asks for `len` bytes by R2T / C2HData.
    /// `fuse`: CDW0's FUSE bits.
    std::vector<std::uint8_t> capsule(wire::Sqe s, std::uint32_t len, std::uint8_t fuse = 0) {
        s.set_flags(std::uint8_t(wire::psdt_sgl | fuse));
        s.set_sgl(wire::sgl_transport, 0, len);
        std::vector<std::uint8_t> out(pdu::max_header_bytes);
        out.resize(pdu::encode_capsule_cmd(out, s, 0, ctx_.hdgst, ctx_.ddgst, 4));
        return out;
    }
    /// Send an H2CData PDU.
    void h2c(std::uint16_t cid, std::uint16_t ttag, std::uint32_t offset, std::span<const std::uint8_t> data,
             bool last = true) {
        std::vector<std::uint8_t> out(pdu::max_header_bytes);
        pdu::DataHeader h{.cccid = cid, .ttag = ttag, .offset = offset, .length = std::uint32_t(data.size()), .last = last};
        out.resize(pdu::encode_data(out, wire::PduType::h2c_data, h, false, false, 4));
        out.insert(out.end(), data.begin(), data.end());
        send(out);
    }
    /// Read one PDU and return its CQE status (0xFFFF if it is no CapsuleResp).
    std::uint16_t status() {
        auto p = read();
        return p.size() == wire::capsule_resp_hlen ? pdu::decode_capsule_resp(p).status() : 0xFFFF;
    }

private:
    bool wait_readable() {
        pollfd p{socket_.native_handle(), POLLIN, 0};
        return ::poll(&p, 1, 5000) > 0;
    }
    bool read_exactly(std::uint8_t* to, std::size_t n) {
        while (n > 0) {
            if (!wait_readable()) return false;
            const ssize_t k = ::recv(socket_.native_handle(), to, n, 0);
            if (k <= 0) return false;
            to += k;
            n -= static_cast<std::size_t>(k);
        }
        return true;
    }

    boost::asio::io_context io_;
    boost::asio::ip::tcp::socket socket_;
    pdu::Context ctx_{.receiver = pdu::Receiver::host};
};

} // namespace rpm::nvmf::testing
