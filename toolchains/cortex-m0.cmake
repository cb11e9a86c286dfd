# SPDX-License-Identifier: Apache-2.0
# Bare-metal toolchain: cortex-m0. ARMv6-M, no FPU: float and double are emulated in software (libgcc).
# Use with a board from targets/ (BURTORCH_BOARD), e.g. the preset cortex-m0.
set(BURTORCH_CPU cortex-m0)
set(BURTORCH_CPU_FLAGS "-mcpu=cortex-m0 -mfloat-abi=soft")
include(${CMAKE_CURRENT_LIST_DIR}/arm-none-eabi.cmake)
