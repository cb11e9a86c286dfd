# SPDX-License-Identifier: Apache-2.0
# Cortex-M0 on the BBC micro:bit (16 KB RAM, soft float): every suite, tables
# trimmed where they would not fit (BURTORCH_TEST_SMALL_TARGET, docs/porting.md),
# under qemu-system-arm.
# cmake --workflow --preset cortex-m0: configure, build, CTest (a failing
# suite, a crash or a hang fails the stage). See docs/porting.md.
# suite: targets
# trees: cortex-m0
set -e
cd "$(dirname "$0")/../.."
cmake --workflow --preset cortex-m0
# The install the later stages share (tools/check.d/lib/trees.sh).
. tools/check.d/lib/trees.sh
install_preset cortex-m0
