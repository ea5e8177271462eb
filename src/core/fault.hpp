// Planted faults for the tests' controls: a test shows that a protective
// step matters by switching it off in the library it runs against and
// watching its own check fail. Switched on by the environment,
// RPM_FAULT=name[,name...], read once; docs/testing.md ("Planted faults")
// lists the names. None of them can lose acknowledged data: each only
// takes back an improvement (a delay, a report).
#pragma once

#include <string_view>

namespace rpm {

/// Whether RPM_FAULT names `name`. ERRORS: none.
bool fault_planted(std::string_view name) noexcept;

} // namespace rpm
