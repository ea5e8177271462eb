# Every dependency is a Debian 12 package that tools/install-deps installs.
find_package(PkgConfig REQUIRED)
pkg_check_modules(PMEM2 REQUIRED IMPORTED_TARGET libpmem2)
pkg_check_modules(IBVERBS REQUIRED IMPORTED_TARGET libibverbs)
pkg_check_modules(RDMACM REQUIRED IMPORTED_TARGET librdmacm)
# Native RDMA FLUSH needs ibv_wr_flush, which rdma-core added in v45 (Debian
# 12 ships v44): probed here, so the grant can say which of the two is
# missing when the RNIC reports the capability (src/server/grant.cpp).
include(CheckSymbolExists)
set(CMAKE_REQUIRED_INCLUDES ${IBVERBS_INCLUDE_DIRS})
check_symbol_exists(ibv_wr_flush "infiniband/verbs.h" RPM_HAVE_IBV_WR_FLUSH)
unset(CMAKE_REQUIRED_INCLUDES)
pkg_check_modules(URING REQUIRED IMPORTED_TARGET liburing)
find_package(OpenSSL REQUIRED)
# CRC-32 (IEEE) of NVMe DH-HMAC-CHAP secrets (src/nvmf/auth/secret.cpp).
find_package(ZLIB REQUIRED)
find_package(Boost 1.74 REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(Threads REQUIRED)
if(RPM_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()

if(RPM_SANITIZE)
  add_compile_options(-fsanitize=${RPM_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${RPM_SANITIZE})
endif()
if(RPM_DEBUG_INFO STREQUAL "lines")
  # After CMAKE_CXX_FLAGS_<CONFIG>'s -g on the command line, so it wins.
  add_compile_options(-g1)
elseif(NOT RPM_DEBUG_INFO STREQUAL "full")
  message(FATAL_ERROR "RPM_DEBUG_INFO must be full or lines, not '${RPM_DEBUG_INFO}'")
endif()
