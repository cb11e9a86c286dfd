# SPDX-License-Identifier: Apache-2.0
# Gate 2: no cycle in the call graph merged across translation
# units (-fcallgraph-info=su, 8 presets x -O0/-O2/-Os and their own level); every indirect call
# site carries a documented BT-DEV ID; no unbounded (dynamic) stack frame.
# clang-tidy's misc-no-recursion runs in stage 35. ~3 s (reuses stage 31's
# build when sources are unchanged).
# suite: gates
# after: 31-gates-symbols
# jobs: 1
# trees: gates
set -eu
cd "$(dirname "$0")/../.."
python3 tools/gates/gates.py callgraph
