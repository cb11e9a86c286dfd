# SPDX-License-Identifier: Apache-2.0
# A trainer writes its loss-curve CSV and, with --plot py, next to it a
# matplotlib script that draws the CSV; run the script with Debian's
# python3-matplotlib and check the PNG (skipped, printing "SKIPPED: ", when
# matplotlib is not installed). The SVG and PNG the trainers draw themselves
# (the default, --plot svg, and --plot png) are checked by stage 50-docs.
# cmake -DPROGRAM=<trainer> -DWORK=<dir> "-DARGS=<flags>" -P plot_check.cmake
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
separate_arguments(args UNIX_COMMAND "${ARGS}")
execute_process(COMMAND "${PROGRAM}" ${args} --steps 60 --print-every 10 --csv "${WORK}/loss.csv" --plot py
                WORKING_DIRECTORY "${WORK}" RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "trainer failed: ${rc}")
endif()
foreach(f loss.csv loss.py)
  if(NOT EXISTS "${WORK}/${f}")
    message(FATAL_ERROR "trainer did not write ${f}")
  endif()
endforeach()
file(STRINGS "${WORK}/loss.csv" rows)
list(LENGTH rows n)
if(n LESS 7)
  message(FATAL_ERROR "loss.csv has ${n} lines, expected a header and 6 rows")
endif()
execute_process(COMMAND /usr/bin/python3 -c "import matplotlib" RESULT_VARIABLE has_mpl OUTPUT_QUIET ERROR_QUIET)
if(NOT has_mpl EQUAL 0)
  # cmake_language(EXIT) needs CMake 3.29: the test skips on this line instead.
  message("SKIPPED: python3-matplotlib not installed")
  return()
endif()
execute_process(COMMAND /usr/bin/python3 "${WORK}/loss.py" WORKING_DIRECTORY "${WORK}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "loss.py failed: ${rc}")
endif()
file(READ "${WORK}/loss.png" magic LIMIT 8 HEX)
file(SIZE "${WORK}/loss.png" size)
if(NOT magic STREQUAL "89504e470d0a1a0a" OR size LESS 2000)
  message(FATAL_ERROR "loss.png is not a plausible PNG (magic ${magic}, ${size} bytes)")
endif()
message("loss.png: ${size} bytes")
