# SPDX-License-Identifier: Apache-2.0
# ARMv7-A Linux hard-float + Neon: library + all test suites, run under qemu-arm.
# cmake --workflow --preset armv7-linux: configure, build, CTest (a failing
# suite, a crash or a hang fails the stage). See docs/porting.md.
# suite: targets
# trees: armv7-linux
set -e
cd "$(dirname "$0")/../.."
# The preset's workflow (configure, build, test), configured with the gates'
# analysis output (-fstack-usage -fcallgraph-info: the same objects, plus the
# .su and .ci files stages 31-33 read from this tree).
cmake --preset armv7-linux -DBURTORCH_ANALYSIS=ON
cmake --build --preset armv7-linux
ctest --preset armv7-linux
# The install the later stages share (tools/check.d/lib/trees.sh).
. tools/check.d/lib/trees.sh
install_preset armv7-linux
