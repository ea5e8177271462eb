# Debian packages of the three install components (cmake/Install.cmake):
#   cpack -G DEB --config build/CPackConfig.cmake   (README, "Using it")
# gives librpmpm1 (the library; librpmpm<major>), librpmpm-dev (headers, CMake and pkg-config
# files, docs) and rpmpm-tools (rpm-probe, rpm-server, rpm-client, rpm-bench,
# rpm-nvmf, rpm-kvstore, rpm-kvbench and their man pages); with the RocksDB
# plug-in built, a fourth: librpm-rocksdb1 (librpm-rocksdb<major>: the
# plug-in's library, its .so link and its headers in one package, as the
# piece is optional; docs/rocksdb.md). The libraries'
# and the tools' dependencies come from dpkg-shlibdeps (dpkg-dev); the
# packages install under /usr. tests/install/package_test.sh installs them
# and builds a program against what they put there.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME rpmpm)
set(CPACK_PACKAGE_VENDOR "the rpm project")
set(CPACK_PACKAGE_CONTACT "rpm developers <rpm@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_DIRECTORY ${PROJECT_BINARY_DIR}/packages)
set(CPACK_COMPONENTS_ALL runtime dev tools)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME librpmpm${PROJECT_VERSION_MAJOR})
set(CPACK_DEBIAN_DEV_PACKAGE_NAME librpmpm-dev)
set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME rpmpm-tools)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_TOOLS_PACKAGE_SHLIBDEPS ON)
# The tools need librpmpm.so.0, which is in another of these packages, not
# yet installed: dpkg-shlibdeps finds it in the build tree and leaves the
# dependency to the line below.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${PROJECT_BINARY_DIR}/lib)
# The library's soname dependency (shlibdeps finds librpmpm<major> only if it is
# installed): stated, the exact version, as the headers and library go together.
set(_rpm_exact "librpmpm${PROJECT_VERSION_MAJOR} (= ${PROJECT_VERSION})")
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "${_rpm_exact}")
set(CPACK_DEBIAN_TOOLS_PACKAGE_DEPENDS "${_rpm_exact}")
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION "rpm: replicate writes into remote persistent memory (shared library)")
set(CPACK_COMPONENT_DEV_DESCRIPTION "rpm: headers, CMake package and pkg-config file")
set(CPACK_COMPONENT_TOOLS_DESCRIPTION "rpm: rpm-probe, rpm-server, rpm-client, rpm-bench, rpm-nvmf, rpm-kvstore")
# The plug-in's package: dpkg-shlibdeps finds librocksdb7.8 (Debian's) and,
# as for the tools, leaves librpmpm to the stated dependency.
if(TARGET rpm_rocksdb)
  list(APPEND CPACK_COMPONENTS_ALL rocksdb)
  set(CPACK_DEBIAN_ROCKSDB_PACKAGE_NAME librpm-rocksdb${PROJECT_VERSION_MAJOR})
  set(CPACK_DEBIAN_ROCKSDB_PACKAGE_SHLIBDEPS ON)
  set(CPACK_DEBIAN_ROCKSDB_PACKAGE_DEPENDS "${_rpm_exact}")
  set(CPACK_COMPONENT_ROCKSDB_DESCRIPTION "rpm: RocksDB FileSystem plug-in replicating the WAL (librpm_rocksdb, headers)")
endif()
include(CPack)
