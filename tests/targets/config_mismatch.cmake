# SPDX-License-Identifier: Apache-2.0
# Mixing configuration flags must fail, naming the flag:
#   MODE=compile: compile with the library's include path (which holds the
#     generated burtorch/build_config.hpp) and -D<FLAG>=<VALUE>, VALUE not the
#     library's; the compiler must stop with an #error naming FLAG.
#   MODE=link: compile without the generated header (so the -D is taken) and
#     link with the library's archive; the linker must stop with an
#     undefined reference that names the flag and the value (Tape's
#     constructor, detail::BuiltWith<..., config_<FLAG>< VALUE >, ...>).
#   MODE=match: the same as link but with the library's own value: must
#     build (the check above is not a false alarm).
# cmake -DCXX=<compiler> -DMODE=... -DFLAG=PARAM_NAMES -DVALUE=0|1
#       "-DBUILT=PARAM_NAMES=<0|1>;FAULT_HOOK=<0|1>;SIMD=<0|1>;SIMD_FMA=<0|1>"
#       -DINCLUDES=<dir;...> -DARCHIVE=<libburtorch.a> -DSOURCE=<.cpp> -DOUT=<file>
#       "-DFLAGS=<compiler flags>" "-DLINK_FLAGS=<linker flags>"
#       -P config_mismatch.cmake
set(includes "")
foreach(dir IN LISTS INCLUDES)
  list(APPEND includes "-I${dir}")
endforeach()
# Every other flag at the library's value (BUILT: FLAG=value;...), FLAG at VALUE.
set(defines "")
foreach(pair IN LISTS BUILT)
  string(REPLACE "=" ";" kv "${pair}")
  list(GET kv 0 name)
  list(GET kv 1 value)
  if(NOT name STREQUAL FLAG)
    list(APPEND defines "-DBURTORCH_CONFIG_${name}=${value}")
  endif()
endforeach()
list(APPEND defines "-DBURTORCH_CONFIG_${FLAG}=${VALUE}")
# The build's own compiler and linker flags (e.g. the sanitizers of host-debug).
separate_arguments(flags UNIX_COMMAND "${FLAGS}")
separate_arguments(link_flags UNIX_COMMAND "${LINK_FLAGS}")
if(MODE STREQUAL "compile")
  set(command ${CXX} -std=c++17 ${flags} ${includes} ${defines} -c ${SOURCE} -o ${OUT}.o)
else()
  set(command ${CXX} -std=c++17 ${flags} ${includes} ${defines} ${SOURCE} ${ARCHIVE} ${link_flags} -o ${OUT})
endif()
execute_process(COMMAND ${command} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(REPLACE "\n" "\n  | " shown "${out}${err}")
message("${command}\n  | ${shown}")
if(MODE STREQUAL "match")
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "the matching configuration did not build")
  endif()
  message("built, as it should")
  return()
endif()
if(code EQUAL 0)
  message(FATAL_ERROR "BURTORCH_CONFIG_${FLAG}=${VALUE} differs from the library, yet the program built")
endif()
if(MODE STREQUAL "compile")
  set(expected "#error \"BURTORCH_CONFIG_${FLAG} differs")
else()
  # GCC demangles the constructor's parameter type: config_FLAG<VALUE>.
  set(expected "undefined reference to .*burtorch::detail::config_${FLAG}<${VALUE}>")
endif()
if(NOT "${out}${err}" MATCHES "${expected}")
  message(FATAL_ERROR "failed, but without a message matching '${expected}'")
endif()
message("failed as it should, naming BURTORCH_CONFIG_${FLAG}")
