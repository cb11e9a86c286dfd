# SPDX-License-Identifier: Apache-2.0
# Cortex-M33 on MPS2 AN505 (Secure state): all test suites under qemu-system-arm.
# cmake --workflow --preset cortex-m33: configure, build, CTest (a failing
# suite, a crash or a hang fails the stage). See docs/porting.md.
# suite: targets
# trees: cortex-m33
set -e
cd "$(dirname "$0")/../.."
# The preset's workflow (configure, build, test), configured with the gates'
# analysis output (-fstack-usage -fcallgraph-info: the same objects, plus the
# .su and .ci files stages 31-33 read from this tree).
cmake --preset cortex-m33 -DBURTORCH_ANALYSIS=ON
cmake --build --preset cortex-m33
ctest --preset cortex-m33
# The install the later stages share (tools/check.d/lib/trees.sh).
. tools/check.d/lib/trees.sh
install_preset cortex-m33
