# SPDX-License-Identifier: Apache-2.0
# Host Release build: library, tests, programs, benchmarks compile; tests pass.
set -e
cmake --workflow --preset host
