// One controller: its state behind one mutex, and the admin commands
// dispatched to the page builders (identify.cpp, log_pages.cpp,
// features.cpp, properties.cpp). Identify runs outside the lock: it asks the
// engine for the namespaces and needs none of the controller's state.
#include "nvmf/controller/state.hpp"

#include <algorithm>

namespace rpm::nvmf::target {

struct Controller::State : ControllerState {};

namespace {

// AERL allows max_aers outstanding; each waits until teardown (no event is
// ever raised: OAES is 0 and nothing sets a SMART critical warning).
Outcome async_event_request(ControllerState& s, const wire::Sqe& sqe) {
    if (s.pending_aers.size() >= max_aers) return failed(wire::sc::async_event_limit_exceeded);
    s.pending_aers.push_back(sqe.cid());
    Outcome o;
    o.deferred = true;
    return o;
}

// Admin commands other than Identify, with the lock held.
Outcome run_locked(ControllerState& s, const ControllerView& v, const wire::Sqe& sqe) {
    switch (sqe.opcode()) {
    case wire::admin::get_log_page: return get_log_page(s, v, sqe);
    case wire::admin::set_features: return set_features(s, v, sqe);
    case wire::admin::get_features: return get_features(s, v, sqe);
    case wire::admin::keep_alive: return {};
    case wire::admin::async_event_request: return async_event_request(s, sqe);
    case wire::admin::abort: {
        Outcome o;
        o.dw0 = 1;  // bit 0: the command was not aborted (it may already be done)
        return o;
    }
    default: return failed(wire::sc::invalid_opcode);
    }
}

} // namespace

Controller::Controller(std::shared_ptr<Subsystem> subsystem, std::uint16_t cntlid, std::string hostnqn,
                       std::uint32_t kato_ms, const Limits& limits)
    : subsystem_(std::move(subsystem)), cntlid_(cntlid), hostnqn_(std::move(hostnqn)), limits_(limits),
      state_(std::make_shared<State>()) {
    state_->kato_ms = round_kato(kato_ms);
}

bool Controller::is_discovery() const { return subsystem_->is_discovery(); }

Outcome Controller::property_get(const wire::Sqe& sqe) {
    std::lock_guard lock(state_->mu);
    state_->last_touch = std::chrono::steady_clock::now();
    return get_property(*state_, {cntlid_, subsystem_.get(), &limits_}, sqe);
}

Outcome Controller::property_set(const wire::Sqe& sqe) {
    std::lock_guard lock(state_->mu);
    state_->last_touch = std::chrono::steady_clock::now();
    return set_property(*state_, {cntlid_, subsystem_.get(), &limits_}, sqe);
}

Outcome Controller::admin(const wire::Sqe& sqe, std::span<const std::uint8_t> /*data*/) {
    const ControllerView v{cntlid_, subsystem_.get(), &limits_};
    if (sqe.opcode() == wire::admin::fabrics) {
        if (sqe.fctype() == wire::fctype::property_get) return property_get(sqe);
        if (sqe.fctype() == wire::fctype::property_set) return property_set(sqe);
        return failed(wire::sc::invalid_opcode);  // Connect on a connected queue, or unknown
    }
    {
        std::lock_guard lock(state_->mu);
        state_->last_touch = std::chrono::steady_clock::now();
        if (!is_ready(*state_)) return failed(wire::sc::command_sequence_error);
        if (sqe.opcode() != wire::admin::identify) return run_locked(*state_, v, sqe);
    }
    return identify(v, sqe);
}

bool Controller::ready() const {
    std::lock_guard lock(state_->mu);
    return is_ready(*state_);
}

std::uint16_t Controller::io_queues() const {
    std::lock_guard lock(state_->mu);
    return granted_io_queues(*state_, {cntlid_, subsystem_.get(), &limits_});
}

void Controller::touch() {
    std::lock_guard lock(state_->mu);
    state_->last_touch = std::chrono::steady_clock::now();
}

bool Controller::expired(std::chrono::steady_clock::time_point now) const {
    std::lock_guard lock(state_->mu);
    return state_->kato_ms > 0 && now - state_->last_touch > std::chrono::milliseconds(state_->kato_ms);
}

std::uint32_t Controller::kato_ms() const {
    std::lock_guard lock(state_->mu);
    return state_->kato_ms;
}

std::vector<std::uint16_t> Controller::take_pending_aers() {
    std::lock_guard lock(state_->mu);
    return std::exchange(state_->pending_aers, {});
}

void Controller::record_error(std::uint16_t sqid, std::uint16_t cid, std::uint16_t status, std::uint32_t nsid) {
    std::lock_guard lock(state_->mu);
    auto& s = *state_;
    s.errors.push_front({++s.error_count, sqid, cid, status, nsid});
    if (s.errors.size() > error_log_entries) s.errors.pop_back();
}

void Controller::record_io(bool write, std::uint64_t bytes) {
    std::lock_guard lock(state_->mu);
    auto& io = state_->io;
    if (write) {
        ++io.writes;
        io.bytes_written += bytes;
    } else {
        ++io.reads;
        io.bytes_read += bytes;
    }
}

std::uint16_t Controller::attach_queue(std::uint16_t qid) {
    std::lock_guard lock(state_->mu);
    auto& s = *state_;
    if (std::find(s.queues.begin(), s.queues.end(), qid) != s.queues.end())
        return wire::sc::connect_controller_busy;  // as nvmet: the queue is already connected
    if (qid != 0) {
        if (!is_ready(s)) return wire::sc::command_sequence_error;
        if (qid > granted_io_queues(s, {cntlid_, subsystem_.get(), &limits_}))
            return wire::sc::connect_invalid_parameters;  // the Registry points IPO at QID
    }
    s.queues.push_back(qid);
    return wire::sc::success;
}

void Controller::detach_queue(std::uint16_t qid) {
    std::lock_guard lock(state_->mu);
    std::erase(state_->queues, qid);
}

} // namespace rpm::nvmf::target
