# SPDX-License-Identifier: Apache-2.0
# Bare-metal toolchain: cortex-m7. ARMv7E-M with the double-precision FPU (M7 with FPv5-D16): float and double in hardware.
# Use with a board from targets/ (BURTORCH_BOARD), e.g. the preset cortex-m7.
set(BURTORCH_CPU cortex-m7)
set(BURTORCH_CPU_FLAGS "-mcpu=cortex-m7 -mfpu=fpv5-d16 -mfloat-abi=hard")
include(${CMAKE_CURRENT_LIST_DIR}/arm-none-eabi.cmake)
