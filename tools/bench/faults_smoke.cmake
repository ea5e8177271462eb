# bench.faults.smoke (CMakeLists.txt): tools/bench/faults briefly, both
# scenarios. The script itself fails when r2 did not rejoin, when no put was
# acknowledged after r2's heal, when r1 did not rejoin once healed, when the
# cut did not stop acknowledgements, or when the black hole let a connect
# fail instead of hanging; here the output must hold the round and the
# loss table with latencies for every case. It asserts no figure.
# Without root, ip or nft it says it skipped (the test's
# SKIP_REGULAR_EXPRESSION), instead of failing.
execute_process(COMMAND id -u OUTPUT_VARIABLE uid OUTPUT_STRIP_TRAILING_WHITESPACE)
find_program(IP_PROGRAM ip PATHS /usr/sbin /sbin)
find_program(NFT_PROGRAM nft PATHS /usr/sbin /sbin)
if(NOT uid STREQUAL "0" OR NOT IP_PROGRAM OR NOT NFT_PROGRAM)
  message("bench.faults.smoke skipped: it needs root, ip and nft (uid '${uid}', ip '${IP_PROGRAM}', nft '${NFT_PROGRAM}')")
  return()
endif()

function(run_faults out_var)
  execute_process(COMMAND ${SCRIPT} --bin ${BIN} --rounds 1 --size 64M ${ARGN}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("${out}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "faults ${ARGN} exited with ${rc}:\n${err}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

run_faults(out --scenario rejoin --cut 2)
if(NOT out MATCHES "round 1: r2 live [0-9.]+ s after its heal \\(r1 black-holed\\); no put acknowledged for [0-9.]+ s after it \\([0-9.]+ s from the cut\\); r1 live [0-9.]+ s after its own heal")
  message(FATAL_ERROR "faults --scenario rejoin printed no round:\n${out}")
endif()

run_faults(out --scenario loss --seconds 2 --loss 30)
set(num "[0-9][0-9,]*")
foreach(row "none" "30% one way \\(to r2\\)" "30% both ways")
  if(NOT out MATCHES "\n\\| ${row} \\| ${num} \\| ${num} \\| ${num} \\| ${num} \\| ")
    message(FATAL_ERROR "faults --scenario loss: no row with latencies for '${row}':\n${out}")
  endif()
endforeach()
