# SPDX-License-Identifier: Apache-2.0
# Bare-metal toolchain: cortex-m55. ARMv8.1-M Mainline with Helium (MVE, integer + float) and the double-precision FPU (-mcpu=cortex-m55 enables all of them).
# Use with a board from targets/ (BURTORCH_BOARD), e.g. the preset cortex-m55.
set(BURTORCH_CPU cortex-m55)
set(BURTORCH_CPU_FLAGS "-mcpu=cortex-m55 -mfloat-abi=hard")
include(${CMAKE_CURRENT_LIST_DIR}/arm-none-eabi.cmake)
