# SPDX-License-Identifier: Apache-2.0
# Cortex-M7 (double-precision FPU) on MPS2 AN500: all test suites under qemu-system-arm.
# cmake --workflow --preset cortex-m7: configure, build, CTest (a failing
# suite, a crash or a hang fails the stage). See docs/porting.md.
# suite: targets
# trees: cortex-m7
set -e
cd "$(dirname "$0")/../.."
# The preset's workflow (configure, build, test), configured with the gates'
# analysis output (-fstack-usage -fcallgraph-info: the same objects, plus the
# .su and .ci files stages 31-33 read from this tree).
cmake --preset cortex-m7 -DBURTORCH_ANALYSIS=ON
cmake --build --preset cortex-m7
ctest --preset cortex-m7
# The install the later stages share (tools/check.d/lib/trees.sh).
. tools/check.d/lib/trees.sh
install_preset cortex-m7
