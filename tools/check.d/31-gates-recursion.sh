# SPDX-License-Identifier: Apache-2.0
# Gate 2: no cycle in the call graph merged across translation
# units (-fcallgraph-info=su, 8 presets x -O0/-O2/-Os and their own level); every indirect call
# site carries a documented BT-DEV ID; no unbounded (dynamic) stack frame.
# clang-tidy's misc-no-recursion runs in stage 34. ~3 s (reuses stage 30's
# build when sources are unchanged).
set -eu
cd "$(dirname "$0")/../.."
python3 tools/gates/gates.py callgraph
