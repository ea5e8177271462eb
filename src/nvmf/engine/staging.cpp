// Staging: where a subsystem's staging buffer lives, and its slots.
#include "nvmf/engine/staging.hpp"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

namespace rpm::nvmf::detail {

Result<std::unique_ptr<Staging>> Staging::create(const SubsystemAttrs& attrs) {
    std::unique_ptr<Staging> s(new Staging());
    s->slot_bytes_ = attrs.max_io_size;
    s->report_.bytes = attrs.staging_bytes;
    s->report_.slots = attrs.staging_bytes / attrs.max_io_size;
    if (auto placed = s->place(attrs); !placed) return placed.error();
    // Highest index first, so acquire() hands out slot 0 first.
    for (std::size_t i = s->report_.slots; i-- > 0;) s->free_.push_back(i);
    return s;
}

// P2P when a provider suits every client and has room; otherwise host
// memory, with the reason the manager gave.
Result<void> Staging::place(const SubsystemAttrs& attrs) {
    if (attrs.staging_clients.empty()) return map_host(attrs.staging_bytes, "no staging clients given");
    p2p::ManagerOptions mo;
    mo.root = attrs.sysfs_root;
    auto manager = p2p::Manager::discover(mo);
    if (!manager) return map_host(attrs.staging_bytes, "P2P discovery failed: " + manager.error().detail());
    auto choice = manager->find(attrs.staging_clients);
    if (!choice) return map_host(attrs.staging_bytes, "P2P placement failed: " + choice.error().detail());
    auto buffer = manager->allocate_p2p(*choice, attrs.staging_bytes, 4096);
    if (!buffer) return map_host(attrs.staging_bytes, buffer.error().detail());
    report_.p2p = true;
    report_.provider = buffer->provider();
    report_.why = choice->explanation;
    base_ = buffer->data();
    device_.emplace(std::move(*buffer));
    return {};
}

Result<void> Staging::map_host(std::size_t bytes, std::string why) {
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return Error(errc::io_error, "staging buffer of " + std::to_string(bytes) +
                                         " bytes in host memory: " + std::strerror(errno) + " (" + why + ")");
    host_ = base_ = static_cast<std::byte*>(p);
    report_.p2p = false;
    report_.why = std::move(why);
    return {};
}

Staging::~Staging() {
    if (host_ != nullptr) ::munmap(host_, report_.bytes);
}

std::optional<std::size_t> Staging::acquire() {
    std::lock_guard lock(mu_);
    if (free_.empty()) return std::nullopt;
    const auto slot = free_.back();
    free_.pop_back();
    return slot;
}

void Staging::release(std::size_t slot) {
    std::lock_guard lock(mu_);
    free_.push_back(slot);
}

std::span<std::byte> Staging::slot(std::size_t index) const noexcept {
    return {base_ + index * slot_bytes_, slot_bytes_};
}

std::size_t Staging::in_use() const {
    std::lock_guard lock(mu_);
    return report_.slots - free_.size();
}

} // namespace rpm::nvmf::detail
