# SPDX-License-Identifier: Apache-2.0
# Shared part of the bare-metal Cortex-M toolchains (arm-none-eabi-gcc with
# newlib). Do not use it directly: use toolchains/cortex-m<N>.cmake, which
# sets BURTORCH_CPU_FLAGS and includes this file. Debian packages:
# gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib.
#
# What every Cortex-M build gets:
#   -mthumb + the core's -mcpu/-mfpu/-mfloat-abi (also at link time, so the
#     matching newlib/libstdc++ multilib is chosen)
#   -fno-exceptions -fno-rtti -fno-threadsafe-statics (C++)
#   -ffunction-sections -fdata-sections and --gc-sections
#   --specs=nano.specs -nostartfiles: newlib-nano for memcpy and libm only;
#     startup code comes from targets/boards/cortex-m. No syscall stubs are linked,
#     so anything that would reach malloc or stdio fails to link.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)

set(BURTORCH_CROSS_TRIPLE arm-none-eabi)
set(CMAKE_C_COMPILER ${BURTORCH_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${BURTORCH_CROSS_TRIPLE}-g++)
set(CMAKE_ASM_COMPILER ${BURTORCH_CROSS_TRIPLE}-gcc)
set(CMAKE_AR ${BURTORCH_CROSS_TRIPLE}-ar)
set(CMAKE_RANLIB ${BURTORCH_CROSS_TRIPLE}-ranlib)
set(CMAKE_OBJCOPY ${BURTORCH_CROSS_TRIPLE}-objcopy)
set(CMAKE_SIZE ${BURTORCH_CROSS_TRIPLE}-size)

# Compiler checks cannot link a program without startup code and a linker
# script, so they build a static library instead.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

if(NOT DEFINED BURTORCH_CPU_FLAGS)
  message(FATAL_ERROR "toolchains/arm-none-eabi.cmake: include it from a toolchains/cortex-m<N>.cmake file")
endif()

# -Wno-psabi: silences GCC's note that the AAPCS passing of 8-byte-aligned
# structs changed in GCC 7.1 (all code here is built by one compiler).
set(BURTORCH_MCU_COMMON_FLAGS "-mthumb ${BURTORCH_CPU_FLAGS} -ffunction-sections -fdata-sections -Wno-psabi")
set(CMAKE_C_FLAGS_INIT "${BURTORCH_MCU_COMMON_FLAGS}")
set(CMAKE_CXX_FLAGS_INIT "${BURTORCH_MCU_COMMON_FLAGS} -fno-exceptions -fno-rtti -fno-threadsafe-statics")
set(CMAKE_ASM_FLAGS_INIT "${BURTORCH_MCU_COMMON_FLAGS}")
set(CMAKE_EXE_LINKER_FLAGS_INIT "--specs=nano.specs -nostartfiles -Wl,--gc-sections")

# The build type when none is given (an empty CMAKE_BUILD_TYPE would build
# at -O0, unoptimised, and say nothing): Release (-O2), the one that keeps
# the library's trainer within 1.5x of a hand-written one's instructions per
# step; MinSizeRel (-Os) is smaller and slower (docs/porting.md, "Build
# type"). -DCMAKE_BUILD_TYPE=... overrides it, Debug gives -O0 -g.
set(CMAKE_BUILD_TYPE_INIT Release)

# Programs are ELF files; tools/footprint and QEMU read them directly.
set(CMAKE_EXECUTABLE_SUFFIX_C .elf)
set(CMAKE_EXECUTABLE_SUFFIX_CXX .elf)
set(CMAKE_EXECUTABLE_SUFFIX_ASM .elf)
