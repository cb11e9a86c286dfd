# SPDX-License-Identifier: Apache-2.0
# burtorch_compile_step(): compiled training steps (burtorch/compile/emit.hpp,
# docs/compiled-step.md) generated at build time from the model's own code.
#
#   burtorch_compile_step(<target>
#     GENERATOR <source.cpp>...   a host program: records the model and calls
#                                 burtorch_compile::write_step() for each step
#                                 (tools/compile-step/compile_step_main.hpp)
#     STEPS <name>...             the steps it writes (<name>.hpp, <name>.cpp)
#     [INCLUDES <dir>...])        include directories of the generator
#
# The generator runs on the build machine: in a native build it is built with
# the project's compiler; in a cross build (a board, an embedded Linux) it
# is built for the host with the host's compilers (BURTORCH_HOST_C_COMPILER,
# BURTORCH_HOST_CXX_COMPILER: cc and c++ unless set) against this source
# tree's library, by one ExternalProject per build tree
# (burtorch_step_generators, cmake/compile-step-host) that builds the host
# library once and every generator of the tree. Its output directory,
# <binary dir>/<target>_steps, is added to the target's include path and
# the generated sources to the target.
include(ExternalProject)

set(_burtorch_compile_step_dir "${CMAKE_CURRENT_LIST_DIR}")
set(BURTORCH_HOST_C_COMPILER "cc" CACHE STRING "C compiler of host tools in a cross build")
set(BURTORCH_HOST_CXX_COMPILER "c++" CACHE STRING "C++ compiler of host tools in a cross build")

# Writes the list of the tree's generators for the host project (at the end
# of configuring; the file changes only if the list did).
function(_burtorch_write_step_generators)
  get_property(lines GLOBAL PROPERTY BURTORCH_STEP_GENERATORS)
  set(list_file "${CMAKE_BINARY_DIR}/burtorch-step-generators/generators.txt")
  file(WRITE "${list_file}.new" "${lines}")
  configure_file("${list_file}.new" "${list_file}" COPYONLY)
endfunction()

function(burtorch_compile_step target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "GENERATOR;STEPS;INCLUDES")
  if(NOT arg_GENERATOR OR NOT arg_STEPS)
    message(FATAL_ERROR "burtorch_compile_step(${target}): GENERATOR and STEPS are required")
  endif()
  set(root "${_burtorch_compile_step_dir}/..")
  get_filename_component(root "${root}" ABSOLUTE)
  set(out "${CMAKE_CURRENT_BINARY_DIR}/${target}_steps")
  set(sources "")
  foreach(source IN LISTS arg_GENERATOR)
    get_filename_component(source "${source}" ABSOLUTE)
    list(APPEND sources "${source}")
  endforeach()
  set(includes "${root}/tools/compile-step")
  foreach(dir IN LISTS arg_INCLUDES)
    get_filename_component(dir "${dir}" ABSOLUTE)
    list(APPEND includes "${dir}")
  endforeach()
  if(NOT CMAKE_CROSSCOMPILING)
    set(generator_target ${target}_step_generator)
    add_executable(${generator_target} ${sources})
    target_include_directories(${generator_target} PRIVATE ${includes})
    target_link_libraries(${generator_target} PRIVATE burtorch::burtorch)
    set(generator "$<TARGET_FILE:${generator_target}>")
    set(generator_file "")
  else()
    set(generator_target burtorch_step_generators)
    set(host_dir "${CMAKE_BINARY_DIR}/burtorch-step-generators")
    set(generator "${host_dir}/build/${target}-step-generator")
    # Rerun when the generator changes (the emitter itself, say); Ninja
    # wants a rule for every file it depends on, and the host build's
    # outputs are not known to it: there, the generator's sources only.
    set(generator_file "")
    if(NOT CMAKE_GENERATOR MATCHES "Ninja")
      set(generator_file "${generator}")
    endif()
    # One line per generator: name, sources, includes (lists joined by '|').
    string(REPLACE ";" "|" sources_arg "${sources}")
    string(REPLACE ";" "|" includes_arg "${includes}")
    set_property(GLOBAL APPEND_STRING PROPERTY BURTORCH_STEP_GENERATORS
                 "${target}-step-generator;${sources_arg};${includes_arg}\n")
    if(NOT TARGET burtorch_step_generators)
      cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL _burtorch_write_step_generators)
      ExternalProject_Add(burtorch_step_generators
        SOURCE_DIR "${_burtorch_compile_step_dir}/compile-step-host"
        PREFIX "${host_dir}"
        BINARY_DIR "${host_dir}/build"
        CMAKE_ARGS -DCMAKE_BUILD_TYPE=Release
                   -DCMAKE_C_COMPILER=${BURTORCH_HOST_C_COMPILER}
                   -DCMAKE_CXX_COMPILER=${BURTORCH_HOST_CXX_COMPILER}
                   -DBURTORCH_SOURCE_DIR=${root}
                   -DGENERATOR_LIST=${host_dir}/generators.txt
        BUILD_ALWAYS ON
        INSTALL_COMMAND "")
    endif()
  endif()
  set(outputs "")
  set(generated_sources "")
  foreach(step IN LISTS arg_STEPS)
    list(APPEND outputs "${out}/${step}.hpp" "${out}/${step}.cpp")
    list(APPEND generated_sources "${out}/${step}.cpp")
  endforeach()
  add_custom_command(OUTPUT ${outputs}
    COMMAND ${CMAKE_COMMAND} -E make_directory "${out}"
    COMMAND "${generator}" "${out}"
    # The generator leaves a file it would not change as it was; the
    # outputs are newer than the generator all the same (no second run).
    COMMAND ${CMAKE_COMMAND} -E touch ${outputs}
    DEPENDS ${generator_target} ${generator_file} ${sources}
    COMMENT "Compiling the recorded training steps of ${target}: ${arg_STEPS}"
    VERBATIM)
  target_sources(${target} PRIVATE ${generated_sources})
  target_include_directories(${target} PRIVATE "${out}")
endfunction()
