# make install: the library, its public headers, the tools and their man
# pages, a CMake package (find_package(rpm) -> rpm::rpm) and a pkg-config
# file (rpmpm.pc). Three components, which are also the Debian packages
# (cmake/Package.cmake): runtime (the shared library), dev (headers, the
# .so link, CMake and pkg-config files) and tools (programs, man pages).
# A fourth, rocksdb, when the RocksDB plug-in is built: its library and
# headers (rocksdb/CMakeLists.txt; cmake --install build --component rocksdb).
include(CMakePackageConfigHelpers)

install(TARGETS rpm_c EXPORT rpmTargets)
install(TARGETS rpm EXPORT rpmTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT dev
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/rpm DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev)

set(RPM_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/rpm)
install(EXPORT rpmTargets NAMESPACE rpm:: DESTINATION ${RPM_CMAKE_DIR} COMPONENT dev)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/rpmConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/rpmConfig.cmake INSTALL_DESTINATION ${RPM_CMAKE_DIR})
# find_package(rpm X.Y) accepts what the version policy calls compatible
# (docs/testing.md, "ABI and versions"): before 1.0 only X.Y itself (its
# patches), since a 0.x minor version may break; from 1.0 on any X.Z, Z >= Y.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(_rpm_compatibility SameMinorVersion)
else()
  set(_rpm_compatibility SameMajorVersion)
endif()
write_basic_package_version_file(${PROJECT_BINARY_DIR}/rpmConfigVersion.cmake
                                 COMPATIBILITY ${_rpm_compatibility})
install(FILES ${PROJECT_BINARY_DIR}/rpmConfig.cmake ${PROJECT_BINARY_DIR}/rpmConfigVersion.cmake
        DESTINATION ${RPM_CMAKE_DIR} COMPONENT dev)

# The .pc file finds its prefix relative to itself, so the install can move.
file(RELATIVE_PATH RPM_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
configure_file(${PROJECT_SOURCE_DIR}/cmake/rpmpm.pc.in ${PROJECT_BINARY_DIR}/rpmpm.pc @ONLY)
# rpmpm-c.pc: for C programs (<rpm/rpm.h>), without rpmpm.pc's -std=c++20.
configure_file(${PROJECT_SOURCE_DIR}/cmake/rpmpm-c.pc.in ${PROJECT_BINARY_DIR}/rpmpm-c.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/rpmpm.pc ${PROJECT_BINARY_DIR}/rpmpm-c.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)

# A user's guide goes with the headers: README, the docs (not the man
# pages, which are the tools').
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT dev)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT dev
        FILES_MATCHING PATTERN "*.md" PATTERN "man" EXCLUDE)

include(cmake/Package.cmake)
