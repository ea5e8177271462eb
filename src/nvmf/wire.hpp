#pragma once
// NVMe and NVMe/TCP wire layouts: the 64-byte submission queue entry, the
// 16-byte completion queue entry, status codes and PDU constants. Fields are
// read and written through little-endian byte accessors rather than packed
// structs: the bytes come from the network, so no alignment or aliasing is
// assumed. Offsets follow the NVMe Base 2.0, NVMe-oF 1.1 and NVMe/TCP
// transport specifications (and agree with Linux's include/linux/nvme*.h).

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace rpm::nvmf::wire {

// ---- little-endian accessors ------------------------------------------------
inline std::uint16_t get16(const std::uint8_t* p) { return std::uint16_t(p[0] | p[1] << 8); }
inline std::uint32_t get32(const std::uint8_t* p) {
    return std::uint32_t(p[0]) | std::uint32_t(p[1]) << 8 | std::uint32_t(p[2]) << 16 | std::uint32_t(p[3]) << 24;
}
inline std::uint64_t get64(const std::uint8_t* p) { return get32(p) | std::uint64_t(get32(p + 4)) << 32; }
inline void put16(std::uint8_t* p, std::uint16_t v) { p[0] = std::uint8_t(v); p[1] = std::uint8_t(v >> 8); }
inline void put32(std::uint8_t* p, std::uint32_t v) { for (int i = 0; i < 4; ++i) p[i] = std::uint8_t(v >> (8 * i)); }
inline void put64(std::uint8_t* p, std::uint64_t v) { put32(p, std::uint32_t(v)); put32(p + 4, std::uint32_t(v >> 32)); }

// ---- NVMe/TCP PDUs ----------------------------------------------------------
enum class PduType : std::uint8_t {
    ic_req = 0x00, ic_resp = 0x01, h2c_term = 0x02, c2h_term = 0x03,
    capsule_cmd = 0x04, capsule_resp = 0x05, h2c_data = 0x06, c2h_data = 0x07, r2t = 0x09,
};
/// H2CTermReq or C2HTermReq: a PDU that ends the connection.
inline constexpr bool is_term(PduType t) { return t == PduType::h2c_term || t == PduType::c2h_term; }
inline constexpr std::uint8_t flag_hdgst = 0x01;      // header digest present
inline constexpr std::uint8_t flag_ddgst = 0x02;      // data digest present
inline constexpr std::uint8_t flag_last_pdu = 0x04;   // H2CData / C2HData
inline constexpr std::uint8_t flag_success = 0x08;    // C2HData: no CapsuleResp follows

inline constexpr std::size_t common_header_len = 8;
inline constexpr std::size_t ic_len = 128;            // ICReq and ICResp hlen = plen
inline constexpr std::size_t capsule_cmd_hlen = 72;   // 8 + 64-byte SQE
inline constexpr std::size_t capsule_resp_hlen = 24;  // 8 + 16-byte CQE
inline constexpr std::size_t data_hlen = 24;          // H2CData, C2HData, R2T
inline constexpr std::size_t term_hlen = 24;          // H2CTermReq, C2HTermReq
inline constexpr std::size_t term_max_plen = 152;     // hlen + up to 128 bytes of the bad header
inline constexpr std::size_t digest_len = 4;          // CRC32C
inline constexpr std::uint8_t dgst_hdgst = 0x01;       // ICReq/ICResp byte 11: header digest
inline constexpr std::uint8_t dgst_ddgst = 0x02;       // ... and data digest
inline constexpr std::uint32_t min_maxh2cdata = 4096; // the host rejects less

// Fatal error status in a TermReq (NVMe/TCP "FES").
enum class Fes : std::uint16_t {
    invalid_header_field = 0x01,
    pdu_sequence_error = 0x02,
    header_digest_error = 0x03,
    data_out_of_range = 0x04,
    data_limit_exceeded = 0x05,
    unsupported_parameter = 0x06,
};

// ---- submission queue entry -------------------------------------------------
inline constexpr std::size_t sqe_len = 64;
inline constexpr std::size_t cqe_len = 16;

// SGL descriptor type byte (SQE byte 39): (type << 4) | subtype.
inline constexpr std::uint8_t sgl_incapsule = 0x01;      // data block, offset: data in the capsule
inline constexpr std::uint8_t sgl_transport = 0x5A;      // transport data block, transport specific: R2T / C2HData
inline constexpr std::uint8_t psdt_sgl = 0x40;           // SQE flags bits 7:6 = 01

struct Sqe {
    std::array<std::uint8_t, sqe_len> b{};

    std::uint8_t opcode() const { return b[0]; }
    std::uint8_t flags() const { return b[1]; }
    std::uint16_t cid() const { return get16(&b[2]); }
    std::uint32_t nsid() const { return get32(&b[4]); }
    std::uint8_t fctype() const { return b[4]; }          // fabrics commands (opcode 0x7f)
    std::uint64_t sgl_addr() const { return get64(&b[24]); }
    std::uint32_t sgl_length() const { return get32(&b[32]); }
    std::uint8_t sgl_type() const { return b[39]; }
    /// Command dword N (10..15 for most commands; 0..15 valid).
    std::uint32_t cdw(int n) const { return get32(&b[std::size_t(n) * 4]); }

    void set_opcode(std::uint8_t v) { b[0] = v; }
    void set_flags(std::uint8_t v) { b[1] = v; }
    void set_cid(std::uint16_t v) { put16(&b[2], v); }
    void set_nsid(std::uint32_t v) { put32(&b[4], v); }
    void set_fctype(std::uint8_t v) { b[4] = v; }
    void set_sgl(std::uint8_t type, std::uint64_t addr, std::uint32_t length) {
        put64(&b[24], addr); put32(&b[32], length); b[36] = b[37] = b[38] = 0; b[39] = type;
    }
    void set_cdw(int n, std::uint32_t v) { put32(&b[std::size_t(n) * 4], v); }
};

// ---- completion queue entry -------------------------------------------------
struct Cqe {
    std::array<std::uint8_t, cqe_len> b{};

    std::uint32_t dw0() const { return get32(&b[0]); }
    std::uint32_t dw1() const { return get32(&b[4]); }
    std::uint64_t result64() const { return get64(&b[0]); }
    std::uint16_t sq_head() const { return get16(&b[8]); }
    std::uint16_t sq_id() const { return get16(&b[10]); }
    std::uint16_t cid() const { return get16(&b[12]); }
    /// The status field without the phase bit: (DNR << 14) | (SCT << 8) | SC.
    std::uint16_t status() const { return std::uint16_t(get16(&b[14]) >> 1); }

    void set_dw0(std::uint32_t v) { put32(&b[0], v); }
    void set_dw1(std::uint32_t v) { put32(&b[4], v); }
    void set_result64(std::uint64_t v) { put64(&b[0], v); }
    void set_sq_head(std::uint16_t v) { put16(&b[8], v); }
    void set_sq_id(std::uint16_t v) { put16(&b[10], v); }
    void set_cid(std::uint16_t v) { put16(&b[12], v); }
    void set_status(std::uint16_t v) { put16(&b[14], std::uint16_t(v << 1)); }
};

// ---- status codes -----------------------------------------------------------
// A status is (DNR << 14) | (SCT << 8) | SC, as Cqe::status() returns it.
/// Where a command's data is, as the transport read the capsule's SGL.
struct CommandData {
    enum class Where : std::uint8_t {
        none,        ///< no data (an SGL of length 0)
        in_capsule,  ///< `bytes`, carried in the capsule
        host,        ///< `length` bytes in host memory: pulled (the target's FabricQueue::pull) or pushed with the completion
    };
    Where where = Where::none;
    std::uint32_t length = 0;
    std::span<const std::uint8_t> bytes;
    /// in_capsule: the transport's integrity check of the bytes held (NVMe/TCP's data digest).
    bool intact = true;
    /// Not 0: the transport refuses the SGL with this status (a descriptor
    /// type or offset it does not carry, a length that disagrees).
    std::uint16_t status = 0;
};

namespace sc {
inline constexpr std::uint16_t dnr = 1u << 14;
constexpr std::uint16_t make(std::uint8_t sct, std::uint8_t code, bool do_not_retry = true) {
    return std::uint16_t((do_not_retry ? dnr : 0) | (sct << 8) | code);
}
constexpr std::uint8_t sct_of(std::uint16_t s) { return std::uint8_t((s >> 8) & 0x7); }
constexpr std::uint8_t code_of(std::uint16_t s) { return std::uint8_t(s & 0xff); }

inline constexpr std::uint16_t success = 0;
// Generic command status (SCT 0)
inline constexpr std::uint16_t invalid_opcode = make(0, 0x01);
inline constexpr std::uint16_t invalid_field = make(0, 0x02);
inline constexpr std::uint16_t cid_conflict = make(0, 0x03);
inline constexpr std::uint16_t data_transfer_error = make(0, 0x04);
inline constexpr std::uint16_t internal_error = make(0, 0x06);
inline constexpr std::uint16_t abort_sq_deletion = make(0, 0x08, false);
inline constexpr std::uint16_t invalid_ns = make(0, 0x0B);
inline constexpr std::uint16_t command_sequence_error = make(0, 0x0C);
inline constexpr std::uint16_t sgl_data_length_invalid = make(0, 0x0F);
inline constexpr std::uint16_t sgl_descriptor_type_invalid = make(0, 0x11);
inline constexpr std::uint16_t sgl_offset_invalid = make(0, 0x16);
inline constexpr std::uint16_t transient_transport_error = make(0, 0x22, false);
inline constexpr std::uint16_t lba_out_of_range = make(0, 0x80);
inline constexpr std::uint16_t capacity_exceeded = make(0, 0x81);
inline constexpr std::uint16_t ns_not_ready = make(0, 0x82, false);
// Command specific (SCT 1)
inline constexpr std::uint16_t invalid_queue_size = make(1, 0x02);
inline constexpr std::uint16_t invalid_log_page = make(1, 0x09);
inline constexpr std::uint16_t feature_not_changeable = make(1, 0x0E);
inline constexpr std::uint16_t async_event_limit_exceeded = make(1, 0x05);
// Fabrics Connect (SCT 1)
inline constexpr std::uint16_t connect_incompatible_format = make(1, 0x80);
inline constexpr std::uint16_t connect_controller_busy = make(1, 0x81);
inline constexpr std::uint16_t connect_invalid_parameters = make(1, 0x82);
inline constexpr std::uint16_t connect_restart_discovery = make(1, 0x83);
inline constexpr std::uint16_t connect_invalid_host = make(1, 0x84);
/// A command other than Authentication Send/Receive on a queue that has not
/// authenticated yet (NVMe Base 2.0: Authentication Required, 0x91).
inline constexpr std::uint16_t auth_required = make(1, 0x91);
// Media errors (SCT 2)
inline constexpr std::uint16_t write_fault = make(2, 0x80);
inline constexpr std::uint16_t unrecovered_read_error = make(2, 0x81);
} // namespace sc

// ---- opcodes ----------------------------------------------------------------
namespace admin {
inline constexpr std::uint8_t get_log_page = 0x02;
inline constexpr std::uint8_t identify = 0x06;
inline constexpr std::uint8_t abort = 0x08;
inline constexpr std::uint8_t set_features = 0x09;
inline constexpr std::uint8_t get_features = 0x0A;
inline constexpr std::uint8_t async_event_request = 0x0C;
inline constexpr std::uint8_t keep_alive = 0x18;
inline constexpr std::uint8_t fabrics = 0x7F;
} // namespace admin
namespace io {
inline constexpr std::uint8_t flush = 0x00;
inline constexpr std::uint8_t write = 0x01;
inline constexpr std::uint8_t read = 0x02;
inline constexpr std::uint8_t write_zeroes = 0x08;
inline constexpr std::uint8_t dataset_management = 0x09;
/// A Dataset Management range: context attributes, length in LBAs, starting LBA.
inline constexpr std::uint32_t dsm_range_len = 16;
inline constexpr std::uint8_t fabrics = 0x7F;
} // namespace io
namespace fctype {
inline constexpr std::uint8_t property_set = 0x00;
inline constexpr std::uint8_t connect = 0x01;
inline constexpr std::uint8_t property_get = 0x04;
inline constexpr std::uint8_t auth_send = 0x05;
inline constexpr std::uint8_t auth_receive = 0x06;
} // namespace fctype
/// Connect's completion dword 0, bits 17 and 18 (AUTHREQ): authentication
/// transaction required / secure channel required.
inline constexpr std::uint32_t connect_authreq_atr = 1u << 17;
inline constexpr std::uint32_t connect_authreq_ascr = 1u << 18;
namespace cns {
inline constexpr std::uint8_t ns = 0x00;
inline constexpr std::uint8_t ctrl = 0x01;
inline constexpr std::uint8_t active_ns_list = 0x02;
inline constexpr std::uint8_t ns_desc_list = 0x03;
} // namespace cns
namespace lid {
inline constexpr std::uint8_t error = 0x01;
inline constexpr std::uint8_t smart = 0x02;
inline constexpr std::uint8_t discovery = 0x70;
} // namespace lid
namespace fid {
inline constexpr std::uint8_t num_queues = 0x07;
inline constexpr std::uint8_t async_event_config = 0x0B;
inline constexpr std::uint8_t keep_alive_timer = 0x0F;
} // namespace fid

// ---- controller properties (registers) --------------------------------------
namespace prop {
inline constexpr std::uint32_t cap = 0x00;   // 8 bytes
inline constexpr std::uint32_t vs = 0x08;    // 4 bytes
inline constexpr std::uint32_t cc = 0x14;    // 4 bytes
inline constexpr std::uint32_t csts = 0x1C;  // 4 bytes
} // namespace prop

// ---- Fabrics Connect --------------------------------------------------------
inline constexpr std::size_t connect_data_len = 1024;
inline constexpr std::uint16_t dynamic_cntlid = 0xFFFF;
inline constexpr char discovery_nqn[] = "nqn.2014-08.org.nvmexpress.discovery";

/// The Connect command's fields (SQE) and its 1024-byte data.
struct ConnectCmd {
    std::uint16_t recfmt = 0;    // SQE bytes 40-41
    std::uint16_t qid = 0;       // 42-43
    std::uint16_t sqsize = 0;    // 44-45, 0's based
    std::uint8_t cattr = 0;      // 46 (bit 2: disable SQ flow control)
    std::uint32_t kato = 0;      // 48-51, milliseconds
};
inline ConnectCmd connect_cmd(const Sqe& s) {
    return {get16(&s.b[40]), get16(&s.b[42]), get16(&s.b[44]), s.b[46], get32(&s.b[48])};
}
struct ConnectData {
    std::array<std::uint8_t, 16> hostid{};  // 0-15
    std::uint16_t cntlid = 0;               // 16-17
    char subnqn[257]{};                     // 256-511 (NUL-terminated copy)
    char hostnqn[257]{};                    // 512-767
};
inline ConnectData connect_data(std::span<const std::uint8_t> d) {
    ConnectData c;
    if (d.size() < connect_data_len) return c;
    std::memcpy(c.hostid.data(), d.data(), 16);
    c.cntlid = get16(d.data() + 16);
    std::memcpy(c.subnqn, d.data() + 256, 256);
    std::memcpy(c.hostnqn, d.data() + 512, 256);
    return c;
}

} // namespace rpm::nvmf::wire
