# SPDX-License-Identifier: Apache-2.0
# Runs a program that must stop with a given exit code and print a given
# report (used by the port's death tests, cmake/BurtorchPortTests.cmake).
#   cmake -DPROGRAM=<emulator;...;program> -DEXPECT_CODE=<n> -DEXPECT_OUTPUT=<regex>
#         -P BurtorchExpectExit.cmake
# Passes (exit 0) only if both the exit code and the output match.
execute_process(COMMAND ${PROGRAM} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 240)
message("${out}${err}")
if(NOT "${code}" STREQUAL "${EXPECT_CODE}")
  message(FATAL_ERROR "expected exit code ${EXPECT_CODE}, got '${code}'")
endif()
if(NOT "${out}" MATCHES "${EXPECT_OUTPUT}")
  message(FATAL_ERROR "expected output matching '${EXPECT_OUTPUT}'")
endif()
message("exit code ${code} and report as expected")
