# rpm_abi: a second librpmpm.so, in build/abi/, for tools/abi only (the ABI
# check of tests/install compares its ABI with abi/librpmpm.abi). abidw
# reads the ABI from DWARF, and the library proper has line tables only in
# the tested trees (-g1: abidw finds its names, no declarations); full -g there
# would slow every build of it and of the tests that link its objects. So
# the same sources are compiled once more, with full -g but at -O0 and as a
# unity build (about 95 CPU seconds from an empty compiler cache, 2.5 s from
# a full one: docs/testing.md, "ABI and versions"), and linked with the same
# version script. Whether that stands for the real library is checked, not
# assumed: tools/abi fails when it lacks a name the real one exports (it may
# have more: at -O0, a template over a public type that -O2 inlines).
#
# GCC, non-sanitized trees only: a sanitizer adds nothing to the ABI, and
# the baseline's types are as GCC describes them (clang's DWARF differs).
if(RPM_SANITIZE OR NOT CMAKE_CXX_COMPILER_ID STREQUAL "GNU" OR NOT RPM_BUILD_TESTS)
  return()
endif()

get_target_property(_rpm_abi_sources rpm_objects SOURCES)
add_library(rpm_abi_objects OBJECT ${_rpm_abi_sources})
target_include_directories(rpm_abi_objects PRIVATE ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}
                           ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(rpm_abi_objects PRIVATE PkgConfig::PMEM2 PkgConfig::IBVERBS PkgConfig::RDMACM PkgConfig::URING
                      OpenSSL::SSL OpenSSL::Crypto ZLIB::ZLIB Boost::headers nlohmann_json::nlohmann_json
                      Threads::Threads)
target_compile_features(rpm_abi_objects PRIVATE cxx_std_20)
target_compile_definitions(rpm_abi_objects PRIVATE RPM_HAVE_IBV_WR_FLUSH=$<BOOL:${RPM_HAVE_IBV_WR_FLUSH}>)
# After the directory's -g1 and the configuration's -O2 on the command
# line, so these win. Batches of CMake's default 8 sources, as in the
# sanitizer trees, whose builds keep them free of clashing file-local names
# (16 do clash).
target_compile_options(rpm_abi_objects PRIVATE -g -O0)
set_target_properties(rpm_abi_objects PROPERTIES CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON
                      UNITY_BUILD ON)

add_library(rpm_abi SHARED $<TARGET_OBJECTS:rpm_abi_objects>)
set_target_properties(rpm_abi PROPERTIES OUTPUT_NAME rpmpm VERSION ${PROJECT_VERSION}
                      SOVERSION ${PROJECT_VERSION_MAJOR} LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/abi)
target_link_libraries(rpm_abi PRIVATE PkgConfig::PMEM2 PkgConfig::IBVERBS PkgConfig::RDMACM PkgConfig::URING
                      OpenSSL::SSL OpenSSL::Crypto ZLIB::ZLIB Threads::Threads)
target_link_options(rpm_abi PRIVATE -Wl,-Bsymbolic-functions -Wl,--version-script=${PROJECT_SOURCE_DIR}/cmake/librpmpm.map)
set_property(TARGET rpm_abi APPEND PROPERTY LINK_DEPENDS ${PROJECT_SOURCE_DIR}/cmake/librpmpm.map)
