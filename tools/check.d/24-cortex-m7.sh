# SPDX-License-Identifier: Apache-2.0
# Cortex-M7 (double-precision FPU) on MPS2 AN500: all test suites under qemu-system-arm.
# cmake --workflow --preset cortex-m7: configure, build, CTest (a failing
# suite, a crash or a hang fails the stage). See docs/porting.md.
# suite: targets
# trees: cortex-m7
set -e
cd "$(dirname "$0")/../.."
cmake --workflow --preset cortex-m7
# The install the later stages share (tools/check.d/lib/trees.sh).
. tools/check.d/lib/trees.sh
install_preset cortex-m7
