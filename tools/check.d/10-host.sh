# SPDX-License-Identifier: Apache-2.0
# Host Release build: library, tests, programs, benchmarks compile; tests pass.
# suite: build
# trees: host
set -e
cd "$(dirname "$0")/../.."
# The preset's workflow (configure, build, test), configured with the gates'
# analysis output (-fstack-usage -fcallgraph-info: the same objects, plus the
# .su and .ci files stages 31-33 read from this tree).
cmake --preset host -DBURTORCH_ANALYSIS=ON
cmake --build --preset host
ctest --preset host
# The install the later stages share (tools/check.d/lib/trees.sh).
. tools/check.d/lib/trees.sh
install_preset host
