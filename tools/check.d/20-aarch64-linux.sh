# SPDX-License-Identifier: Apache-2.0
# AArch64 Linux (Neon): library + all test suites, run under qemu-aarch64.
# cmake --workflow --preset aarch64-linux: configure, build, CTest (a failing
# suite, a crash or a hang fails the stage). See docs/porting.md.
set -e
cd "$(dirname "$0")/../.."
cmake --workflow --preset aarch64-linux
