# SPDX-License-Identifier: Apache-2.0
# Deterministic instruction counts on the emulated Cortex-M cores
# (tools/icount, docs/mcu-instructions.md): builds the firmware of bench/mcu
# at -O2 for Cortex-M0, M4, M7, M33 and M55 (build/icount-<preset>), runs it
# under qemu-system-arm -icount, and fails if a calibration is not linear in
# instructions, the shift-0 cross-check disagrees, or the library and the
# hand-written trainer do not reach the same loss. The library /
# hand-written ratio is printed, never judged here.
# suite: bench
# trees: icount-cortex-m0 icount-cortex-m4 icount-cortex-m7 icount-cortex-m33 icount-cortex-m55
set -eu
cd "$(dirname "$0")/../.."
tools/icount --check
