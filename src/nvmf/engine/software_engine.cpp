// SoftwareEngine: the seed's NVMf offload verbs in software. Handles are
// indices + 1 into tables that only grow (the model has no verb to destroy
// a subsystem or backend); a shared_mutex guards the tables, each
// subsystem guards its own namespace map.
#include "nvmf/engine/backend.hpp"
#include "nvmf/engine/caps.hpp"
#include "nvmf/engine/queue.hpp"
#include "nvmf/engine/subsystem.hpp"
#include "nvmf/wire.hpp"

#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <utility>
#include <vector>

namespace rpm::nvmf {
namespace {

using detail::Backend;
using detail::SubsystemState;

class SoftwareEngine final : public Engine {
public:
    OffloadCaps query() const override { return caps_; }

    Result<SubsystemHandle> create_subsystem(const SubsystemAttrs& attrs) override {
        if (auto ok = detail::check_attrs(attrs, caps_); !ok) return ok.error();
        auto staging = detail::Staging::create(attrs);
        if (!staging) return staging.error();
        auto sub = std::make_shared<SubsystemState>(attrs, std::move(*staging));
        std::unique_lock lock(mu_);
        subsystems_.push_back(std::move(sub));
        backend_counts_.push_back(0);
        return static_cast<SubsystemHandle>(subsystems_.size());
    }

    Result<BackendHandle> create_backend(SubsystemHandle s, const NamespaceSpec& spec) override {
        auto sub = subsystem(s);
        if (!sub) return Error(errc::invalid_argument, "no subsystem " + std::to_string(s));
        if (auto room = room_for_backend(s); !room) return room.error();
        // Opening touches the file system: not under the tables' lock.
        auto backend = spec.kind == BackendKind::pmem ? detail::open_pmem_backend(spec, sub->attrs().sysfs_root)
                                                      : detail::open_block_backend(spec);
        if (!backend) return backend.error();
        std::unique_lock lock(mu_);
        if (auto room = room_locked(s); !room) return room.error();
        backends_.push_back({std::move(sub), std::move(*backend)});
        ++backend_counts_[s - 1];
        return static_cast<BackendHandle>(backends_.size());
    }

    Result<void> map_namespace(BackendHandle b, std::uint32_t fe_nsid, std::uint32_t lba_data_size,
                               std::uint32_t backend_nsid) override {
        auto entry = backend_entry(b);
        if (!entry) return Error(errc::invalid_argument, "no backend " + std::to_string(b));
        return entry->sub->map(b, entry->backend, fe_nsid, lba_data_size, backend_nsid);
    }

    Result<void> unmap_namespace(BackendHandle b, std::uint32_t fe_nsid) override {
        auto entry = backend_entry(b);
        if (!entry) return Error(errc::invalid_argument, "no backend " + std::to_string(b));
        return entry->sub->unmap(b, fe_nsid);
    }

    Result<std::unique_ptr<OffloadQueue>> enable(SubsystemHandle s) override {
        auto sub = subsystem(s);
        if (!sub) return Error(errc::invalid_argument, "no subsystem " + std::to_string(s));
        auto slot = sub->staging().acquire();
        if (!slot) {
            sub->counters().refused_enables.fetch_add(1, std::memory_order_relaxed);
            const auto& r = sub->staging().report();
            return Error(errc::unsupported, "no staging slot free: all " + std::to_string(r.slots) + " slots of " +
                                                std::to_string(sub->attrs().max_io_size) +
                                                " bytes are held by enabled queues");
        }
        return detail::make_offload_queue(std::move(sub), *slot);
    }

    std::uint16_t execute_software(SubsystemHandle s, std::span<const std::uint8_t, 64> sqe,
                                   std::span<std::byte> buffer) override {
        auto sub = subsystem(s);
        return sub ? sub->execute(sqe, buffer, false) : wire::sc::internal_error;
    }

    std::vector<NamespaceView> namespaces(SubsystemHandle s) const override {
        auto sub = subsystem(s);
        return sub ? sub->views() : std::vector<NamespaceView>{};
    }

    StagingReport staging(SubsystemHandle s) const override {
        auto sub = subsystem(s);
        return sub ? sub->staging().report() : StagingReport{};
    }

    EngineStats stats(SubsystemHandle s) const override {
        auto sub = subsystem(s);
        return sub ? sub->counters().snapshot() : EngineStats{};
    }

private:
    struct BackendEntry {
        std::shared_ptr<SubsystemState> sub;
        std::shared_ptr<Backend> backend;
    };

    std::shared_ptr<SubsystemState> subsystem(SubsystemHandle s) const {
        std::shared_lock lock(mu_);
        return s >= 1 && s <= subsystems_.size() ? subsystems_[s - 1] : nullptr;
    }

    std::optional<BackendEntry> backend_entry(BackendHandle b) const {
        std::shared_lock lock(mu_);
        if (b < 1 || b > backends_.size()) return std::nullopt;
        return backends_[b - 1];
    }

    Result<void> room_for_backend(SubsystemHandle s) const {
        std::shared_lock lock(mu_);
        return room_locked(s);
    }

    Result<void> room_locked(SubsystemHandle s) const {
        if (backends_.size() >= caps_.max_backend_ctrls_total)
            return Error(errc::unsupported, "the engine has its max_backend_ctrls_total (" +
                                                std::to_string(caps_.max_backend_ctrls_total) + ") already");
        if (backend_counts_[s - 1] >= caps_.max_backend_ctrls)
            return Error(errc::unsupported, "subsystem " + std::to_string(s) + " has its max_backend_ctrls (" +
                                                std::to_string(caps_.max_backend_ctrls) + ") already");
        return {};
    }

    const OffloadCaps caps_ = detail::software_caps();
    mutable std::shared_mutex mu_;
    std::vector<std::shared_ptr<SubsystemState>> subsystems_;
    std::vector<std::uint32_t> backend_counts_;  ///< per subsystem, same index
    std::vector<BackendEntry> backends_;
};

} // namespace

std::shared_ptr<Engine> make_software_engine() { return std::make_shared<SoftwareEngine>(); }

} // namespace rpm::nvmf
