# SPDX-License-Identifier: Apache-2.0
# QEMU mps2-an505: Arm MPS2+ FPGA board with the AN505 image (IoT Kit), a
# Cortex-M33 with FPU at 20 MHz, running in the Secure state it resets into.
# Code in the secure alias of SSRAM1 (0x10000000, 4 MiB), data in the secure
# alias of SSRAM2/3 (0x38000000, 4 MiB). Budgets of an nRF5340 / STM32U5-class
# part: 512 KiB flash, 512 KiB RAM.
set(BURTORCH_BOARD_CPU cortex-m33)
set(BURTORCH_BOARD_QEMU_MACHINE mps2-an505)
set(BURTORCH_BOARD_CORE_HZ 20000000)
set(BURTORCH_BOARD_SMALL 0)
