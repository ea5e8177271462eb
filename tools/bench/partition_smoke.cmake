# bench.partition.smoke (CMakeLists.txt): run tools/bench/partition briefly
# and check that it exits 0 (it fails when the replica never left or never
# came back) and that the catch-up copied something.
execute_process(
  COMMAND ${SCRIPT} --bin ${BIN} --size 64M --cut 2 --before 1 --rounds 1
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "partition exited with ${rc}:\n${err}")
endif()
if(NOT out MATCHES "round 1: [0-9]+ puts/s during the cut; missed [0-9.]+ MB, copied [0-9.]+ MB" OR out MATCHES "copied 0\\.0 MB")
  message(FATAL_ERROR "partition printed no round, or copied nothing:\n${out}\n${err}")
endif()
