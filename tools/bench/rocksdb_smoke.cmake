# bench.rocksdb.smoke and bench.rocksdb.rpm.smoke (CMakeLists.txt): run
# tools/bench/rocksdb for 1 s per benchmark, one thread, 100 B values, and
# check with rocksdb_report.py check that its JSON has every row with
# positive figures (and, for CONFIGS with rpm-tcp, the ratios to disk and
# tmpfs and the floor rows). ctest's PASS_REGULAR_EXPRESSION would ignore
# the exit status, hence this wrapper. It asserts no performance figure.
# With rpm-tcp and no BUILD/lib/librpm_rocksdb.so (the plug-in is optional:
# RPM_ROCKSDB, librocksdb-dev) it says it skipped, the test's
# SKIP_REGULAR_EXPRESSION, instead of failing.
# -DSCRIPT=tools/bench/rocksdb -DREPORT=rocksdb_report.py -DBUILD=<build tree>
# -DOUT=<json file> -DCONFIGS=disk,tmpfs[,rpm-tcp]
if(CONFIGS MATCHES "rpm-tcp" AND NOT EXISTS "${BUILD}/lib/librpm_rocksdb.so")
  message("bench.rocksdb.rpm.smoke skipped: no ${BUILD}/lib/librpm_rocksdb.so (the RocksDB plug-in is not built)")
  return()
endif()
set(floor)
if(CONFIGS MATCHES "rpm-tcp")
  set(floor --floor)
endif()
file(REMOVE "${OUT}")
execute_process(
  COMMAND ${SCRIPT} --build ${BUILD} --duration 1 --only ${CONFIGS} --threads 1 --values 100 --json ${OUT}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tools/bench/rocksdb exited with ${rc}:\n${err}")
endif()
if(NOT out MATCHES "\\| fillrandom \\| 1 \\| 100 \\| [0-9]" OR NOT out MATCHES "\\| overwrite \\| 1 \\| 100 \\| [0-9]")
  message(FATAL_ERROR "tools/bench/rocksdb printed no table:\n${err}")
endif()
execute_process(
  COMMAND python3 ${REPORT} check ${OUT} --configs ${CONFIGS} --threads 1 --values 100 ${floor}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE check_err)
message("${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "its JSON lacks rows or figures:\n${check_err}\nthe run's progress:\n${err}")
endif()
