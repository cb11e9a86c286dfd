# SPDX-License-Identifier: Apache-2.0
# Cross toolchain: 64-bit ARM Linux (Raspberry Pi 3/4/5 class, Neon is part
# of AArch64). Debian packages: g++-aarch64-linux-gnu, qemu-user.
#   cmake --workflow --preset aarch64-linux
# Tests run under qemu-aarch64 with the cross sysroot as its library prefix.
set(CMAKE_SYSTEM_NAME Linux)
# Release (-O3) when no build type is given (not -O0): docs/porting.md, "Build type".
set(CMAKE_BUILD_TYPE_INIT Release)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(BURTORCH_CROSS_TRIPLE aarch64-linux-gnu)
set(CMAKE_C_COMPILER ${BURTORCH_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${BURTORCH_CROSS_TRIPLE}-g++)
set(CMAKE_ASM_COMPILER ${BURTORCH_CROSS_TRIPLE}-gcc)

# The sysroot Debian's cross packages install into.
set(BURTORCH_SYSROOT /usr/${BURTORCH_CROSS_TRIPLE} CACHE PATH "target libraries for the emulator")
set(CMAKE_FIND_ROOT_PATH ${BURTORCH_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# Packages built for this target outside the sysroot, such as an installed
# libburtorch: -DCMAKE_PREFIX_PATH=<prefix> names them, and each prefix is
# also a root (otherwise it would be searched under the sysroot only, as
# <sysroot>/<prefix>, and never found). Host packages stay out of reach.
foreach(_burtorch_prefix IN LISTS CMAKE_PREFIX_PATH)
  list(APPEND CMAKE_FIND_ROOT_PATH "${_burtorch_prefix}")
endforeach()

# -march=armv8-a is the baseline every 64-bit Pi runs; Neon (Advanced SIMD)
# is mandatory there, so no flag is needed for it.
# Same code-generation rules as the Cortex-M builds: no exceptions, no RTTI,
# no thread-safe statics, one section per function, unused sections dropped.
set(CMAKE_C_FLAGS_INIT "-march=armv8-a -ffunction-sections -fdata-sections")
set(CMAKE_CXX_FLAGS_INIT "-march=armv8-a -ffunction-sections -fdata-sections -fno-exceptions -fno-rtti -fno-threadsafe-statics")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-Wl,--gc-sections")

set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L ${BURTORCH_SYSROOT})

# MPI for this target (burtorch::port_mpi, the package's `mpi` component, a
# program of yours over it): Debian's arm64 Open MPI unpacked into a folder
# (tools/mpi-sysroot DIR, which also links the cross C library into it), as
# -DBURTORCH_MPI_SYSROOT=DIR. The host's mpicc describes the host's MPI, so
# FindMPI is told where the target's header and library are instead; the
# linker finds MPI's own dependencies there (-rpath-link), and the emulator
# (and QEMU_LD_PREFIX for ranks under mpirun) uses DIR as its prefix.
# docs/porting.md, "MPI on AArch64 boards".
set(BURTORCH_MPI_SYSROOT "" CACHE PATH "Open MPI for aarch64, unpacked (tools/mpi-sysroot); empty: no MPI")
if(BURTORCH_MPI_SYSROOT)
  set(_burtorch_mpi_lib "${BURTORCH_MPI_SYSROOT}/usr/lib/${BURTORCH_CROSS_TRIPLE}")
  if(NOT EXISTS "${_burtorch_mpi_lib}/openmpi/lib/libmpi.so" OR NOT EXISTS "${_burtorch_mpi_lib}/openmpi/include/mpi.h")
    message(FATAL_ERROR "BURTORCH_MPI_SYSROOT '${BURTORCH_MPI_SYSROOT}' has no ${BURTORCH_CROSS_TRIPLE} Open MPI "
                        "(openmpi/lib/libmpi.so, openmpi/include/mpi.h): make it with tools/mpi-sysroot")
  endif()
  set(MPI_SKIP_COMPILER_WRAPPER TRUE)
  # Nor the host's pkg-config files (FindMPI's other source): the target's only.
  set(ENV{PKG_CONFIG_LIBDIR} "${_burtorch_mpi_lib}/pkgconfig")
  set(ENV{PKG_CONFIG_SYSROOT_DIR} "${BURTORCH_MPI_SYSROOT}")
  set(MPI_C_HEADER_DIR "${_burtorch_mpi_lib}/openmpi/include" CACHE PATH "the target's mpi.h")
  set(MPI_C_LIB_NAMES mpi CACHE STRING "the target's MPI libraries")
  set(MPI_mpi_LIBRARY "${_burtorch_mpi_lib}/openmpi/lib/libmpi.so" CACHE FILEPATH "the target's libmpi")
  list(APPEND CMAKE_FIND_ROOT_PATH "${BURTORCH_MPI_SYSROOT}")
  string(APPEND CMAKE_EXE_LINKER_FLAGS_INIT
         " -Wl,-rpath-link,${_burtorch_mpi_lib} -Wl,-rpath-link,${BURTORCH_MPI_SYSROOT}/lib/${BURTORCH_CROSS_TRIPLE}")
  set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L ${BURTORCH_MPI_SYSROOT})
endif()
