# SPDX-License-Identifier: Apache-2.0
# Architecture gate (tools/gates/architecture.py, budgets and floors in
# tools/gates/architecture.txt): no include in include/burtorch/ runs up a
# floor, no include loop, nothing reachable from the core's headers is an
# extension, Tape's public API within its budget, no library file past
# 500 lines, docs/architecture.md's generated table current and every
# file and symbol it names existing; then the gate's self-test plants each
# kind of violation and checks that it is caught. < 10 s.
# suite: gates
# jobs: 1
set -eu
cd "$(dirname "$0")/../.."
python3 tools/gates/architecture.py check
python3 tools/gates/architecture.py --selftest
