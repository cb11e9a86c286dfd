# SPDX-License-Identifier: Apache-2.0
# Cortex-M55 (Helium) on MPS3 AN547: all test suites under qemu-system-arm.
# cmake --workflow --preset cortex-m55: configure, build, CTest (a failing
# suite, a crash or a hang fails the stage). See docs/porting.md.
# suite: targets
# trees: cortex-m55
set -e
cd "$(dirname "$0")/../.."
# The preset's workflow (configure, build, test), configured with the gates'
# analysis output (-fstack-usage -fcallgraph-info: the same objects, plus the
# .su and .ci files stages 31-33 read from this tree).
cmake --preset cortex-m55 -DBURTORCH_ANALYSIS=ON
cmake --build --preset cortex-m55
ctest --preset cortex-m55
# The install the later stages share (tools/check.d/lib/trees.sh).
. tools/check.d/lib/trees.sh
install_preset cortex-m55
