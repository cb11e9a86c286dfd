# SPDX-License-Identifier: Apache-2.0
# Cortex-M55 (Helium) on MPS3 AN547: all test suites under qemu-system-arm.
# cmake --workflow --preset cortex-m55: configure, build, CTest (a failing
# suite, a crash or a hang fails the stage). See docs/porting.md.
# suite: targets
# trees: cortex-m55
set -e
cd "$(dirname "$0")/../.."
cmake --workflow --preset cortex-m55
# The install the later stages share (tools/check.d/lib/trees.sh).
. tools/check.d/lib/trees.sh
install_preset cortex-m55
