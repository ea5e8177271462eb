// StagedQueue: an I/O queue enabled for offload (the seed's
// ibv_modify_qp_nvmf(ENABLE)); its commands run against its own staging
// slot, returned to the subsystem when the queue goes.
#include "nvmf/engine/queue.hpp"

#include <utility>

namespace rpm::nvmf::detail {
namespace {

class StagedQueue final : public OffloadQueue {
public:
    StagedQueue(std::shared_ptr<SubsystemState> subsystem, std::size_t slot)
        : subsystem_(std::move(subsystem)), slot_(slot) {
        subsystem_->counters().enabled_queues.fetch_add(1, std::memory_order_relaxed);
    }
    ~StagedQueue() override {
        subsystem_->staging().release(slot_);
        subsystem_->counters().enabled_queues.fetch_sub(1, std::memory_order_relaxed);
    }
    StagedQueue(const StagedQueue&) = delete;
    StagedQueue& operator=(const StagedQueue&) = delete;

    std::span<std::byte> staging() override { return subsystem_->staging().slot(slot_); }

    std::uint16_t execute(std::span<const std::uint8_t, 64> sqe) override {
        return subsystem_->execute(sqe, staging(), true);
    }
    bool runs_many() const noexcept override { return true; }
    void execute_many(std::span<StagedCommand> cmds) override { subsystem_->execute_many(cmds, staging(), true); }

private:
    std::shared_ptr<SubsystemState> subsystem_;
    std::size_t slot_;
};

} // namespace

std::unique_ptr<OffloadQueue> make_offload_queue(std::shared_ptr<SubsystemState> subsystem, std::size_t slot) {
    return std::make_unique<StagedQueue>(std::move(subsystem), slot);
}

} // namespace rpm::nvmf::detail
