# SPDX-License-Identifier: Apache-2.0
# The run's time budget: prints each stage's wall time and each suite's, and
# fails a full run (or a run of a suite that tools/check.d/budget.txt
# lists, such as quick) that has taken longer than the budget allows. Runs
# last, after every other stage of the run (tools/check.d/lib/run.py);
# alone it reads the times of the last run. < 1 s.
# suite: gates
# jobs: 1
set -eu
cd "$(dirname "$0")/../.."
exec python3 tools/check.d/lib/budget.py
