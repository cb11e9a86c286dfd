# SPDX-License-Identifier: Apache-2.0
# QEMU mps3-an547: Arm MPS3 FPGA board with the AN547 image (Corstone
# SSE-300), a Cortex-M55 with Helium and double-precision FPU at 32 MHz,
# running in the Secure state. Code in the secure alias of the ITCM
# (0x10000000, 512 KiB), data in the secure alias of the DTCM (0x30000000, 512
# KiB). Budgets: all of both.
set(BURTORCH_BOARD_CPU cortex-m55)
set(BURTORCH_BOARD_QEMU_MACHINE mps3-an547)
set(BURTORCH_BOARD_CORE_HZ 32000000)
set(BURTORCH_BOARD_SMALL 0)
