# SPDX-License-Identifier: Apache-2.0
# The library for builds without CMake (Make, IDE projects): installs the
# sources of the archives this build made under share/burtorch/src/ and a
# Make fragment, share/burtorch/burtorch.mk, that lists them with the include
# directories and the flags they must be compiled with to be the archives
# of this install (its toolchain's flags, the build type's, the core's, and
# each file's own), and rules that build them. Included by
# cmake/BurtorchInstall.cmake; docs/getting-started-mcu.md shows a Makefile
# that uses it and tools/check.d/44-make-firmware.sh builds one.
#
# Everything is read from the targets (their SOURCES, SOURCE_DIR,
# COMPILE_DEFINITIONS, the sources' COMPILE_OPTIONS), so the fragment lists
# what the CMake build compiles.

set(_burtorch_mk_share "${CMAKE_INSTALL_DATADIR}/burtorch")

# _burtorch_mk_collect(<target> <out list var>): installs the target's
# sources (and the headers beside them) under share/burtorch/src/<path in
# the tree> and appends their Make paths to <out>; each file's own flags go
# into _burtorch_mk_file_flags as Make assignments.
function(_burtorch_mk_collect target out)
  get_target_property(sources ${target} SOURCES)
  get_target_property(dir ${target} SOURCE_DIR)
  get_target_property(defines ${target} COMPILE_DEFINITIONS)
  # The target's own options (the archive's -fno-tree-loop-distribute-patterns
  # on bare metal), generator expressions left out.
  get_target_property(target_options ${target} COMPILE_OPTIONS)
  set(list "${${out}}")
  set(flags "${_burtorch_mk_file_flags}")
  foreach(source IN LISTS sources)
    get_filename_component(path "${source}" ABSOLUTE BASE_DIR "${dir}")
    file(RELATIVE_PATH rel "${PROJECT_SOURCE_DIR}" "${path}")
    get_filename_component(rel_dir "${rel}" DIRECTORY)
    install(FILES "${path}" DESTINATION "${_burtorch_mk_share}/src/${rel_dir}")
    list(APPEND list "$(BURTORCH_SRC)/${rel}")
    set(own "")
    if(defines)
      foreach(d IN LISTS defines)
        string(APPEND own " -D${d}")
      endforeach()
    endif()
    if(target_options)
      foreach(o IN LISTS target_options)
        if(NOT o MATCHES "\\$<")
          string(APPEND own " ${o}")
        endif()
      endforeach()
    endif()
    get_source_file_property(options "${path}" TARGET_DIRECTORY ${target} COMPILE_OPTIONS)
    if(options)
      foreach(o IN LISTS options)
        string(APPEND own " ${o}")
      endforeach()
    endif()
    if(NOT own STREQUAL "")
      string(APPEND flags "BURTORCH_FLAGS_${rel} :=${own}\n")
    endif()
  endforeach()
  set(${out} "${list}" PARENT_SCOPE)
  set(_burtorch_mk_file_flags "${flags}" PARENT_SCOPE)
endfunction()

set(_burtorch_mk_file_flags "")
set(BURTORCH_MK_SOURCES "")
_burtorch_mk_collect(burtorch BURTORCH_MK_SOURCES)
# The library's private headers (lib/simd/*.hpp).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/lib/ DESTINATION "${_burtorch_mk_share}/src/lib" FILES_MATCHING PATTERN "*.hpp")

# The port programs link: the implementation libraries behind burtorch::port.
set(BURTORCH_MK_PORT_SOURCES "")
if(BURTORCH_PORT STREQUAL "cortex-m")
  set(_burtorch_mk_port_targets burtorch_port_cortex_m_core burtorch_port_semihosting)
elseif(BURTORCH_PORT STREQUAL "posix")
  set(_burtorch_mk_port_targets burtorch_port_posix)
  install(FILES ${PROJECT_SOURCE_DIR}/port/posix/plot_font.hpp DESTINATION "${_burtorch_mk_share}/src/port/posix")
elseif(BURTORCH_PORT STREQUAL "null")
  set(_burtorch_mk_port_targets burtorch_port_null)
else()
  set(_burtorch_mk_port_targets "")  # a port of the project's own: its sources are its own
endif()
foreach(t IN LISTS _burtorch_mk_port_targets)
  _burtorch_mk_collect(${t} BURTORCH_MK_PORT_SOURCES)
endforeach()

set(BURTORCH_MK_BOARD_SOURCES "")
set(BURTORCH_MK_LINK "")
if(TARGET burtorch_board)
  _burtorch_mk_collect(burtorch_board BURTORCH_MK_BOARD_SOURCES)
  set(BURTORCH_MK_LINK "-T$(BURTORCH_PREFIX)/${_burtorch_mk_share}/board/board.ld -L$(BURTORCH_PREFIX)/${_burtorch_mk_share}/board")
  foreach(pair IN ITEMS "RAM_BUDGET;ram_budget" "FLASH_BUDGET;flash_budget" "STACK_SIZE;stack_size")
    list(GET pair 0 option)
    list(GET pair 1 symbol)
    if(NOT "${BURTORCH_${option}}" STREQUAL "")
      string(APPEND BURTORCH_MK_LINK " -Wl,--defsym=__burtorch_${symbol}=${BURTORCH_${option}}")
    endif()
  endforeach()
endif()

# Flags: the toolchain's (CPU, float ABI, sections, no exceptions), the
# build type's, the core's (burtorch_core_flags: also on the port
# libraries), C++17. Warnings are left out: they change no code.
string(TOUPPER "${CMAKE_BUILD_TYPE}" _burtorch_mk_type)
set(BURTORCH_MK_BUILD_TYPE "${CMAKE_BUILD_TYPE}")
set(BURTORCH_MK_CXXFLAGS "${CMAKE_CXX_FLAGS} ${CMAKE_CXX_FLAGS_${_burtorch_mk_type}}")
get_target_property(_burtorch_mk_core burtorch_core_flags INTERFACE_COMPILE_OPTIONS)
list(JOIN _burtorch_mk_core " " _burtorch_mk_core)
# $<$<COMPILE_LANGUAGE:CXX>:...>: these are C++ flags.
string(REGEX REPLACE "\\$<\\$<COMPILE_LANGUAGE:CXX>:([^>]*)>" "\\1" _burtorch_mk_core "${_burtorch_mk_core}")
string(APPEND BURTORCH_MK_CXXFLAGS " ${_burtorch_mk_core} -std=c++17")
# One of each (the toolchain's and the core's overlap): the same code.
separate_arguments(_burtorch_mk_flags UNIX_COMMAND "${BURTORCH_MK_CXXFLAGS}")
list(REMOVE_DUPLICATES _burtorch_mk_flags)
list(JOIN _burtorch_mk_flags " " BURTORCH_MK_CXXFLAGS)
set(BURTORCH_MK_ASFLAGS "${CMAKE_ASM_FLAGS} ${CMAKE_ASM_FLAGS_${_burtorch_mk_type}}")
string(STRIP "${BURTORCH_MK_ASFLAGS}" BURTORCH_MK_ASFLAGS)
separate_arguments(_burtorch_mk_flags UNIX_COMMAND "${CMAKE_CXX_FLAGS} ${CMAKE_EXE_LINKER_FLAGS}")
list(REMOVE_DUPLICATES _burtorch_mk_flags)
list(JOIN _burtorch_mk_flags " " BURTORCH_MK_LDFLAGS)

get_filename_component(BURTORCH_MK_CXX "${CMAKE_CXX_COMPILER}" NAME)
get_filename_component(BURTORCH_MK_CC "${CMAKE_C_COMPILER}" NAME)
get_filename_component(BURTORCH_MK_AR "${CMAKE_AR}" NAME)
if(CMAKE_ASM_COMPILER)
  get_filename_component(BURTORCH_MK_AS "${CMAKE_ASM_COMPILER}" NAME)
else()
  set(BURTORCH_MK_AS "${BURTORCH_MK_CC}")
endif()
set(BURTORCH_MK_QEMU "")
if(TARGET burtorch_board)
  set(BURTORCH_MK_QEMU "$(BURTORCH_PREFIX)/${_burtorch_mk_share}/tools/qemu-run --machine ${BURTORCH_BOARD_QEMU_MACHINE} --timeout ${BURTORCH_QEMU_TIMEOUT} --")
endif()

# The prebuilt archives, in the order a program links them: the port, then
# the core it calls.
set(BURTORCH_MK_ARCHIVES "")
foreach(t IN LISTS _burtorch_mk_port_targets ITEMS burtorch)
  get_target_property(name ${t} OUTPUT_NAME)
  if(NOT name)
    set(name ${t})
  endif()
  string(APPEND BURTORCH_MK_ARCHIVES " $(BURTORCH_PREFIX)/${CMAKE_INSTALL_LIBDIR}/lib${name}.a")
endforeach()
string(STRIP "${BURTORCH_MK_ARCHIVES}" BURTORCH_MK_ARCHIVES)
set(BURTORCH_MK_LIBDIR "${CMAKE_INSTALL_LIBDIR}")

foreach(v SOURCES PORT_SOURCES BOARD_SOURCES)
  list(JOIN BURTORCH_MK_${v} " \\\n  " BURTORCH_MK_${v})
endforeach()
set(BURTORCH_MK_FILE_FLAGS "${_burtorch_mk_file_flags}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/burtorch.mk.in ${PROJECT_BINARY_DIR}/burtorch.mk @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/burtorch.mk DESTINATION "${_burtorch_mk_share}")
