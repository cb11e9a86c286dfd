# SPDX-License-Identifier: Apache-2.0
# burtorch_import_model(): an ONNX model imported at build time (docs/import.md).
#
#   burtorch_import_model(TARGET app MODEL model.onnx HEADER model.hpp
#                         [NAMESPACE name] [WEIGHTS fp32|fp16|bf16|int8[,LAYER=FORMAT...]]
#                         [TRAIN all|none|last:N|LAYER,...] [PRECISION float|double])
#
# Runs burtorch-import on the build machine (for cross builds too: the
# importer is Python; the header it writes is plain C++ for the target) into
# ${CMAKE_CURRENT_BINARY_DIR}/<HEADER>, again whenever the model or the
# importer changes, and puts that directory on TARGET's include path, so the
# sources of TARGET include "<HEADER>". A model the importer refuses fails
# the build with the importer's one-line reason.
include_guard(GLOBAL)

function(burtorch_import_model)
  cmake_parse_arguments(ARG "" "TARGET;MODEL;HEADER;NAMESPACE;WEIGHTS;TRAIN;PRECISION" "" ${ARGN})
  foreach(required TARGET MODEL HEADER)
    if(NOT ARG_${required})
      message(FATAL_ERROR "burtorch_import_model: ${required} is required")
    endif()
  endforeach()
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "burtorch_import_model: unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT TARGET ${ARG_TARGET})
    message(FATAL_ERROR "burtorch_import_model: ${ARG_TARGET} is not a target")
  endif()
  if(NOT BURTORCH_IMPORT_COMMAND OR NOT EXISTS "${BURTORCH_IMPORT_COMMAND}")
    message(FATAL_ERROR "burtorch_import_model: burtorch-import not found (BURTORCH_IMPORT_COMMAND='${BURTORCH_IMPORT_COMMAND}')")
  endif()
  get_filename_component(model "${ARG_MODEL}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  set(header "${CMAKE_CURRENT_BINARY_DIR}/${ARG_HEADER}")
  get_filename_component(header_dir "${header}" DIRECTORY)
  set(flags -o "${header}")
  foreach(option NAMESPACE WEIGHTS TRAIN PRECISION)
    if(ARG_${option})
      string(TOLOWER "${option}" flag)
      list(APPEND flags "--${flag}" "${ARG_${option}}")
    endif()
  endforeach()
  add_custom_command(OUTPUT "${header}"
    COMMAND "${CMAKE_COMMAND}" -E make_directory "${header_dir}"
    COMMAND "${BURTORCH_IMPORT_COMMAND}" "${model}" ${flags}
    DEPENDS "${model}" "${BURTORCH_IMPORT_COMMAND}"
    COMMENT "burtorch-import ${ARG_MODEL} -> ${ARG_HEADER}"
    VERBATIM)
  string(MAKE_C_IDENTIFIER "burtorch_import_${ARG_TARGET}_${ARG_HEADER}" stamp)
  add_custom_target(${stamp} DEPENDS "${header}")
  add_dependencies(${ARG_TARGET} ${stamp})
  target_include_directories(${ARG_TARGET} PRIVATE "${header_dir}")
  set_source_files_properties("${header}" PROPERTIES GENERATED TRUE)
endfunction()
