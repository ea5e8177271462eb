// Controller properties (the registers a PCIe controller would map): CAP,
// VS, CC, CSTS, reached through Fabrics Property Get / Property Set. The
// sizes are strict, as in Linux's nvmet: CAP only as 8 bytes, the others only
// as 4, and only CC is writable.
#include "nvmf/controller/state.hpp"

namespace rpm::nvmf::target {

namespace {

// SQE bytes 40 (ATTRIB: size in bits 2:0), 44 (OFST), 48 (VALUE).
std::uint8_t property_size_code(const wire::Sqe& sqe) { return sqe.b[40] & 0x7; }
std::uint32_t property_offset(const wire::Sqe& sqe) { return wire::get32(&sqe.b[44]); }

// CAP.TO in 500 ms units: how long the host waits for CSTS.RDY. RDY is set
// at once here; 7.5 s only bounds a host's patience.
constexpr std::uint64_t cap_timeout = 15;

Outcome value_outcome(std::uint64_t v) {
    Outcome o;
    o.dw0 = std::uint32_t(v);
    o.dw1 = std::uint32_t(v >> 32);
    return o;
}

// What CC.EN 0 -> 1 checks before setting RDY (CFS instead on a mismatch):
// the page size and arbitration CAP offers, the NVM command set, and (I/O
// controllers only: the kernel's discovery controller sets them too, but a
// discovery controller has no I/O queues to size) 64-byte SQEs, 16-byte CQEs.
bool cc_acceptable(std::uint32_t v, bool discovery) {
    if (cc::mps(v) != 0 || cc::ams(v) != 0 || cc::css(v) != 0) return false;
    return discovery || (cc::iosqes(v) == 6 && cc::iocqes(v) == 4);
}

void update_cc(ControllerState& s, std::uint32_t v, bool discovery) {
    const std::uint32_t old = s.cc;
    s.cc = v;
    if (!(old & cc::en) && (v & cc::en)) s.csts = cc_acceptable(v, discovery) ? csts::rdy : csts::cfs;
    if ((old & cc::en) && !(v & cc::en)) s.csts = 0;  // a reset: not ready, no shutdown state
    if (cc::shn(v) != 0 && cc::shn(old) == 0) s.csts |= csts::shst_complete;
    if (cc::shn(v) == 0 && cc::shn(old) != 0) s.csts &= ~csts::shst_complete;
}

} // namespace

std::uint64_t cap_value(const Limits& limits) {
    std::uint64_t cap = std::uint16_t(limits.max_queue_size - 1);  // MQES, 0's based
    cap |= 1ull << 16;                   // CQR: queues must be contiguous
    cap |= cap_timeout << 24;            // TO
    cap |= 1ull << 37;                   // CSS: the NVM command set
    return cap;                          // DSTRD, MPSMIN, MPSMAX = 0: 4 KiB pages
}

bool is_ready(const ControllerState& s) { return (s.cc & cc::en) && (s.csts & csts::rdy); }

Outcome get_property(const ControllerState& s, const ControllerView& v, const wire::Sqe& sqe) {
    const auto size = property_size_code(sqe);
    const auto offset = property_offset(sqe);
    if (size == 1) return offset == wire::prop::cap ? value_outcome(cap_value(*v.limits)) : failed(wire::sc::invalid_field);
    if (size != 0) return failed(wire::sc::invalid_field);
    switch (offset) {
    case wire::prop::vs: return value_outcome(nvme_version);
    case wire::prop::cc: return value_outcome(s.cc);
    case wire::prop::csts: return value_outcome(s.csts);
    default: return failed(wire::sc::invalid_field);
    }
}

Outcome set_property(ControllerState& s, const ControllerView& v, const wire::Sqe& sqe) {
    if (property_size_code(sqe) != 0 || property_offset(sqe) != wire::prop::cc) return failed(wire::sc::invalid_field);
    update_cc(s, wire::get32(&sqe.b[48]), v.discovery());
    return {};
}

} // namespace rpm::nvmf::target
