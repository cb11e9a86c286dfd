# SPDX-License-Identifier: Apache-2.0
# Gate 3: worst stack depth of every public entry point per target
# and optimisation level against tools/gates/stack-budget.txt. Full table:
# build/gates/stack-report.md. ~5 s (reuses stage 31's build).
# suite: gates
# after: 31-gates-symbols
# jobs: 1
# trees: gates
set -eu
cd "$(dirname "$0")/../.."
python3 tools/gates/gates.py stack
