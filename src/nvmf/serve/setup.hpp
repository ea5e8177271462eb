#pragma once
// Target::start's steps, each a function: checking the options, building
// the subsystems through the engine's verbs (listening is the fabric's:
// fabric.hpp).

#include "nvmf/controller/controller.hpp"

#include <rpm/nvmf.hpp>

#include <memory>
#include <vector>

namespace rpm::nvmf::target {

/// ERRORS: errc::invalid_argument naming the option that is wrong.
Result<void> check_options(const TargetOptions& o);

/// For each SubsystemSpec: create_subsystem, then per namespace
/// create_backend + map_namespace. `handles` gets the engine's handles.
Result<std::vector<std::shared_ptr<Subsystem>>> build_subsystems(const TargetOptions& o, const std::shared_ptr<Engine>& engine,
                                                                 std::vector<SubsystemHandle>& handles);

Limits limits_of(const TargetOptions& o, std::uint16_t port);
std::vector<DiscoveryEntry> discovery_entries(const TargetOptions& o, std::uint16_t port);

} // namespace rpm::nvmf::target
