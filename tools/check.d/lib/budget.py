#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Stage 99-budget: each stage's and each suite's wall time in this run of
tools/check, and the run's total against tools/check.d/budget.txt.

tools/check.d/lib/run.py exports BURTORCH_CHECK_RUN (what was asked for:
"all", a suite's name, stage names), BURTORCH_CHECK_STARTED (the run's
start, seconds since the epoch) and BURTORCH_CHECK_RUN_TIMES (a file of
"stage seconds exit-code cpu-seconds" lines, one per stage that has ended). Without
them (the stage run by hand) it reads build/check-logs/run-times.txt, the
last run's, and judges nothing. The machine's other work during the run
(its CPU seconds over the cores) is added to the budget, and a run on a
machine that other work kept more than a tenth busy is reported, not
judged; BURTORCH_CHECK_NO_LOAD_ALLOWANCE=1 (the runner's own test) turns
both off. Exit 1 when the run is one that
budget.txt lists and it took longer. Usage: budget.py [--help]
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run  # noqa: E402  (the runner: stages, suites, budget)


def main(argv: list[str]) -> int:
    if argv[1:] in (["-h"], ["--help"]):
        print(__doc__.strip())
        return 0
    if argv[1:]:
        print("budget.py: unknown argument %s (--help)" % argv[1], file=sys.stderr)
        return 2
    stages = {s.name: s for s in run.read_stages()}
    suites = run.read_suites()
    budget = run.read_budget()
    label = os.environ.get("BURTORCH_CHECK_RUN", "")
    started = os.environ.get("BURTORCH_CHECK_STARTED")
    times_file = Path(os.environ.get("BURTORCH_CHECK_RUN_TIMES", str(run.LOGS / "run-times.txt")))
    rows = []
    for line in times_file.read_text().splitlines() if times_file.exists() else []:
        parts = line.split()
        if len(parts) == 4 and parts[0] in stages and parts[0] != "99-budget":
            rows.append((parts[0], int(parts[1]), int(parts[2]), int(parts[3])))
    if not rows:
        print("budget: no stage times of a run (build/check-logs/run-times.txt); nothing to judge")
        return 0
    print("stage times of this run (wall and CPU seconds; stages run two at a time where one keeps a single"
          " core busy):")
    for name, seconds, rc, cpu in rows:
        print("  %-26s %5d %6d%s" % (name, seconds, cpu, "" if rc == 0 else "  (failed)"))
    by_suite: dict[str, list[int]] = {}
    for name, seconds, _, cpu in rows:
        t = by_suite.setdefault(stages[name].suite, [0, 0])
        t[0] += seconds
        t[1] += cpu
    print("by suite, wall and CPU seconds (the walls add up to more than the run where stages overlapped):")
    for suite in suites:
        if suite in by_suite:
            print("  %-12s %5d %6d" % (suite, by_suite[suite][0], by_suite[suite][1]))
    print("CPU seconds in all: %d" % sum(r[3] for r in rows))
    if started is None:
        print("budget: not run by tools/check; the total is not judged")
        return 0
    total = int(round(time.time() - float(started)))
    print("run '%s': %d s of wall time so far" % (label, total))
    # Other work on the machine (another job, a loaded host's steal time)
    # delays the run: its CPU seconds over the machine's cores are added to
    # the budget, so the budget judges the run, not the machine's load.
    ours = sum(r[3] for r in rows)
    others = 0.0
    started_cpu = os.environ.get("BURTORCH_CHECK_MACHINE_CPU")
    if os.environ.get("BURTORCH_CHECK_NO_LOAD_ALLOWANCE") == "1":
        started_cpu = None  # a test of the budget itself: judged without the allowance
    if started_cpu:
        others = max(0.0, run.machine_cpu() - float(started_cpu) - ours)
    cores = os.cpu_count() or 1
    allowance = int(round(others / cores))
    print("CPU seconds of the machine's other work during the run: %.0f (%d s over %d cores)"
          % (others, allowance, cores))
    # Under heavy load the run's own CPU seconds grow too (shared caches and
    # cores: 3,280 CPU s quiet became 3,860 at a load average of 7), which
    # no allowance measures: a run on a machine that other work kept more
    # than a tenth busy is reported, not judged. Quiet runs judge the budget.
    loaded = (total > 0) and (others > 0.10 * cores * total)
    if label in budget:
        limit, why = budget[label]
        print("budget of '%s': %d s (%s), + %d s for other work: %d s" % (label, limit, why, allowance,
                                                                          limit + allowance))
        if loaded and (total > limit + allowance):
            print("the run took %d s, %d s more than its budget, on a machine other work kept %.0f %% busy:"
                  " not judged (a quiet run judges it)" % (total, total - limit - allowance,
                                                           100.0 * others / (cores * total)))
            return 0
        if total > limit + allowance:
            print("FAIL: the run took %d s, %d s more than its budget (tools/check.d/budget.txt)"
                  % (total, total - limit - allowance))
            return 1
        print("within budget: %d s of %d s" % (total, limit + allowance))
    else:
        print("no budget for a run of '%s' (tools/check.d/budget.txt lists %s)" % (label, ", ".join(budget)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
