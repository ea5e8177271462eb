// Get Log Page: Error Information (LID 1), SMART / Health (LID 2) and, on a
// discovery controller, the Discovery log (LID 0x70). A page is built whole,
// then the host's window (offset, length) is cut out of it; past the page's
// end the window reads as zeros.
#include "nvmf/controller/state.hpp"

#include <algorithm>
#include <cstring>
#include <string>

namespace rpm::nvmf::target {

namespace {

using wire::put16;
using wire::put32;
using wire::put64;

constexpr std::uint8_t treq_secure_channel_not_required = 0x02;
constexpr std::uint16_t admin_max_sq_size = admin_queue_max_sqsize + 1;  // ASQSZ
constexpr std::uint16_t kelvin_25c = 273 + 25;
// SMART data units: thousands of 512-byte units, rounded up.
constexpr std::uint64_t data_unit_bytes = 512 * 1000;

struct Window {
    std::uint8_t lid = 0;
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
};

// CDW10: LID 7:0, NUMDL 31:16; CDW11: NUMDU 15:0; CDW12/13: LPOL/LPOU.
Window window_of(const wire::Sqe& sqe) {
    const std::uint64_t numd = (sqe.cdw(10) >> 16) | std::uint64_t(sqe.cdw(11) & 0xFFFF) << 16;
    return {std::uint8_t(sqe.cdw(10) & 0xFF), sqe.cdw(12) | std::uint64_t(sqe.cdw(13)) << 32, (numd + 1) * 4};
}

void put_entry(std::span<std::uint8_t> e, const DiscoveryEntry& d, const Limits& limits) {
    e[0] = d.trtype;
    e[1] = d.adrfam;
    e[2] = d.subtype;
    e[3] = treq_secure_channel_not_required;
    put16(&e[4], d.portid);
    put16(&e[6], d.cntlid);
    put16(&e[8], admin_max_sq_size);
    const std::string trsvcid = d.trsvcid.empty() ? std::to_string(limits.trsvcid) : d.trsvcid;
    put_string(e.subspan(32, 32), trsvcid, ' ');
    put_string(e.subspan(256, 256), d.subnqn, 0);
    put_string(e.subspan(512, 256), d.traddr.empty() ? limits.traddr : d.traddr, ' ');
    if (d.trtype == trtype_rdma) {
        e[768] = 1;  // TSAS for RDMA: RDMA_QPTYPE reliable connected
        e[769] = 1;  // RDMA_PRTYPE not specified
        e[770] = 1;  // RDMA_CMS rdma_cm
    } else {
        e[768] = 0;  // TSAS for TCP: SECTYPE none
    }
}

void put_u128(std::uint8_t* p, std::uint64_t v) {
    put64(p, v);
    put64(p + 8, 0);
}

// The page `lid` names, or empty when this controller has no such page.
std::vector<std::uint8_t> build_page(const ControllerState& s, const ControllerView& v, std::uint8_t lid) {
    if (v.discovery()) return lid == wire::lid::discovery ? discovery_log(*v.subsystem, *v.limits) : std::vector<std::uint8_t>{};
    if (lid == wire::lid::error) return error_log(s, v.limits->trtype);
    if (lid == wire::lid::smart) return smart_log(s);
    return {};
}

} // namespace

std::vector<std::uint8_t> discovery_log(const Subsystem& sub, const Limits& limits) {
    const auto& entries = sub.discovery_entries();
    std::vector<std::uint8_t> d(discovery_record_len * (1 + entries.size()));
    put64(&d[0], 1);               // GENCTR: the entries never change
    put64(&d[8], entries.size());  // NUMREC
    put16(&d[16], 0);              // RECFMT
    for (std::size_t i = 0; i < entries.size(); ++i)
        put_entry(std::span(d).subspan(discovery_record_len * (i + 1), discovery_record_len), entries[i], limits);
    return d;
}

std::vector<std::uint8_t> error_log(const ControllerState& s, std::uint8_t trtype) {
    std::vector<std::uint8_t> d(error_log_entries * error_entry_len);
    for (std::size_t i = 0; i < s.errors.size() && i < error_log_entries; ++i) {
        const auto& r = s.errors[i];
        auto* e = &d[i * error_entry_len];
        put64(e + 0, r.count);
        put16(e + 8, r.sqid);
        put16(e + 10, r.cid);
        put16(e + 12, std::uint16_t(r.status << 1));  // the CQE's status field: phase bit 0
        put16(e + 14, 0xFFFF);                        // parameter location: not known
        put32(e + 24, r.nsid);
        e[29] = trtype;
    }
    return d;
}

std::vector<std::uint8_t> smart_log(const ControllerState& s) {
    std::vector<std::uint8_t> d(smart_len);
    put16(&d[1], kelvin_25c);  // composite temperature
    d[3] = 100;                // available spare, %
    d[4] = 10;                 // available spare threshold, %
    put_u128(&d[32], (s.io.bytes_read + data_unit_bytes - 1) / data_unit_bytes);
    put_u128(&d[48], (s.io.bytes_written + data_unit_bytes - 1) / data_unit_bytes);
    put_u128(&d[64], s.io.reads);
    put_u128(&d[80], s.io.writes);
    put_u128(&d[176], s.error_count);  // number of error information log entries
    return d;
}

Outcome get_log_page(const ControllerState& s, const ControllerView& v, const wire::Sqe& sqe) {
    const auto w = window_of(sqe);
    const auto page = build_page(s, v, w.lid);
    if (page.empty()) return failed(wire::sc::invalid_log_page);
    // SMART is controller-wide only (LPA bit 0 clear): nsid 0 or all.
    if (w.lid == wire::lid::smart && sqe.nsid() != 0 && sqe.nsid() != 0xFFFFFFFF) return failed(wire::sc::invalid_field);
    // A transfer over MDTS is an invalid field, as for any command.
    if (w.offset % 4 != 0 || w.offset > page.size() || w.length > v.limits->max_io_size)
        return failed(wire::sc::invalid_field);
    Outcome o;
    o.data.assign(w.length, 0);
    const auto n = std::min<std::uint64_t>(w.length, page.size() - w.offset);
    std::copy_n(page.begin() + std::ptrdiff_t(w.offset), n, o.data.begin());
    return o;
}

} // namespace rpm::nvmf::target
