# SPDX-License-Identifier: Apache-2.0
# AArch64 Linux (Neon): library + all test suites, run under qemu-aarch64.
# cmake --workflow --preset aarch64-linux: configure, build, CTest (a failing
# suite, a crash or a hang fails the stage). See docs/porting.md. Configured
# with MPI for the target (Debian's arm64 Open MPI, tools/mpi-sysroot into
# build/mpi-sysroot-arm64: 11 packages, ~4 MB, ~10 s to download once), so
# the install has burtorch::port_mpi (stage 43 runs a cluster program on
# it); without the download the stage goes on without MPI and says so.
# suite: targets
# trees: aarch64-linux
set -e
cd "$(dirname "$0")/../.."
# The preset's workflow (configure, build, test), configured with the gates'
# analysis output (-fstack-usage -fcallgraph-info: the same objects, plus the
# .su and .ci files stages 31-33 read from this tree).
. tools/check.d/lib/trees.sh
tools/mpi-sysroot build/mpi-sysroot-arm64 || echo "20-aarch64-linux: no arm64 Open MPI (tools/mpi-sysroot failed): no burtorch::port_mpi"
# shellcheck disable=SC2046
cmake --preset aarch64-linux -DBURTORCH_ANALYSIS=ON $(preset_flags aarch64-linux)
cmake --build --preset aarch64-linux
ctest --preset aarch64-linux
# The install the later stages share (tools/check.d/lib/trees.sh).
install_preset aarch64-linux
