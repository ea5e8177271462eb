// The plug-in's planted faults, named in RPM_FAULT like the library's
// (docs/testing.md, "Planted faults"). librpmpm keeps its reader internal
// (it is not part of the public API), so the plug-in reads the variable
// the same way: comma-separated names, read once.
#pragma once

#include <string_view>

namespace rpm_rocksdb {

/// Whether RPM_FAULT names `name`. ERRORS: none.
bool fault_planted(std::string_view name) noexcept;

} // namespace rpm_rocksdb
