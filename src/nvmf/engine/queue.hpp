#pragma once
// The software engine's OffloadQueue: a queue enabled for offload holds one
// staging slot of its subsystem until it is destroyed.

#include "nvmf/engine/subsystem.hpp"

#include <rpm/nvmf_offload.hpp>

#include <cstddef>
#include <memory>

namespace rpm::nvmf::detail {

/// A queue owning staging slot `slot` (acquired by the caller) of
/// `subsystem`; counts itself in enabled_queues while it lives.
std::unique_ptr<OffloadQueue> make_offload_queue(std::shared_ptr<SubsystemState> subsystem, std::size_t slot);

} // namespace rpm::nvmf::detail
