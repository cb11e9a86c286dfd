# SPDX-License-Identifier: Apache-2.0
# Host Release build: library, tests, programs, benchmarks compile; tests pass.
# suite: build
# trees: host
set -e
cd "$(dirname "$0")/../.."
cmake --workflow --preset host
# The install the later stages share (tools/check.d/lib/trees.sh).
. tools/check.d/lib/trees.sh
install_preset host
