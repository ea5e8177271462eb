// Set-up steps shared by the operation benchmark (run.cpp) and
// --replication (tools/bench/replication/run.cpp); defined in run.cpp.
#pragma once

#include "report.hpp"

#include <rpm/client.hpp>

#include <string>
#include <vector>

namespace rpmbench {

/// nproc, CPU model and kernel into the report.
void describe_machine(Report& r);
/// What the server decided for a granted region.
RegionInfo region_info(const rpm::RemoteRegion& g);
/// Pin the process (before any thread exists, so every thread inherits it);
/// `described` gets the list, e.g. "0,1". False when the kernel refuses.
bool pin(const std::vector<unsigned>& cpus, std::string& described);

} // namespace rpmbench
