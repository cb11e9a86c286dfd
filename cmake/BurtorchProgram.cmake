# SPDX-License-Identifier: Apache-2.0
# burtorch_target_program(): turns an executable into a firmware for the board
# a Cortex-M build of libburtorch was made for. Used in this source tree
# (cmake/BurtorchBoard.cmake), by a project that adds the tree with
# add_subdirectory or FetchContent, and from the installed CMake package
# (find_package(burtorch) of a Cortex-M install). Everything it needs is kept
# in global properties, so it works from any directory scope:
#   BURTORCH_BOARD_TARGET        the startup code (object library)
#   BURTORCH_BOARD_LINKER_SCRIPT the board's linker script (budgets)
#   BURTORCH_BOARD_LINK_DIR      folder of sections.ld (INCLUDEd by the scripts)
#   BURTORCH_BOARD_EMULATOR      command that runs a firmware under QEMU
#   BURTORCH_BOARD_LINK_OPTIONS  extra link options (the build's budgets)
#
#   burtorch_target_program(<target> [LINKER_SCRIPT <file>] [RAM_BUDGET <bytes>]
#                           [FLASH_BUDGET <bytes>] [STACK_SIZE <bytes>])
#
# links the startup code and vector table, the board's linker script (or
# LINKER_SCRIPT, a script of your own that defines the FLASH and RAM regions
# and the __burtorch_* sizes and INCLUDEs sections.ld, like the boards'
# board.ld), writes a link map next to the ELF, and sets the target's
# CROSSCOMPILING_EMULATOR so add_test(NAME x COMMAND <target>) runs the
# firmware under QEMU. RAM_BUDGET, FLASH_BUDGET and STACK_SIZE lower the
# board's budgets; a firmware that does not fit fails to link with
# "region RAM overflowed" (or FLASH).
include_guard(GLOBAL)

function(burtorch_target_program target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "LINKER_SCRIPT;RAM_BUDGET;FLASH_BUDGET;STACK_SIZE" "")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "burtorch_target_program(${target}): unknown arguments ${arg_UNPARSED_ARGUMENTS}")
  endif()
  get_property(board GLOBAL PROPERTY BURTORCH_BOARD_TARGET)
  get_property(script GLOBAL PROPERTY BURTORCH_BOARD_LINKER_SCRIPT)
  get_property(link_dir GLOBAL PROPERTY BURTORCH_BOARD_LINK_DIR)
  get_property(emulator GLOBAL PROPERTY BURTORCH_BOARD_EMULATOR)
  get_property(options GLOBAL PROPERTY BURTORCH_BOARD_LINK_OPTIONS)
  if(NOT board OR NOT script OR NOT link_dir)
    message(FATAL_ERROR "burtorch_target_program(${target}): this libburtorch build has no board support "
                        "(configure it with a Cortex-M toolchain and BURTORCH_BOARD)")
  endif()
  if(arg_LINKER_SCRIPT)
    get_filename_component(script "${arg_LINKER_SCRIPT}" ABSOLUTE)
  endif()
  foreach(pair IN ITEMS "RAM_BUDGET;ram_budget" "FLASH_BUDGET;flash_budget" "STACK_SIZE;stack_size")
    list(GET pair 0 option)
    list(GET pair 1 symbol)
    if(NOT "${arg_${option}}" STREQUAL "")
      list(APPEND options "-Wl,--defsym=__burtorch_${symbol}=${arg_${option}}")
    endif()
  endforeach()
  target_link_libraries(${target} PRIVATE ${board})
  target_link_options(${target} PRIVATE "-T${script}" "-L${link_dir}" ${options}
                      "-Wl,-Map=$<TARGET_FILE:${target}>.map")
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS "${script}" "${link_dir}/sections.ld")
  if(emulator)
    set_property(TARGET ${target} PROPERTY CROSSCOMPILING_EMULATOR ${emulator})
  endif()
endfunction()
