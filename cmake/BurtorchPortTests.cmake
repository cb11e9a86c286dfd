# SPDX-License-Identifier: Apache-2.0
# Port-layer and cross-target tests beyond the ordinary suites (included by
# tests/CMakeLists.txt, after the suites):
#   port_death_*      programs that must stop with a report and exit code:
#                     the fail-fast hook everywhere; on Cortex-M boards also
#                     an undefined instruction and a thread-stack overflow
#                     (startup code's fault report, exit code 71).
#   fp32_agreement    FP32 results against an FP64 oracle, plus their bit
#                     patterns for the cross-target comparison
#                     (tools/check.d/29-fp32-agreement.sh); built twice:
#                     default contraction, and -ffp-contract=off.
set(_burtorch_death_cases "fail_fast|1|70|burtorch: fail-fast on error: capacity exceeded")
if(BURTORCH_BOARD)
  list(APPEND _burtorch_death_cases
       "undefined_instruction|2|71|unexpected exception (HardFault|UsageFault) \\(0x0000000[36]\\) pc=0x"
       "stack_overflow|3|71|unexpected exception [A-Za-z]+ \\(0x0000000[3-6]\\): thread stack overflow")
endif()
foreach(case IN LISTS _burtorch_death_cases)
  string(REPLACE "|" ";" fields "${case}")
  list(GET fields 0 name)
  list(GET fields 1 mode)
  list(GET fields 2 code)
  list(SUBLIST fields 3 -1 pattern_parts)
  string(REPLACE ";" "|" pattern "${pattern_parts}")
  add_executable(port_death_${name} ${CMAKE_CURRENT_LIST_DIR}/../tests/targets/port_death.cpp)
  target_compile_definitions(port_death_${name} PRIVATE BT_DEATH_MODE=${mode})
  target_link_libraries(port_death_${name} PRIVATE burtorch burtorch::port burtorch_warnings burtorch_core_flags)
  if(COMMAND burtorch_target_program)
    burtorch_target_program(port_death_${name})
  endif()
  set(_program ${CMAKE_CROSSCOMPILING_EMULATOR} $<TARGET_FILE:port_death_${name}>)
  add_test(NAME port_death_${name}
           COMMAND ${CMAKE_COMMAND} "-DPROGRAM=${_program}" -DEXPECT_CODE=${code} "-DEXPECT_OUTPUT=${pattern}"
                   -P ${CMAKE_CURRENT_LIST_DIR}/BurtorchExpectExit.cmake)
  set_tests_properties(port_death_${name} PROPERTIES LABELS "port" TIMEOUT 300)
endforeach()

# Off by default: a suite that must fail (tools/check.d/28-failures-reach-ctest.sh
# turns it on in a scratch build to prove failures reach CTest).
option(BURTORCH_TEST_DELIBERATE_FAILURE "Add tests that must fail (checks the test plumbing)" OFF)
if(BURTORCH_TEST_DELIBERATE_FAILURE)
  foreach(pair IN ITEMS "failure;1" "hang;2")
    list(GET pair 0 name)
    list(GET pair 1 mode)
    add_executable(deliberate_${name} ${CMAKE_CURRENT_LIST_DIR}/../tests/targets/deliberate_failure.cpp)
    target_compile_definitions(deliberate_${name} PRIVATE BT_RED_MODE=${mode})
    target_link_libraries(deliberate_${name} PRIVATE burtorch_test_harness burtorch_warnings burtorch_core_flags)
    if(COMMAND burtorch_target_program)
      burtorch_target_program(deliberate_${name})
    endif()
    add_test(NAME deliberate_${name} COMMAND deliberate_${name})
    set_tests_properties(deliberate_${name} PROPERTIES LABELS "deliberate" TIMEOUT 60)
  endforeach()
endif()

# Worked example of a user console backend (docs/porting.md): the API suite
# with its output on the board's UART instead of semihosting.
if(BURTORCH_BOARD AND EXISTS ${BURTORCH_BOARD_DIR}/uart_console.cpp)
  add_executable(test_api_uart ${CMAKE_CURRENT_LIST_DIR}/../tests/core/test_api.cpp ${BURTORCH_BOARD_DIR}/uart_console.cpp)
  target_link_libraries(test_api_uart PRIVATE burtorch_test_harness burtorch_warnings burtorch_core_flags)
  burtorch_target_program(test_api_uart)
  add_test(NAME api_uart
           COMMAND ${CMAKE_COMMAND}
                   "-DPROGRAM=${PROJECT_SOURCE_DIR}/tools/qemu-run;--serial;--machine;${BURTORCH_BOARD_QEMU_MACHINE};--;$<TARGET_FILE:test_api_uart>"
                   -DEXPECT_CODE=0 "-DEXPECT_OUTPUT=[0-9]+ passed, 0 failed.*exit 0"
                   -P ${CMAKE_CURRENT_LIST_DIR}/BurtorchExpectExit.cmake)
  set_tests_properties(api_uart PROPERTIES LABELS "port" TIMEOUT 300)
endif()
