#pragma once
// Where a test finds the checkout's fixtures and the build's programs.
//
// The two absolute paths are compiled into paths.cpp alone (its own object
// library, rpm_test_paths): written into every test's command line, as they
// were, they made each test file differ between two clones, so a fresh
// clone could not reuse ccache's objects of an earlier one (cmake/Ccache.cmake).
#include <filesystem>

namespace rpm::test {

// The checkout's tests/fixtures folder.
std::filesystem::path fixtures_dir();
// The build folder's bin/ (rpm-probe, rpm-floor, rpm-server, ...).
std::filesystem::path bin_dir();

}  // namespace rpm::test
