# SPDX-License-Identifier: Apache-2.0
# QEMU mps2-an386: Arm MPS2 FPGA board with the AN386 image, a Cortex-M4 with
# FPU at 25 MHz. Code in ZBT SSRAM1 (0x00000000, 4 MiB), data in ZBT SSRAM2/3
# (0x20000000, 4 MiB). Budgets of a large M4F part (STM32F429 or
# nRF52840 class): 1 MiB flash, 256 KiB RAM.
set(BURTORCH_BOARD_CPU cortex-m4)
set(BURTORCH_BOARD_QEMU_MACHINE mps2-an386)
set(BURTORCH_BOARD_CORE_HZ 25000000)
set(BURTORCH_BOARD_SMALL 0)
