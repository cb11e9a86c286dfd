# SPDX-License-Identifier: Apache-2.0
# ctest -P script: --save/--resume continue the identical loss curve.
#   cmake -DPROGRAM=<trainer> -DWORK=<dir> "-DARGS=<flags>" -P resume_check.cmake
# Runs the trainer for 40 steps in one go, then 20 steps with --save and 20
# more with --resume, and requires the same "step <n> loss <x>" lines for
# steps 30 and 40 (bit-identical text: %.10g of the same doubles).
file(MAKE_DIRECTORY ${WORK})
separate_arguments(flags UNIX_COMMAND "${ARGS}")
set(common ${flags} --print-every 10 --samples 0 --csv none --eval-samples 10)
execute_process(COMMAND ${PROGRAM} ${common} --steps 40 OUTPUT_VARIABLE full RESULT_VARIABLE r1)
execute_process(COMMAND ${PROGRAM} ${common} --steps 20 --save ${WORK}/resume.ckpt OUTPUT_VARIABLE first RESULT_VARIABLE r2)
execute_process(COMMAND ${PROGRAM} ${common} --steps 40 --resume ${WORK}/resume.ckpt OUTPUT_VARIABLE second
                RESULT_VARIABLE r3)
if(NOT r1 EQUAL 0 OR NOT r2 EQUAL 0 OR NOT r3 EQUAL 0)
  message(FATAL_ERROR "a run failed (${r1} ${r2} ${r3})")
endif()
foreach(step 30 40)
  string(REGEX MATCH "step ${step} loss [^\n]*" want "${full}")
  string(REGEX MATCH "step ${step} loss [^\n]*" got "${second}")
  if(want STREQUAL "" OR NOT want STREQUAL got)
    message(FATAL_ERROR "resumed curve differs at step ${step}: '${want}' vs '${got}'")
  endif()
  message(STATUS "${got} (same as the uninterrupted run)")
endforeach()
string(REGEX MATCH "step 20 loss [^\n]*" a "${full}")
string(REGEX MATCH "step 20 loss [^\n]*" b "${first}")
if(NOT a STREQUAL b)
  message(FATAL_ERROR "first half differs: '${a}' vs '${b}'")
endif()
# A damaged checkpoint is refused with a one-line error and a non-zero exit.
file(WRITE ${WORK}/bad.ckpt "not a checkpoint")
execute_process(COMMAND ${PROGRAM} ${common} --steps 40 --resume ${WORK}/bad.ckpt RESULT_VARIABLE r4
                ERROR_VARIABLE err OUTPUT_QUIET)
if(r4 EQUAL 0)
  message(FATAL_ERROR "a damaged checkpoint was accepted")
endif()
message(STATUS "damaged checkpoint refused: ${err}")
