# SPDX-License-Identifier: Apache-2.0
# Cross toolchain: 32-bit ARM Linux, ARMv7-A with Neon and a hard-float ABI
# (Raspberry Pi 2 and later running a 32-bit OS). Debian packages:
# g++-arm-linux-gnueabihf, qemu-user.
#   cmake --workflow --preset armv7-linux
# Tests run under qemu-arm with the cross sysroot as its library prefix.
set(CMAKE_SYSTEM_NAME Linux)
# Release (-O3) when no build type is given (not -O0): docs/porting.md, "Build type".
set(CMAKE_BUILD_TYPE_INIT Release)
set(CMAKE_SYSTEM_PROCESSOR armv7-a)

set(BURTORCH_CROSS_TRIPLE arm-linux-gnueabihf)
set(CMAKE_C_COMPILER ${BURTORCH_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${BURTORCH_CROSS_TRIPLE}-g++)
set(CMAKE_ASM_COMPILER ${BURTORCH_CROSS_TRIPLE}-gcc)

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

# ARMv7-A, VFPv4 + Neon (Cortex-A7/A53 in AArch32), hard-float calling
# convention, Thumb-2 code. See docs/floating-point.md for what Neon does
# and does not change in results.
set(BURTORCH_ARM_FLAGS "-march=armv7-a -mfpu=neon-vfpv4 -mfloat-abi=hard -mthumb -Wno-psabi")
# Same code-generation rules as the Cortex-M builds: no exceptions, no RTTI,
# no thread-safe statics, one section per function, unused sections dropped.
set(CMAKE_C_FLAGS_INIT "${BURTORCH_ARM_FLAGS} -ffunction-sections -fdata-sections")
set(CMAKE_CXX_FLAGS_INIT "${BURTORCH_ARM_FLAGS} -ffunction-sections -fdata-sections -fno-exceptions -fno-rtti -fno-threadsafe-statics")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-Wl,--gc-sections")

set(CMAKE_CROSSCOMPILING_EMULATOR qemu-arm -L ${BURTORCH_SYSROOT})
