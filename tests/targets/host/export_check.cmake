# SPDX-License-Identifier: Apache-2.0
# The committed firmware header is what burtorch-cnn exports from the flags
# written in it: regenerate it into WORK and require the same bytes.
#   cmake -DPROGRAM=<burtorch-cnn> -DHEADER=<committed header> -DWORK=<dir> -P export_check.cmake
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
file(STRINGS "${HEADER}" trained REGEX "^// Trained with: burtorch-cnn ")
if(NOT trained)
  message(FATAL_ERROR "${HEADER} has no '// Trained with: burtorch-cnn ...' line")
endif()
string(REGEX REPLACE "^// Trained with: burtorch-cnn " "" flag_text "${trained}")
separate_arguments(flags UNIX_COMMAND "${flag_text}")
execute_process(COMMAND "${PROGRAM}" ${flags} --csv none --samples 0 --export-header "${WORK}/finetune_model.hpp"
                WORKING_DIRECTORY "${WORK}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "burtorch-cnn failed (${rc}):\n${out}\n${err}")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" -E compare_files "${HEADER}" "${WORK}/finetune_model.hpp" RESULT_VARIABLE same)
if(NOT same EQUAL 0)
  execute_process(COMMAND diff -u "${HEADER}" "${WORK}/finetune_model.hpp" OUTPUT_VARIABLE diff)
  string(SUBSTRING "${diff}" 0 4000 diff)
  message(FATAL_ERROR "${HEADER} is not what burtorch-cnn exports now:\n${diff}\n"
                      "If the change is intended, regenerate it (and run the firmware again):\n"
                      "  ${PROGRAM} ${flag_text} --csv none --samples 0 --export-header ${HEADER}")
endif()
message(STATUS "${HEADER}: byte-identical to a fresh export")
