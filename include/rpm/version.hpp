// rpm's version: the one place it is written (CMakeLists.txt reads it from
// here for the library's soname, the packages and the CMake/pkg-config files).
#pragma once

#include <rpm/export.hpp>

#define RPM_VERSION_MAJOR 1
#define RPM_VERSION_MINOR 0
#define RPM_VERSION_PATCH 0
/// One number for comparisons: #if RPM_VERSION >= RPM_VERSION_AT(0, 2, 0)
#define RPM_VERSION_AT(major, minor, patch) ((major) * 10000 + (minor) * 100 + (patch))
#define RPM_VERSION RPM_VERSION_AT(RPM_VERSION_MAJOR, RPM_VERSION_MINOR, RPM_VERSION_PATCH)

RPM_API_BEGIN

namespace rpm {

/// The version of the library the program runs with, as "MAJOR.MINOR.PATCH"
/// (the headers it was compiled with say RPM_VERSION_*; a program can
/// compare the two when the library is upgraded underneath it).
///
/// RETURN VALUE: a static string; never fails.
const char* version() noexcept;

/// The same as RPM_VERSION, for the library the program runs with.
int version_number() noexcept;

} // namespace rpm

RPM_API_END
