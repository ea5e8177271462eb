#include "paths.hpp"

namespace rpm::test {

std::filesystem::path fixtures_dir() { return RPM_FIXTURES_DIR; }
std::filesystem::path bin_dir() { return RPM_BIN_DIR; }

}  // namespace rpm::test
