# Compiles through ccache when it is installed (RPM_CCACHE, on by default),
# so that a second build folder or a fresh clone in another folder reuses
# what an earlier one compiled: tools/test builds four trees, and CI builds
# them again in a new clone every time (docs/testing.md, "The compiler cache").
#
# Included by the top CMakeLists.txt and by tests/fuzz's own project, so every
# tree compiles through the same cache with the same settings:
#   base_dir   the checkout root: ccache rewrites absolute paths under it
#              (-I, the source file, the include paths CMake's unity files
#              name) to relative ones before hashing, so two clones hash alike
#   hash_dir   off: the compilation's folder stays out of the hash, since
#              the prefix map below keeps it out of the objects too
#   -ffile-prefix-map=<root>=.   __FILE__ and the debug information say
#              ./src/x.cpp instead of the clone's absolute path (ccache
#              hashes only the part after the second '='); gdb finds the
#              sources with `directory <root>` or by starting in the root
#   RPM_CCACHE_DIR      where the cache lives (default: under the user's
#              cache folder, $XDG_CACHE_HOME or ~/.cache, in rpm/ccache: a
#              cache of its own, so rpm and other projects do not evict
#              each other)
#   RPM_CCACHE_MAXSIZE  its bound (default 2G: the four trees of one
#              revision take about 180 MB compressed, so a few revisions fit)
# Both are read from the environment at the first configure, or set with
# -DRPM_CCACHE_DIR=... / -DRPM_CCACHE_MAXSIZE=...; without ccache the build
# goes on as before and says so.
option(RPM_CCACHE "Compile through ccache when it is installed" ON)
get_filename_component(_rpm_ccache_root "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)

if(DEFINED ENV{RPM_CCACHE_DIR})
  set(_rpm_ccache_dir_default "$ENV{RPM_CCACHE_DIR}")
elseif(DEFINED ENV{XDG_CACHE_HOME})
  set(_rpm_ccache_dir_default "$ENV{XDG_CACHE_HOME}/rpm/ccache")
else()
  set(_rpm_ccache_dir_default "$ENV{HOME}/.cache/rpm/ccache")
endif()
set(_rpm_ccache_size_default 2G)
if(DEFINED ENV{RPM_CCACHE_MAXSIZE})
  set(_rpm_ccache_size_default "$ENV{RPM_CCACHE_MAXSIZE}")
endif()
set(RPM_CCACHE_DIR "${_rpm_ccache_dir_default}" CACHE PATH "Where ccache keeps rpm's compilations")
set(RPM_CCACHE_MAXSIZE "${_rpm_ccache_size_default}" CACHE STRING "The bound of rpm's ccache (ccache's max_size)")

# ccache would refuse a bad bound at every compilation; say it once, here.
if(NOT RPM_CCACHE_MAXSIZE MATCHES "^[0-9]+(\\.[0-9]+)?([kMGT]i?)?$")
  message(FATAL_ERROR "RPM_CCACHE_MAXSIZE '${RPM_CCACHE_MAXSIZE}' is not a size ccache takes (e.g. 2G, 500M, 1.5Gi)")
endif()
find_program(RPM_CCACHE_PROGRAM ccache)
find_program(RPM_ENV_PROGRAM env)
if(NOT RPM_CCACHE)
  message(STATUS "rpm: ccache off (RPM_CCACHE=OFF)")
elseif(NOT RPM_CCACHE_PROGRAM OR NOT RPM_ENV_PROGRAM)
  message(STATUS "rpm: compiling without ccache: not installed (tools/install-deps installs it)")
else()
  # The settings travel with each compilation (env VAR=... ccache compiler),
  # not through ~/.ccache or ccache.conf: the tree's own, whoever builds it.
  set(_rpm_launcher "${RPM_ENV_PROGRAM}" "CCACHE_DIR=${RPM_CCACHE_DIR}" "CCACHE_MAXSIZE=${RPM_CCACHE_MAXSIZE}"
      "CCACHE_BASEDIR=${_rpm_ccache_root}" CCACHE_NOHASHDIR=1 "${RPM_CCACHE_PROGRAM}")
  set(CMAKE_C_COMPILER_LAUNCHER ${_rpm_launcher})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${_rpm_launcher})
  add_compile_options("-ffile-prefix-map=${_rpm_ccache_root}=.")
  message(STATUS "rpm: compiling through ccache (${RPM_CCACHE_DIR}, at most ${RPM_CCACHE_MAXSIZE})")
endif()
