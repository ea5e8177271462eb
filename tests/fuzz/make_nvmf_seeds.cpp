// Writes the seed corpus for fuzz_nvmf_pdu: valid PDUs of every type, with
// and without digests and in-capsule data, a few streams, and two with a bad
// digest, each behind the selector byte fuzz_nvmf_pdu.cpp describes.
// Usage: make_nvmf_seeds OUTDIR  (creates OUTDIR/nvmf_pdu). The committed
// tests/fuzz/corpus/nvmf_pdu/ is this program's output.
#include "nvmf/pdu/pdu.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

namespace {
using namespace rpm::nvmf;
using namespace rpm::nvmf::pdu;
using wire::PduType;
using Bytes = std::vector<std::uint8_t>;
namespace fs = std::filesystem;

// Selector bits (see fuzz_nvmf_pdu.cpp).
constexpr std::uint8_t to_host = 0x01, initialized = 0x02, hd = 0x04, dd = 0x08;
constexpr std::uint8_t max_4k = 0x10, pda_3 = 0x80;

Bytes pattern(std::size_t n, std::uint8_t first) {
    Bytes b(n);
    std::iota(b.begin(), b.end(), first);
    return b;
}

/// The header an encoder wrote, then the data and its digest if flagged.
Bytes pdu(const Bytes& out, std::size_t n, const Bytes& data = {}) {
    Bytes b(out.begin(), out.begin() + std::ptrdiff_t(n));
    b.insert(b.end(), data.begin(), data.end());
    if (!data.empty() && (b[1] & wire::flag_ddgst)) {
        b.resize(b.size() + 4);
        wire::put32(b.data() + b.size() - 4, crc32c(data));
    }
    return b;
}

wire::Sqe write_cmd(std::uint32_t len, std::uint8_t sgl) {
    wire::Sqe s;
    s.set_opcode(wire::io::write);
    s.set_flags(wire::psdt_sgl);
    s.set_cid(0x10);
    s.set_nsid(1);
    s.set_sgl(sgl, 0, len);
    s.set_cdw(12, (len / 512) - 1);
    return s;
}

Bytes icreq(bool digests) {
    Bytes out(max_header_bytes);
    return pdu(out, encode_icreq(out, {0, 0, digests, digests, 0}));
}
Bytes icresp(bool digests) {
    Bytes out(max_header_bytes);
    return pdu(out, encode_icresp(out, {0, 0, digests, digests, 131072}));
}
Bytes capsule(std::uint32_t len, bool h, bool d, std::uint32_t align = 4) {
    Bytes out(max_header_bytes);
    const auto sgl = len ? wire::sgl_incapsule : wire::sgl_transport;
    return pdu(out, encode_capsule_cmd(out, write_cmd(len ? len : 4096, sgl), len, h, d, align), pattern(len, 7));
}
Bytes capsule_resp(bool h) {
    wire::Cqe c;
    c.set_cid(0x10);
    c.set_sq_head(1);
    Bytes out(max_header_bytes);
    return pdu(out, encode_capsule_resp(out, c, h));
}
Bytes data(PduType type, std::uint32_t len, bool h, bool d, bool success = false) {
    Bytes out(max_header_bytes);
    return pdu(out, encode_data(out, type, {0x10, 1, 0, len, true, success}, h, d, 4), pattern(len, 3));
}
Bytes r2t(bool h) {
    Bytes out(max_header_bytes);
    return pdu(out, encode_r2t(out, {0x10, 1, 0, 4096, false, false}, h));
}
Bytes term(PduType type, wire::Fes fes, std::uint32_t fei, const Bytes& bad) {
    Bytes out(max_header_bytes);
    return pdu(out, encode_term(out, type, {fes, fei}, bad));
}

void save(const fs::path& file, std::uint8_t selector, const std::vector<Bytes>& pdus) {
    std::ofstream out(file, std::ios::binary);
    out.put(static_cast<char>(selector));
    for (const Bytes& b : pdus) out.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s OUTDIR\n", argv[0]);
        return 2;
    }
    const fs::path dir = fs::path(argv[1]) / "nvmf_pdu";
    fs::create_directories(dir);
    const std::uint8_t ctrl = initialized | max_4k, host = to_host | initialized | max_4k;
    save(dir / "icreq", max_4k, {icreq(true)});
    save(dir / "icresp", to_host | max_4k, {icresp(true)});
    save(dir / "capsule_cmd", ctrl, {capsule(0, false, false)});
    save(dir / "capsule_cmd_icd", ctrl, {capsule(512, false, false)});
    save(dir / "capsule_cmd_digests", ctrl | hd | dd, {capsule(0, true, true)});
    save(dir / "capsule_cmd_icd_digests", ctrl | hd | dd, {capsule(512, true, true)});
    save(dir / "capsule_cmd_icd_pda3", ctrl | hd | dd | pda_3, {capsule(100, true, true, 16)});
    save(dir / "capsule_resp", host | hd, {capsule_resp(true)});
    save(dir / "h2c_data_digests", ctrl | hd | dd, {data(PduType::h2c_data, 100, true, true)});
    save(dir / "c2h_data_success", host, {data(PduType::c2h_data, 64, false, false, true)});
    save(dir / "r2t", host, {r2t(false)});
    save(dir / "h2c_term", ctrl, {term(PduType::h2c_term, wire::Fes::header_digest_error, 0x12345678,
                                       capsule_resp(true))});
    save(dir / "c2h_term_before_ic", to_host, {term(PduType::c2h_term, wire::Fes::unsupported_parameter, 8,
                                                    icreq(false))});
    Bytes bad_hdgst = capsule(16, true, false);
    bad_hdgst[20] ^= 1;
    save(dir / "capsule_cmd_bad_hdgst", ctrl | hd, {bad_hdgst});
    Bytes bad_ddgst = data(PduType::h2c_data, 32, false, true);
    bad_ddgst.back() ^= 1;
    save(dir / "h2c_data_bad_ddgst", ctrl | dd, {bad_ddgst});
    save(dir / "stream_controller", max_4k,
         {icreq(false), capsule(512, false, false), capsule(0, false, false), data(PduType::h2c_data, 64, false, false),
          term(PduType::h2c_term, wire::Fes::pdu_sequence_error, 0, r2t(false))});
    save(dir / "stream_controller_digests", max_4k | hd | dd,
         {icreq(true), capsule(64, true, true), data(PduType::h2c_data, 64, true, true)});
    save(dir / "stream_host", to_host | max_4k,
         {icresp(false), r2t(false), data(PduType::c2h_data, 128, false, false), capsule_resp(false),
          term(PduType::c2h_term, wire::Fes::data_limit_exceeded, 4, data(PduType::h2c_data, 8, false, false))});
    return 0;
}
