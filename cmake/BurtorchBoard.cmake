# SPDX-License-Identifier: Apache-2.0
# Board support for bare-metal builds (included by the top-level
# CMakeLists.txt before port/). With BURTORCH_BOARD set to a folder of
# targets/boards/ (mps2-an386, mps2-an500, mps2-an505, mps3-an547, microbit) it
#   - builds the startup code (targets/boards/cortex-m) as the object library
#     burtorch_board,
#   - defines burtorch_target_program(<target>) (cmake/BurtorchProgram.cmake),
#     which tests/ and users call to turn an executable into a firmware for
#     the board: startup code, the board's linker script (which enforces the
#     RAM and flash budgets), a link map next to the ELF, the QEMU runner,
#   - points CMAKE_CROSSCOMPILING_EMULATOR at tools/qemu-run for the board's
#     QEMU machine, so CTest runs every test program in the emulator.
# Without BURTORCH_BOARD (host, Linux cross builds) it only adds the
# floating-point switches of cmake/BurtorchFloatingPoint.cmake.
include(${CMAKE_CURRENT_LIST_DIR}/BurtorchFloatingPoint.cmake)

set(BURTORCH_BOARD "" CACHE STRING "Cortex-M board from targets/boards/ (empty: host or Linux)")
set(BURTORCH_RAM_BUDGET "" CACHE STRING "RAM budget in bytes enforced at link time (empty: the board's default)")
set(BURTORCH_FLASH_BUDGET "" CACHE STRING "Flash budget in bytes enforced at link time (empty: the board's default)")
set(BURTORCH_STACK_SIZE "" CACHE STRING "Thread (main) stack in bytes (empty: the board's default)")
set(BURTORCH_QEMU_TIMEOUT "300" CACHE STRING "Seconds a firmware may run under QEMU before it counts as hung")

if(NOT BURTORCH_BOARD)
  return()
endif()

set(BURTORCH_BOARD_DIR ${PROJECT_SOURCE_DIR}/targets/boards/${BURTORCH_BOARD})
if(NOT EXISTS ${BURTORCH_BOARD_DIR}/board.cmake)
  message(FATAL_ERROR "BURTORCH_BOARD '${BURTORCH_BOARD}': no ${BURTORCH_BOARD_DIR}/board.cmake")
endif()
# Sets BURTORCH_BOARD_CPU, BURTORCH_BOARD_QEMU_MACHINE, BURTORCH_BOARD_CORE_HZ
# and BURTORCH_BOARD_SMALL.
include(${BURTORCH_BOARD_DIR}/board.cmake)
if(NOT BURTORCH_CPU STREQUAL BURTORCH_BOARD_CPU)
  message(FATAL_ERROR "board ${BURTORCH_BOARD} has a ${BURTORCH_BOARD_CPU}; use toolchains/${BURTORCH_BOARD_CPU}.cmake "
                      "(this build's toolchain is for '${BURTORCH_CPU}')")
endif()
if(NOT BURTORCH_PORT STREQUAL "cortex-m")
  message(FATAL_ERROR "a board build needs BURTORCH_PORT=cortex-m (it is '${BURTORCH_PORT}')")
endif()

# Tiny boards (16 KB RAM): tests/ compiles reduced tables and cases
# (BURTORCH_TEST_SMALL_TARGET=1 in the test sources).
if(BURTORCH_BOARD_SMALL)
  set(BURTORCH_TEST_SMALL_TARGET ON CACHE BOOL "Tests use reduced data sets (tiny MCUs)")
endif()

enable_language(ASM)

set(_burtorch_link_symbols "")
foreach(pair IN ITEMS "RAM_BUDGET;ram_budget" "FLASH_BUDGET;flash_budget" "STACK_SIZE;stack_size")
  list(GET pair 0 option)
  list(GET pair 1 symbol)
  if(NOT "${BURTORCH_${option}}" STREQUAL "")
    list(APPEND _burtorch_link_symbols "-Wl,--defsym=__burtorch_${symbol}=${BURTORCH_${option}}")
  endif()
endforeach()

# burtorch_target_program() reads these global properties, so it also works
# in a project that added this tree with add_subdirectory (whose directory
# scope does not see the variables set here).
set_property(GLOBAL PROPERTY BURTORCH_BOARD_TARGET burtorch::board)
set_property(GLOBAL PROPERTY BURTORCH_BOARD_LINKER_SCRIPT ${BURTORCH_BOARD_DIR}/board.ld)
set_property(GLOBAL PROPERTY BURTORCH_BOARD_LINK_DIR ${PROJECT_SOURCE_DIR}/targets/boards/cortex-m)
set_property(GLOBAL PROPERTY BURTORCH_BOARD_LINK_OPTIONS ${_burtorch_link_symbols})
set_property(GLOBAL PROPERTY BURTORCH_BOARD_EMULATOR ${PROJECT_SOURCE_DIR}/tools/qemu-run
             --machine ${BURTORCH_BOARD_QEMU_MACHINE} --timeout ${BURTORCH_QEMU_TIMEOUT} --)
include(${CMAKE_CURRENT_LIST_DIR}/BurtorchProgram.cmake)

set(CMAKE_CROSSCOMPILING_EMULATOR ${PROJECT_SOURCE_DIR}/tools/qemu-run --machine ${BURTORCH_BOARD_QEMU_MACHINE}
    --timeout ${BURTORCH_QEMU_TIMEOUT} --)

# Startup code.
add_subdirectory(${PROJECT_SOURCE_DIR}/targets/boards/cortex-m ${PROJECT_BINARY_DIR}/targets/boards/cortex-m)
