// The registry: where Connect finds subsystems and controllers. One mutex
// guards the controller list and the cntlid map; the lock order is registry
// then controller (a controller never calls back into the registry).
#include "nvmf/controller/state.hpp"

#include <algorithm>

namespace rpm::nvmf::target {

namespace {

std::pair<std::shared_ptr<Controller>, Outcome> accepted(std::shared_ptr<Controller> c) {
    Outcome o;
    o.dw0 = c->cntlid();  // AUTHREQ (bits 17:16) = 0: no authentication
    return {std::move(c), o};
}

} // namespace

Registry::Registry(std::vector<std::shared_ptr<Subsystem>> subsystems, Limits limits)
    : subsystems_(std::move(subsystems)), limits_(std::move(limits)), cntlid_used_(max_cntlid + 1, false) {}

std::pair<std::shared_ptr<Controller>, Outcome> Registry::connect(const wire::Sqe& sqe,
                                                                  std::span<const std::uint8_t> data) {
    if (auto o = check_connect(sqe, data, limits_); o.status != wire::sc::success) return {nullptr, o};
    const auto d = wire::connect_data(data);
    return wire::connect_cmd(sqe).qid == 0 ? connect_admin(sqe, d) : connect_io(sqe, d);
}

std::pair<std::shared_ptr<Controller>, Outcome> Registry::connect_admin(const wire::Sqe& sqe,
                                                                        const wire::ConnectData& d) {
    // Only the dynamic controller model: the host may not pick a cntlid.
    if (d.cntlid != wire::dynamic_cntlid) return {nullptr, invalid_connect_parameter(true, connect_offset::cntlid)};
    auto sub = find_subsystem(subsystems_, d.subnqn);
    if (!sub) return {nullptr, invalid_connect_parameter(true, connect_offset::subnqn)};
    if (d.hostnqn[0] == '\0') return {nullptr, invalid_connect_parameter(true, connect_offset::hostnqn)};
    if (!sub->host_allowed(d.hostnqn)) return {nullptr, failed(wire::sc::connect_invalid_host)};
    std::lock_guard lock(mu_);
    const auto id = allocate_cntlid();
    if (id == 0) return {nullptr, failed(wire::sc::connect_controller_busy)};
    auto c = std::make_shared<Controller>(std::move(sub), id, d.hostnqn, wire::connect_cmd(sqe).kato, limits_);
    c->set_hostid(d.hostid);
    (void)c->attach_queue(0);  // a new controller has no queue yet: cannot fail
    controllers_.push_back(c);
    return accepted(std::move(c));
}

std::pair<std::shared_ptr<Controller>, Outcome> Registry::connect_io(const wire::Sqe& sqe,
                                                                     const wire::ConnectData& d) {
    auto sub = find_subsystem(subsystems_, d.subnqn);
    if (!sub) return {nullptr, invalid_connect_parameter(true, connect_offset::subnqn)};
    std::lock_guard lock(mu_);
    // Another host's controller, or one of another subsystem, is as unknown
    // as a cntlid never handed out.
    auto it = std::find_if(controllers_.begin(), controllers_.end(), [&](const auto& c) {
        return c->cntlid() == d.cntlid && &c->subsystem() == sub.get() && c->hostnqn() == d.hostnqn;
    });
    if (it == controllers_.end()) return {nullptr, invalid_connect_parameter(true, connect_offset::cntlid)};
    // The same host NQN with another Host Identifier is another host (NVMe
    // over Fabrics: Connect Invalid Parameters, at the Host Identifier).
    if ((*it)->hostid() != d.hostid) return {nullptr, invalid_connect_parameter(true, connect_offset::hostid)};
    const auto status = (*it)->attach_queue(wire::connect_cmd(sqe).qid);
    if (status == wire::sc::connect_invalid_parameters)
        return {nullptr, invalid_connect_parameter(false, connect_offset::qid)};
    if (status != wire::sc::success) return {nullptr, failed(status)};
    return accepted(*it);
}

void Registry::release(const std::shared_ptr<Controller>& c, std::uint16_t qid) {
    if (!c) return;
    std::lock_guard lock(mu_);
    c->detach_queue(qid);
    if (qid != 0) return;
    // Not found: take_expired already dropped it (and its cntlid may be
    // someone else's by now), so compare pointers, not cntlids.
    auto it = std::find(controllers_.begin(), controllers_.end(), c);
    if (it != controllers_.end()) forget(std::size_t(it - controllers_.begin()));
}

std::vector<std::shared_ptr<Controller>> Registry::take_expired(std::chrono::steady_clock::time_point now) {
    std::lock_guard lock(mu_);
    std::vector<std::shared_ptr<Controller>> out;
    for (std::size_t i = controllers_.size(); i-- > 0;) {
        if (!controllers_[i]->expired(now)) continue;
        out.push_back(controllers_[i]);
        forget(i);
    }
    return out;
}

std::uint16_t Registry::allocate_cntlid() {
    // The lowest free cntlid, as nvmet's IDA hands them out.
    for (std::uint32_t id = next_cntlid_; id <= max_cntlid; ++id) {
        if (cntlid_used_[id]) continue;
        cntlid_used_[id] = true;
        next_cntlid_ = std::uint16_t(id + 1);
        return std::uint16_t(id);
    }
    return 0;
}

void Registry::forget(std::size_t index) {
    const auto id = controllers_[index]->cntlid();
    cntlid_used_[id] = false;
    next_cntlid_ = std::min(next_cntlid_, id);
    controllers_.erase(controllers_.begin() + std::ptrdiff_t(index));
}

} // namespace rpm::nvmf::target
