// Fabrics Connect checks that need no registry state. Statuses follow Linux's
// nvmet where the specification leaves a choice: a bad SQSIZE is Connect
// Invalid Parameters pointing at the field (not Invalid Queue Size), so the
// kernel host logs which parameter it was.
#include "nvmf/controller/state.hpp"

#include <algorithm>

namespace rpm::nvmf::target {

// Completion dword 0 of Connect Invalid Parameters: IPO in bits 15:0, IATTR
// in bits 23:16 (bit 0 of IATTR: the offset is into the data, not the SQE).
// Linux (IPO_IATTR_CONNECT_*, nvmf_log_connect_error) and SPDK
// (spdk_nvmf_fabric_connect_rsp) lay it out the same way.
Outcome invalid_connect_parameter(bool in_data, std::uint16_t offset) {
    Outcome o;
    o.status = wire::sc::connect_invalid_parameters;
    o.dw0 = (in_data ? 1u << 16 : 0u) | offset;
    return o;
}

Outcome check_connect(const wire::Sqe& sqe, std::span<const std::uint8_t> data, const Limits& limits) {
    Outcome o;
    if (data.size() < wire::connect_data_len) {
        o.status = wire::sc::sgl_data_length_invalid;
        return o;
    }
    const auto cmd = wire::connect_cmd(sqe);
    if (cmd.recfmt != 0) {
        o.status = wire::sc::connect_incompatible_format;
        return o;
    }
    // SQSIZE is 0's based; one entry (0) is no queue. The kernel's admin
    // queue has 32 entries whatever CAP.MQES says, so that much is accepted.
    const std::uint16_t mqes = std::uint16_t(limits.max_queue_size - 1);
    const std::uint16_t max = cmd.qid == 0 ? std::max(mqes, admin_queue_max_sqsize) : mqes;
    if (cmd.sqsize == 0 || cmd.sqsize > max) return invalid_connect_parameter(false, connect_offset::sqsize);
    return o;
}

std::shared_ptr<Subsystem> find_subsystem(const std::vector<std::shared_ptr<Subsystem>>& all, std::string_view nqn) {
    // The discovery subsystem's NQN is the well-known discovery NQN, so one
    // comparison finds either kind.
    auto it = std::find_if(all.begin(), all.end(), [&](const auto& s) { return s->nqn() == nqn; });
    return it == all.end() ? nullptr : *it;
}

} // namespace rpm::nvmf::target
