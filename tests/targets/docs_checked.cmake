# SPDX-License-Identifier: Apache-2.0
# The blocks of docs/ "checked by ctest docs_checked" say the numbers
# PROGRAM (docs_checked.cpp) computes: PROGRAM prints them, and the document
# counter compares every block with them (tools/docs-numbers --verify).
#   cmake -DPROGRAM=<docs_checked> -DCOUNTER=<tools/docs-numbers> -DOUT=<file> -P docs_checked.cmake
execute_process(COMMAND ${PROGRAM} RESULT_VARIABLE code OUTPUT_VARIABLE out)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} failed (${code}):\n${out}")
endif()
file(WRITE ${OUT} "${out}")
execute_process(COMMAND ${COUNTER} --verify "ctest docs_checked" ${OUT} RESULT_VARIABLE code)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "docs/ disagrees with what ${PROGRAM} computes (above; its numbers: ${OUT})")
endif()
