# SPDX-License-Identifier: Apache-2.0
# Cortex-M4F on MPS2 AN386: all test suites as firmware under qemu-system-arm.
# cmake --workflow --preset cortex-m4: configure, build, CTest (a failing
# suite, a crash or a hang fails the stage). See docs/porting.md.
# suite: targets
# trees: cortex-m4
set -e
cd "$(dirname "$0")/../.."
# The preset's workflow (configure, build, test), configured with the gates'
# analysis output (-fstack-usage -fcallgraph-info: the same objects, plus the
# .su and .ci files stages 31-33 read from this tree).
cmake --preset cortex-m4 -DBURTORCH_ANALYSIS=ON
cmake --build --preset cortex-m4
ctest --preset cortex-m4
# The install the later stages share (tools/check.d/lib/trees.sh).
. tools/check.d/lib/trees.sh
install_preset cortex-m4
