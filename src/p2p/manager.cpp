// Manager: discovery, placement and choice (the rules are in topology),
// and the allocation calls, which go to the shared state (ManagerState).
#include "p2p/manager_state.hpp"

#include "platform/sysfs.hpp"

#include <string>
#include <string_view>

namespace rpm::p2p {

Manager::Manager(std::shared_ptr<detail::ManagerState> state) noexcept : state_(std::move(state)) {}
Manager::Manager(Manager&&) noexcept = default;
Manager& Manager::operator=(Manager&&) noexcept = default;
Manager::~Manager() = default;

Result<Manager> Manager::discover(ManagerOptions opts) {
    if (!platform::sysfs::exists(opts.root, "sys/bus/pci/devices"))
        return Error(errc::path_not_found,
                     (opts.root / "sys/bus/pci/devices").string() +
                         ": no PCI devices under the root (is it a sysfs tree?)");
    std::vector<std::string> skipped;
    auto providers = detail::discover_providers(opts.root, skipped);
    auto facts = detail::read_host_facts(opts.root, opts.extra_whitelist);
    return Manager(std::make_shared<detail::ManagerState>(std::move(opts), std::move(providers),
                                                         std::move(facts), std::move(skipped)));
}

namespace {

// A moved-from Manager has no state (the shared_ptr went with the move): its
// calls say so, or report nothing, instead of dereferencing null.
Error moved_from_manager(std::string_view call) {
    return Error(errc::invalid_argument, std::string(call) + " on a moved-from p2p::Manager");
}

} // namespace

const std::vector<Provider>& Manager::providers() const noexcept {
    static const std::vector<Provider> none;
    return state_ ? state_->providers() : none;
}
const std::vector<std::string>& Manager::skipped() const noexcept {
    static const std::vector<std::string> none;
    return state_ ? state_->skipped() : none;
}
std::vector<ProviderUsage> Manager::usage() const {
    if (!state_) return {};
    return state_->usage();
}

Result<Placement> Manager::place(const std::string& device) const {
    if (!state_) return moved_from_manager("place");
    return detail::place(state_->options().root, device);
}

Result<Choice> Manager::find(std::span<const std::string> clients) const {
    if (!state_) return moved_from_manager("find");
    if (clients.empty()) return Error(errc::invalid_argument, "find() needs at least one client");
    std::vector<Placement> placed;
    for (const auto& c : clients) {
        auto p = place(c);
        if (!p) return p.error();
        placed.push_back(std::move(*p));
    }
    // Ties go to the most free space: as it is now, not as discovered.
    std::vector<Provider> providers = state_->providers();
    const auto usage = state_->usage();
    for (std::size_t i = 0; i < providers.size(); ++i) providers[i].available = usage[i].free_bytes;
    Choice choice = detail::choose(state_->options().root, state_->facts(), providers, placed);
    choice.clients.assign(clients.begin(), clients.end());
    return choice;
}

Result<Buffer> Manager::allocate(const Choice& choice, std::size_t size, std::size_t align) {
    if (!state_) return moved_from_manager("allocate");
    return state_->allocate(choice, size, align, true);
}

Result<Buffer> Manager::allocate_p2p(const Choice& choice, std::size_t size, std::size_t align) {
    if (!state_) return moved_from_manager("allocate_p2p");
    return state_->allocate(choice, size, align, false);
}

void Manager::account(const Buffer& b, std::uint64_t bytes) noexcept {
    if (state_ && b.data() != nullptr) state_->account(b.source(), bytes);
}

Accounting Manager::accounting() const { return state_ ? state_->accounting() : Accounting{}; }

} // namespace rpm::p2p
