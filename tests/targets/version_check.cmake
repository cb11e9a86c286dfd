# SPDX-License-Identifier: Apache-2.0
# include/burtorch/version.hpp must state the version of project() in
# CMakeLists.txt (the CMake package's version).
#   cmake -DHEADER=<version.hpp> -DVERSION=<x.y.z> -P version_check.cmake
file(READ ${HEADER} text)
string(REPLACE "." ";" parts "${VERSION}")
list(GET parts 0 major)
list(GET parts 1 minor)
list(GET parts 2 patch)
foreach(pair IN ITEMS "MAJOR;${major}" "MINOR;${minor}" "PATCH;${patch}")
  list(GET pair 0 name)
  list(GET pair 1 want)
  if(NOT text MATCHES "#define BURTORCH_VERSION_${name} ${want}\n")
    message(FATAL_ERROR "version.hpp: BURTORCH_VERSION_${name} is not ${want} (project version ${VERSION})")
  endif()
endforeach()
if(NOT text MATCHES "#define BURTORCH_VERSION_STRING \"${VERSION}\"")
  message(FATAL_ERROR "version.hpp: BURTORCH_VERSION_STRING is not \"${VERSION}\"")
endif()
message("version.hpp says ${VERSION}, as CMakeLists.txt does")
