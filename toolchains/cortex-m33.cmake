# SPDX-License-Identifier: Apache-2.0
# Bare-metal toolchain: cortex-m33. ARMv8-M Mainline with the single-precision FPU and the DSP extension; the stack limit register (MSPLIM/PSPLIM) catches stack overflow.
# Use with a board from targets/ (BURTORCH_BOARD), e.g. the preset cortex-m33.
set(BURTORCH_CPU cortex-m33)
set(BURTORCH_CPU_FLAGS "-mcpu=cortex-m33 -mfpu=fpv5-sp-d16 -mfloat-abi=hard")
include(${CMAKE_CURRENT_LIST_DIR}/arm-none-eabi.cmake)
