# make install: the library, its public headers, rpm-probe, a CMake package
# (find_package(rpm) -> rpm::rpm) and a pkg-config file (rpmpm.pc).
include(CMakePackageConfigHelpers)

install(TARGETS rpm EXPORT rpmTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/rpm DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

set(RPM_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/rpm)
install(EXPORT rpmTargets NAMESPACE rpm:: DESTINATION ${RPM_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/rpmConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/rpmConfig.cmake INSTALL_DESTINATION ${RPM_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/rpmConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/rpmConfig.cmake ${PROJECT_BINARY_DIR}/rpmConfigVersion.cmake
        DESTINATION ${RPM_CMAKE_DIR})

# The .pc file finds its prefix relative to itself, so the install can move.
file(RELATIVE_PATH RPM_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
configure_file(${PROJECT_SOURCE_DIR}/cmake/rpmpm.pc.in ${PROJECT_BINARY_DIR}/rpmpm.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/rpmpm.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
