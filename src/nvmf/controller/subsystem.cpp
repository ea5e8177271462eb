// A subsystem as the controllers see it: immutable once made, so any thread
// may read it; namespaces come from the engine at each call (the engine is
// thread-safe and owns the namespace map).
#include "nvmf/controller/state.hpp"

#include "nvmf/auth/auth.hpp"
#include "nvmf/auth/exchange.hpp"

#include <algorithm>
#include <atomic>
#include <functional>

namespace rpm::nvmf::target {

struct Subsystem::Data {
    SubsystemSpec spec;
    bool discovery = false;
    std::shared_ptr<Engine> engine;
    SubsystemHandle handle = 0;
    std::vector<DiscoveryEntry> entries;
    std::vector<auth::ControllerPolicy> policies;  // one per host secret (checked by Target::start)
    mutable std::atomic<std::uint32_t> seqnum{0};
};

Subsystem::Subsystem(std::shared_ptr<Data> d) : d_(std::move(d)) {}

std::shared_ptr<Subsystem> Subsystem::make_discovery(std::vector<DiscoveryEntry> entries) {
    auto d = std::make_shared<Data>();
    d->spec.nqn = wire::discovery_nqn;
    d->spec.model = "rpm NVMe-oF discovery";
    d->discovery = true;
    d->entries = std::move(entries);
    return std::shared_ptr<Subsystem>(new Subsystem(std::move(d)));
}

std::shared_ptr<Subsystem> Subsystem::make_nvm(const SubsystemSpec& spec, std::shared_ptr<Engine> engine,
                                               SubsystemHandle handle) {
    auto d = std::make_shared<Data>();
    d->spec = spec;
    d->engine = std::move(engine);
    d->handle = handle;
    for (const auto& h : spec.host_secrets) {
        auto key = auth::parse_secret(h.secret);
        if (!key) continue;  // Target::start refused it already
        auth::ControllerPolicy p;
        p.host_secret = std::move(*key);
        if (auto ctrl = auth::parse_secret(h.ctrl_secret)) p.ctrl_secret = std::move(*ctrl);
        p.host_nqn = h.hostnqn;
        p.subsystem_nqn = spec.nqn;
        d->policies.push_back(std::move(p));
    }
    // Spread the sequence numbers of different subsystems apart.
    d->seqnum = std::uint32_t(std::hash<std::string>{}(spec.nqn));
    return std::shared_ptr<Subsystem>(new Subsystem(std::move(d)));
}

const std::string& Subsystem::nqn() const { return d_->spec.nqn; }
bool Subsystem::is_discovery() const { return d_->discovery; }
const SubsystemSpec& Subsystem::spec() const { return d_->spec; }
Engine* Subsystem::engine() const { return d_->engine.get(); }
SubsystemHandle Subsystem::handle() const { return d_->handle; }
const std::vector<DiscoveryEntry>& Subsystem::discovery_entries() const { return d_->entries; }

bool Subsystem::host_allowed(const std::string& hostnqn) const {
    // Discovery is open to every host: it only says where subsystems are.
    const auto& allowed = d_->spec.allowed_hosts;
    if (d_->discovery || allowed.empty() || auth_policy(hostnqn) != nullptr) return true;
    return std::find(allowed.begin(), allowed.end(), hostnqn) != allowed.end();
}

const auth::ControllerPolicy* Subsystem::auth_policy(const std::string& hostnqn) const {
    for (const auto& p : d_->policies)
        if (p.host_nqn == hostnqn) return &p;
    return nullptr;
}

std::uint32_t Subsystem::next_auth_seqnum() const {
    std::uint32_t s = ++d_->seqnum;
    return s != 0 ? s : ++d_->seqnum;
}

std::vector<NamespaceView> Subsystem::namespaces() const {
    if (!d_->engine) return {};
    return d_->engine->namespaces(d_->handle);
}

} // namespace rpm::nvmf::target
