// Set / Get Features: Number of Queues (0x07), Async Event Configuration
// (0x0B), Keep Alive Timer (0x0F). A discovery controller has no I/O queues,
// so only the last two. Nothing is saveable: SV is ignored, and SEL 1
// (default) and 2 (saved) read the current values.
#include "nvmf/controller/state.hpp"

#include <algorithm>
#include <limits>

namespace rpm::nvmf::target {

namespace {

constexpr std::uint32_t feature_changeable = 1u << 2;  // SEL 3 capabilities
// Async Event Configuration: only the SMART critical-warning bits 7:0 exist
// without OAES bits, and no event is ever sent for them.
constexpr std::uint32_t aec_supported = 0xFF;

Outcome value(std::uint32_t dw0) {
    Outcome o;
    o.dw0 = dw0;
    return o;
}

std::uint32_t queues_dw0(std::uint16_t granted) {
    const std::uint32_t z = granted ? granted - 1u : 0u;  // 0's based
    return z | z << 16;
}

bool has_io_queue(const ControllerState& s) {
    return std::any_of(s.queues.begin(), s.queues.end(), [](std::uint16_t q) { return q != 0; });
}

// NSQR 15:0, NCQR 31:16 (0's based). A TCP queue is an SQ and CQ pair, so
// both are granted the smaller ask, capped by the target's limit.
Outcome set_queue_count(ControllerState& s, const ControllerView& v, std::uint32_t cdw11) {
    const std::uint32_t nsqr = cdw11 & 0xFFFF, ncqr = cdw11 >> 16;
    if (nsqr == 0xFFFF || ncqr == 0xFFFF) return failed(wire::sc::invalid_field);
    if (has_io_queue(s)) return failed(wire::sc::command_sequence_error);
    const std::uint32_t cap = std::max<std::uint16_t>(v.limits->max_io_queues, 1);
    s.granted_queues = std::uint16_t(std::min(std::min(nsqr, ncqr) + 1, cap));
    return value(queues_dw0(s.granted_queues));
}

bool supported(const ControllerView& v, std::uint8_t fid) {
    if (fid == wire::fid::keep_alive_timer || fid == wire::fid::async_event_config) return true;
    return fid == wire::fid::num_queues && !v.discovery();
}

} // namespace

std::uint32_t round_kato(std::uint32_t ms) {
    const std::uint64_t rounded = (std::uint64_t(ms) + kas_ms - 1) / kas_ms * kas_ms;
    return std::uint32_t(std::min<std::uint64_t>(rounded, std::numeric_limits<std::uint32_t>::max() / kas_ms * kas_ms));
}

std::uint16_t granted_io_queues(const ControllerState& s, const ControllerView& v) {
    if (v.discovery()) return 0;
    return s.granted_queues ? s.granted_queues : v.limits->max_io_queues;
}

Outcome set_features(ControllerState& s, const ControllerView& v, const wire::Sqe& sqe) {
    const auto fid = std::uint8_t(sqe.cdw(10) & 0xFF);
    const auto cdw11 = sqe.cdw(11);
    if (!supported(v, fid)) return failed(wire::sc::invalid_field);
    switch (fid) {
    case wire::fid::num_queues: return set_queue_count(s, v, cdw11);
    case wire::fid::keep_alive_timer: s.kato_ms = round_kato(cdw11); return {};
    default:  // async event configuration
        if (cdw11 & ~aec_supported) return failed(wire::sc::invalid_field);
        s.async_event_config = cdw11;
        return {};
    }
}

Outcome get_features(const ControllerState& s, const ControllerView& v, const wire::Sqe& sqe) {
    const auto fid = std::uint8_t(sqe.cdw(10) & 0xFF);
    const auto sel = (sqe.cdw(10) >> 8) & 0x7;
    if (!supported(v, fid) || sel > 3) return failed(wire::sc::invalid_field);
    if (sel == 3) return value(feature_changeable);
    switch (fid) {
    case wire::fid::num_queues: return value(queues_dw0(granted_io_queues(s, v)));
    case wire::fid::keep_alive_timer: return value(s.kato_ms);
    default: return value(s.async_event_config);
    }
}

} // namespace rpm::nvmf::target
