// The library's own version, compiled in from include/rpm/version.hpp.
#include <rpm/version.hpp>

#define RPM_STRINGIFY_(x) #x
#define RPM_STRINGIFY(x) RPM_STRINGIFY_(x)

namespace rpm {

const char* version() noexcept {
  return RPM_STRINGIFY(RPM_VERSION_MAJOR) "." RPM_STRINGIFY(RPM_VERSION_MINOR) "." RPM_STRINGIFY(RPM_VERSION_PATCH);
}

int version_number() noexcept { return RPM_VERSION; }

} // namespace rpm
