# SPDX-License-Identifier: Apache-2.0
# QEMU mps2-an500: Arm MPS2 FPGA board with the AN500 image, a Cortex-M7 with
# double-precision FPU at 25 MHz. Code in ZBT SSRAM1 (0x00000000, 4 MiB), data
# in ZBT SSRAM2/3 (0x20000000, 4 MiB). Budgets of an STM32F767-class part:
# 1 MiB flash, 512 KiB RAM.
set(BURTORCH_BOARD_CPU cortex-m7)
set(BURTORCH_BOARD_QEMU_MACHINE mps2-an500)
set(BURTORCH_BOARD_CORE_HZ 25000000)
set(BURTORCH_BOARD_SMALL 0)
