# SPDX-License-Identifier: Apache-2.0
# ctest -P script: burtorch-gpt's lane batches with gradient checkpointing
# (--checkpoint on, the default) train bit for bit as with every block's
# graph recorded (--checkpoint off), and print which one they use.
#   cmake -DPROGRAM=<burtorch-gpt> "-DARGS=<flags>" -P sweep_check.cmake
separate_arguments(flags UNIX_COMMAND "${ARGS}")
set(common ${flags} --print-every 10 --samples 0 --csv none --eval-samples 20 --steps 30)
execute_process(COMMAND ${PROGRAM} ${common} --checkpoint on OUTPUT_VARIABLE on RESULT_VARIABLE r1)
execute_process(COMMAND ${PROGRAM} ${common} --checkpoint off OUTPUT_VARIABLE off RESULT_VARIABLE r2)
if(NOT r1 EQUAL 0 OR NOT r2 EQUAL 0)
  message(FATAL_ERROR "a run failed (${r1} ${r2})")
endif()
if(NOT on MATCHES "checkpoint on" OR NOT off MATCHES "checkpoint off")
  message(FATAL_ERROR "the runs do not say whether they checkpoint:\n${on}\n${off}")
endif()
foreach(line "step 10 loss" "step 20 loss" "step 30 loss" "val loss")
  string(REGEX MATCH "${line} [^\n]*" a "${on}")
  string(REGEX MATCH "${line} [^\n]*" b "${off}")
  if(a STREQUAL "" OR NOT a STREQUAL b)
    message(FATAL_ERROR "checkpointed and whole-graph runs differ: '${a}' vs '${b}'")
  endif()
  message(STATUS "${a} (both)")
endforeach()
# The lane tape: smaller with checkpointing.
string(REGEX MATCH "lane tape [0-9]+ nodes" a "${on}")
string(REGEX MATCH "lane tape [0-9]+ nodes" b "${off}")
string(REGEX MATCH "[0-9]+" na "${a}")
string(REGEX MATCH "[0-9]+" nb "${b}")
if(na STREQUAL "" OR nb STREQUAL "" OR NOT na LESS nb)
  message(FATAL_ERROR "lane tape not smaller with checkpointing: '${a}' vs '${b}'")
endif()
message(STATUS "${a} checkpointed, ${b} whole")
