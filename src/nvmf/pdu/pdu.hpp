#pragma once
// NVMe/TCP PDU framing: checking a received PDU before anything trusts it,
// and building the PDUs we send. Used by the target (src/nvmf/tcp) and the
// host (src/nvmf/host); fuzzed by tests/fuzz/fuzz_nvmf_pdu.cpp.
//
// A PDU on the wire is
//   [header: hlen bytes][header digest: 4 if HDGSTF][pad up to pdo]
//   [data: plen - pdo - ddgst bytes][data digest: 4 if DDGSTF]
// Receivers read the 8-byte common header, call check_common() to learn how
// many bytes follow (refusing a PDU that is bad before reading it), read the
// rest, then call parse_pdu() on the whole PDU.

#include "core/crc32c.hpp"
#include "nvmf/wire.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <variant>

namespace rpm::nvmf::pdu {

// FEI values of a TermReq: the byte offsets of the common header's fields
// (check.cpp and parse.cpp name them).
inline constexpr std::uint32_t fei_type = 0, fei_flags = 1, fei_hlen = 2, fei_pdo = 3, fei_plen = 4;

/// Which side receives: the controller (target) receives ICReq, CapsuleCmd,
/// H2CData and H2CTermReq; the host receives the other five.
enum class Receiver : std::uint8_t { controller, host };

/// What the connection negotiated (before ICReq/ICResp: all false, 0).
struct Context {
    Receiver receiver = Receiver::controller;
    bool initialized = false;       ///< ICReq/ICResp exchanged: anything but IC is legal
    bool hdgst = false;             ///< header digests negotiated
    bool ddgst = false;             ///< data digests negotiated
    std::uint8_t data_alignment = 0;///< hpda/cpda the receiver asked for: pdo % ((n+1)*4) == 0
    std::uint32_t max_data = 0;     ///< the most data one PDU may carry to this receiver
};

/// Why a PDU is refused: the FES and FEI to send in a TermReq, and a
/// sentence for logs. FEI is the byte offset of the offending header field
/// (or, for a digest error, the digest received).
struct Refusal {
    wire::Fes fes = wire::Fes::invalid_header_field;
    std::uint32_t fei = 0;
    std::string why;
};

/// What check_common() learned from the 8-byte common header.
struct HeaderInfo {
    wire::PduType type{};
    std::uint8_t flags = 0;
    std::uint8_t hlen = 0;
    std::uint8_t pdo = 0;
    std::uint32_t plen = 0;   ///< the whole PDU, common header included
};

/// Check the common header against the PDU type's fixed layout and the
/// connection's state: a type this receiver may get (IC only first, and only
/// IC first; a TermReq at any time, as a controller refuses a bad ICReq with
/// one), its hlen, the digest flags as negotiated (ICReq/ICResp and TermReqs
/// never carry them), pdo (0 without data, else >= hlen + header digest and
/// aligned; a TermReq's pdo is ignored, its data follows hlen), plen
/// (>= header, fixed for types without data, data no more than max_data;
/// TermReq <= 152).
///
/// RETURN VALUE: HeaderInfo, or the Refusal to send back before closing.
std::variant<HeaderInfo, Refusal> check_common(std::span<const std::uint8_t, wire::common_header_len> ch,
                                               const Context& ctx);

/// A whole PDU, checked: spans point into the caller's buffer.
struct Pdu {
    HeaderInfo info;
    std::span<const std::uint8_t> header;   ///< hlen bytes (common header included)
    std::span<const std::uint8_t> data;     ///< data bytes (no pad, no digest); empty if none
    bool data_digest_ok = true;             ///< false: the data digest did not match
};

/// Parse a whole PDU (`bytes.size()` must equal its plen): check_common(),
/// the header digest, the type-specific header fields that framing depends
/// on (an H2CData/C2HData's datal equals the data carried), and the data
/// digest (a mismatch is reported in data_digest_ok, not refused: the
/// framing is intact and the command can be failed on its own).
///
/// RETURN VALUE: the Pdu, or the Refusal (header digest error: Fes 0x03).
std::variant<Pdu, Refusal> parse_pdu(std::span<const std::uint8_t> bytes, const Context& ctx);

// ---- type-specific headers (call on Pdu::header of the right type) ----------
// RETURN VALUE: the fields; a header shorter than its type's hlen decodes as
// all zeros. decode_data() reports C2HData's reserved ttag as 0.

struct IcReq {
    std::uint16_t pfv = 0;
    std::uint8_t hpda = 0;
    bool hdgst = false;
    bool ddgst = false;
    std::uint32_t maxr2t = 0;   ///< 0's based
};
struct IcResp {
    std::uint16_t pfv = 0;
    std::uint8_t cpda = 0;
    bool hdgst = false;
    bool ddgst = false;
    std::uint32_t maxh2cdata = 0;
};
/// H2CData, C2HData (offset/length = datao/datal) and R2T (r2to/r2tl).
struct DataHeader {
    std::uint16_t cccid = 0;
    std::uint16_t ttag = 0;     ///< H2CData and R2T
    std::uint32_t offset = 0;
    std::uint32_t length = 0;
    bool last = false;          ///< LAST_PDU (H2CData, C2HData)
    bool success = false;       ///< SUCCESS (C2HData)
};
struct TermReq {
    wire::Fes fes{};
    std::uint32_t fei = 0;
};

IcReq decode_icreq(std::span<const std::uint8_t> header);
IcResp decode_icresp(std::span<const std::uint8_t> header);
wire::Sqe decode_capsule_cmd(std::span<const std::uint8_t> header);
wire::Cqe decode_capsule_resp(std::span<const std::uint8_t> header);
DataHeader decode_data(std::span<const std::uint8_t> header);
TermReq decode_term(std::span<const std::uint8_t> header);

// ---- building PDUs ----------------------------------------------------------
// Each encoder writes the header (and its digest when `hdgst`) into `out`
// and returns the number of bytes written; `out` should have room for
// max_header_bytes. Encoders that carry data write the header and padding
// only (pdo = header + digest, rounded up to the peer's alignment `align` =
// (hpda/cpda + 1) * 4, or 0 for none) and set plen for `data_len` bytes of
// data plus a data digest when `ddgst`; the caller sends the data and then
// crc32c(data) itself.
// RETURN VALUE: bytes written; 0 (nothing usable written) if `out` is too
// small, `align` is not 0 or a multiple of 4 up to 128, plen would overflow,
// an H2C/C2HData has length 0, or `type` is not of the encoder's kind.

/// The largest encoder output: a TermReq carrying 128 bytes of the offending
/// header (an ICReq is 128, a CapsuleCmd with digest and padding at most 128).
inline constexpr std::size_t max_header_bytes = wire::term_max_plen;

std::size_t encode_icreq(std::span<std::uint8_t> out, const IcReq& r);
std::size_t encode_icresp(std::span<std::uint8_t> out, const IcResp& r);
/// A CapsuleCmd carrying `data_len` bytes of in-capsule data (0: none).
std::size_t encode_capsule_cmd(std::span<std::uint8_t> out, const wire::Sqe& sqe, std::uint32_t data_len,
                               bool hdgst, bool ddgst, std::uint32_t align);
std::size_t encode_capsule_resp(std::span<std::uint8_t> out, const wire::Cqe& cqe, bool hdgst);
std::size_t encode_data(std::span<std::uint8_t> out, wire::PduType type, const DataHeader& h, bool hdgst,
                        bool ddgst, std::uint32_t align);
std::size_t encode_r2t(std::span<std::uint8_t> out, const DataHeader& h, bool hdgst);
/// H2CTermReq or C2HTermReq with up to 128 bytes of the offending header.
std::size_t encode_term(std::span<std::uint8_t> out, wire::PduType type, const TermReq& t,
                        std::span<const std::uint8_t> bad_header);

// ---- CRC32C (Castagnoli), as the digests use it -----------------------------
// rpm's one CRC32C (core/crc32c.hpp), over the byte type PDUs are kept in.
// RETURN VALUE: the CRC (crc32c of nothing is 0); crc32c_extend(crc32c(a), b)
// == crc32c(a followed by b), for data sent or received in pieces.
// ERRORS: none.
inline std::uint32_t crc32c(std::span<const std::uint8_t> bytes) noexcept {
    return rpm::detail::crc32c(std::as_bytes(bytes));
}
inline std::uint32_t crc32c_extend(std::uint32_t crc, std::span<const std::uint8_t> bytes) noexcept {
    return rpm::detail::crc32c_extend(crc, std::as_bytes(bytes));
}

} // namespace rpm::nvmf::pdu
