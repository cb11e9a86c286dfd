# SPDX-License-Identifier: Apache-2.0
# QEMU microbit: BBC micro:bit v1, a Nordic nRF51822 (Cortex-M0, no FPU) at 16
# MHz. Code in flash (0x00000000, 256 KiB), data in RAM (0x20000000, 16 KiB).
# Budgets: all of the chip, 256 KiB flash and 16 KiB RAM.
set(BURTORCH_BOARD_CPU cortex-m0)
set(BURTORCH_BOARD_QEMU_MACHINE microbit)
set(BURTORCH_BOARD_CORE_HZ 16000000)
set(BURTORCH_BOARD_SMALL 1)
