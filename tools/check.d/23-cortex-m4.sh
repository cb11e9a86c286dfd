# SPDX-License-Identifier: Apache-2.0
# Cortex-M4F on MPS2 AN386: all test suites as firmware under qemu-system-arm.
# cmake --workflow --preset cortex-m4: configure, build, CTest (a failing
# suite, a crash or a hang fails the stage). See docs/porting.md.
# suite: targets
# trees: cortex-m4
set -e
cd "$(dirname "$0")/../.."
cmake --workflow --preset cortex-m4
# The install the later stages share (tools/check.d/lib/trees.sh).
. tools/check.d/lib/trees.sh
install_preset cortex-m4
