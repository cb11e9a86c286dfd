# SPDX-License-Identifier: Apache-2.0
# ARMv7-A Linux hard-float + Neon: library + all test suites, run under qemu-arm.
# cmake --workflow --preset armv7-linux: configure, build, CTest (a failing
# suite, a crash or a hang fails the stage). See docs/porting.md.
set -e
cd "$(dirname "$0")/../.."
cmake --workflow --preset armv7-linux
