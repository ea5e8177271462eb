# bench.kv_peer.smoke (CMakeLists.txt): run tools/bench/kv-peer briefly and
# check that it exits 0 and prints its table. ctest's PASS_REGULAR_EXPRESSION
# would ignore the exit status, hence this wrapper.
# --kv-size: the default assumes at most 20,000 puts/s, which a quiet
# machine beat with 2 clients (40,903 puts/s of 64 B on 2026-11-29: the 4 KiB
# round then found the log full). 192M holds 0.6 s of 4 KiB puts at 70,000/s.
execute_process(
  COMMAND ${SCRIPT} --bin ${BIN} --duration 0.5 --rounds 1 --clients 2 --kv-size 192M --rb 1,2x4 --rb-requests 2000
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "kv-peer exited with ${rc}:\n${err}")
endif()
if(NOT out MATCHES "system +size +rounds +p50 us" OR NOT out MATCHES "\nredis +64 " OR NOT out MATCHES "\netcd +4096 "
   OR NOT out MATCHES "\nrpm-kvstore +4096 " OR NOT out MATCHES "4096 B vs redis: p50 "
   OR NOT out MATCHES "\nrpm-kvstore-ping +64 " OR NOT out MATCHES "64 B runs: PING p50 [0-9.]+ us = [0-9.]+x redis"
   OR NOT out MATCHES "\n2 -P 4 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+\n"
   OR NOT out MATCHES "floor of a replicated put: PING p50 [0-9.]+ ms"
   OR NOT out MATCHES "where a put's time goes"
   OR NOT out MATCHES "\n2 -P 4 +[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+\n"
   OR NOT out MATCHES "\n2 -P 4 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+\n")
  message(FATAL_ERROR "kv-peer printed no table:\n${err}")
endif()
