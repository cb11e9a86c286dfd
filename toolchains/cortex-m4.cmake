# SPDX-License-Identifier: Apache-2.0
# Bare-metal toolchain: cortex-m4. ARMv7E-M with the single-precision FPU (M4F): float in hardware, double in software.
# Use with a board from targets/ (BURTORCH_BOARD), e.g. the preset cortex-m4.
set(BURTORCH_CPU cortex-m4)
set(BURTORCH_CPU_FLAGS "-mcpu=cortex-m4 -mfpu=fpv4-sp-d16 -mfloat-abi=hard")
include(${CMAKE_CURRENT_LIST_DIR}/arm-none-eabi.cmake)
