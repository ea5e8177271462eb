// A subsystem as the controllers see it: immutable once made, so any thread
// may read it; namespaces come from the engine at each call (the engine is
// thread-safe and owns the namespace map).
#include "nvmf/detail/controller_state.hpp"

#include <algorithm>

namespace rpm::nvmf::target {

struct Subsystem::Data {
    SubsystemSpec spec;
    bool discovery = false;
    std::shared_ptr<Engine> engine;
    SubsystemHandle handle = 0;
    std::vector<DiscoveryEntry> entries;
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
    if (d_->discovery || allowed.empty()) return true;
    return std::find(allowed.begin(), allowed.end(), hostnqn) != allowed.end();
}

std::vector<NamespaceView> Subsystem::namespaces() const {
    if (!d_->engine) return {};
    return d_->engine->namespaces(d_->handle);
}

} // namespace rpm::nvmf::target
