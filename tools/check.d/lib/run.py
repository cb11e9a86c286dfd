#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tools/check's runner: reads the stages of tools/check.d/, selects them by
name, runs them (two at a time where one of them keeps a single core busy)
and ends with "N passed, N failed". tools/check calls it after installing
the Debian packages; `tools/check --help` prints its usage.

A stage is tools/check.d/NN-name.sh, a bash script that exits 0 on success.
Its header comment (the lines after the SPDX line) starts with a sentence
saying what it checks, and names its place in the run:

  # suite: NAME         the suite it belongs to (tools/check.d/suites.txt)
  # after: STAGE ...    stages whose builds or outputs it reuses: run first
                        when both are selected (a stage still runs alone:
                        it builds what it needs)
  # jobs: 1             it keeps about one core busy on average (a fuzzer's
                        fixed time, QEMU, PyTorch, analysers, or a build
                        whose CPU seconds over its wall seconds stay under
                        1.5 in a full run, which 99-budget prints): it may
                        run beside another stage; without this line a stage
                        uses both cores and runs beside such stages only
  # trees: NAME ...     the build trees it writes (build/NAME): two stages
                        that write one tree never run at once

Only the Python standard library is used.
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
CHECK_D = ROOT / "tools" / "check.d"
LOGS = ROOT / "build" / "check-logs"
TIMES = ROOT / "build" / "check-times.txt"          # measured by the last runs here
DEFAULT_TIMES = CHECK_D / "times.txt"                # committed: a full run's times
SUITES = CHECK_D / "suites.txt"
BUDGET = CHECK_D / "budget.txt"
FIELD_RE = re.compile(r"^#\s*(suite|after|jobs|trees):\s*(.*?)\s*$")


class Stage:
    def __init__(self, path: Path):
        self.path = path
        self.name = path.stem                       # 23-cortex-m4
        self.short = self.name.split("-", 1)[1]     # cortex-m4
        self.number = self.name.split("-", 1)[0]
        self.suite = ""
        self.after: list[str] = []
        self.jobs = 2
        self.trees: list[str] = []
        comment = []
        for line in path.read_text().splitlines()[1:]:
            if not line.startswith("#"):
                break
            m = FIELD_RE.match(line)
            if m:
                key, value = m.groups()
                if key == "suite":
                    self.suite = value
                elif key == "after":
                    self.after += value.split()
                elif key == "jobs":
                    self.jobs = int(value)
                else:
                    self.trees += value.split()
            elif "SPDX-License-Identifier" not in line:
                comment.append(re.sub(r"^# ?", "", line))
        text = " ".join(" ".join(comment).split())
        m = re.match(r"^((?:[^.]|\.[^ ])*\.)(?: |$)", text)
        self.description = m.group(1) if m else text


def read_stages() -> list[Stage]:
    return [Stage(p) for p in sorted(CHECK_D.glob("*.sh"))]


def read_suites() -> dict[str, tuple[list[str], str]]:
    """suite -> (explicit stage list or [], description), in file order.
    `NAME -- why` is a suite of the stages that name it; `NAME: STAGE ... --
    why` a tier made of stages of other suites."""
    out: dict[str, tuple[list[str], str]] = {}
    for raw in SUITES.read_text().splitlines():
        if raw.startswith("#") or not raw.strip():
            continue
        body, _, why = raw.partition(" -- ")
        name, _, members = body.partition(":")
        out[name.strip()] = (members.split(), why.strip())
    return out


def read_budget() -> dict[str, tuple[int, str]]:
    out = {}
    for raw in BUDGET.read_text().splitlines():
        if raw.startswith("#") or not raw.strip():
            continue
        body, _, why = raw.partition(" -- ")
        name, seconds = body.split()
        out[name] = (int(seconds), why.strip())
    return out


def measured(name: str) -> int | None:
    for f in (TIMES, DEFAULT_TIMES):
        try:
            for line in f.read_text().splitlines():
                parts = line.split()
                if len(parts) == 2 and parts[0] == name and parts[1].isdigit():
                    return int(parts[1])
        except OSError:
            pass
    return None


def machine_cpu() -> float:
    """CPU seconds every process of the machine has used since boot (user,
    nice, system, interrupts and, on a virtual machine, steal): with a run's
    own CPU seconds, what other work took from the run (99-budget)."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    except OSError:
        return 0.0
    busy = [int(x) for x in fields[:3]] + [int(x) for x in fields[5:8]]  # not idle, not iowait
    return sum(busy) / float(os.sysconf("SC_CLK_TCK"))


def fmt(seconds: int | None) -> str:
    if seconds is None:
        return "?"
    return "%dm%02ds" % (seconds // 60, seconds % 60) if seconds >= 60 else "%ds" % seconds


def members(suite: str, stages: list[Stage], suites: dict) -> list[Stage]:
    explicit = suites[suite][0]
    if explicit:
        by_name = {s.name: s for s in stages}
        return [by_name[n] for n in explicit if n in by_name]
    return [s for s in stages if s.suite == suite]


USAGE = """usage: tools/check [-h|--help] [-l|--list] [--dry-run] [--serial] [NAME ...]

Runs the stages of tools/check.d/ (each a bash script that exits 0 on
success) and ends with "N passed, N failed"; exits 1 if a stage failed.
Without NAME, every stage: the full run CI makes. A NAME is a suite (below),
a stage by its full name (23-cortex-m4) or without its number (cortex-m4);
a NAME that is none of these is an error (exit 2). Stages run in number
order, two at a time where one of them keeps about one core busy (`# jobs:
1` in its header), never two that write one build tree at once; a stage
runs after the stages it reuses (`# after:`) when both are selected.
Before running, installs missing Debian packages listed in tools/deps/*.txt
(tools/install-deps; needs root). Compiles go through ccache
(build/ccache) when it is installed. Logs: build/check-logs/<stage>.log; a
passing stage's wall time in build/check-logs/<stage>.time and
build/check-times.txt. Stage 99-budget fails a full run (or a quick one)
that takes longer than tools/check.d/budget.txt allows.

  -h, --help   print this and exit (runs and installs nothing)
  -l, --list   list the suites, their stages and times, and exit
  --dry-run    print the stages the run would run, in order, and exit
  --serial     one stage at a time (to measure a stage alone)
"""


def listing(stages: list[Stage], suites: dict, budget: dict) -> str:
    lines = ["Suites and stages (time: the last run measured here, in build/check-times.txt, else a",
             "full run's in tools/check.d/times.txt; stages that run side by side take longer):", ""]
    for suite, (_, why) in suites.items():
        ms = members(suite, stages, suites)
        known = [measured(s.name) for s in ms]
        total = sum(t for t in known if t is not None)
        extra = ("; budget %s" % fmt(budget[suite][0])) if suite in budget else ""
        lines.append("%s (%d stages, %s%s): %s" % (suite, len(ms), fmt(total), extra, why))
        for s in ms:
            lines.append("  %-26s %6s  %s" % (s.name, fmt(measured(s.name)), s.description[:72]))
        lines.append("")
    if "all" in budget:
        lines.append("The full run: %d stages, budget %s (%s)" % (len(stages), fmt(budget["all"][0]), budget["all"][1]))
    return "\n".join(lines)


def select(args: list[str], stages: list[Stage], suites: dict) -> tuple[list[Stage], str] | None:
    if not args:
        return stages, "all"
    chosen: list[Stage] = []
    for a in args:
        if a == "all":
            found = stages
        elif a in suites:
            found = members(a, stages, suites)
        else:
            found = [s for s in stages if a in (s.name, s.short)]
        if not found:
            print("tools/check: no suite or stage is named '%s' (tools/check --list shows them)" % a, file=sys.stderr)
            return None
        chosen += [s for s in found if s not in chosen]
    order = {s.name: i for i, s in enumerate(stages)}
    chosen.sort(key=lambda s: order[s.name])
    # The budget stage ends every run of more than one stage.
    budget = [s for s in stages if s.name == "99-budget"]
    if budget and budget[0] not in chosen and len(chosen) > 1:
        chosen.append(budget[0])
    label = " ".join(args)
    return chosen, ("all" if set(chosen) == set(stages) else label)


def run(chosen: list[Stage], label: str, serial: bool) -> int:
    LOGS.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    start = time.time()
    env["BURTORCH_CHECK_RUN"] = label
    env["BURTORCH_CHECK_STARTED"] = "%.3f" % start
    env["BURTORCH_CHECK_MACHINE_CPU"] = "%.1f" % machine_cpu()
    env["BURTORCH_CHECK_STAGES"] = " ".join(s.name for s in chosen)
    run_times = LOGS / "run-times.txt"
    run_times.write_text("")
    env["BURTORCH_CHECK_RUN_TIMES"] = str(run_times)
    if subprocess.run(["sh", "-c", "command -v ccache"], stdout=subprocess.DEVNULL).returncode == 0:
        env.setdefault("CCACHE_DIR", str(ROOT / "build" / "ccache"))
        env.setdefault("CCACHE_BASEDIR", str(ROOT))
        env.setdefault("CCACHE_MAXSIZE", "8G")
        env.setdefault("CMAKE_C_COMPILER_LAUNCHER", "ccache")
        env.setdefault("CMAKE_CXX_COMPILER_LAUNCHER", "ccache")
    names = {s.name for s in chosen}
    pending = list(chosen)
    running: dict[str, tuple[Stage, subprocess.Popen, float]] = {}
    done: dict[str, bool] = {}
    passed = failed = 0
    failed_names: list[str] = []

    def ready(s: Stage) -> bool:
        if s.name == "99-budget":
            return not running and all(p is s for p in pending)
        if any(a in names and a not in done for a in s.after):
            return False
        busy_trees = {t for r, _, _ in running.values() for t in r.trees}
        if busy_trees & set(s.trees):
            return False
        if not running:
            return True
        if serial or len(running) >= 2:
            return False
        other = next(iter(running.values()))[0]
        return other.jobs == 1 or s.jobs == 1

    def start_stage(s: Stage) -> None:
        log = open(LOGS / (s.name + ".log"), "w")
        p = subprocess.Popen(["bash", str(s.path)], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=env,
                             start_new_session=True)
        log.close()
        running[s.name] = (s, p, time.time())

    def finish(s: Stage, rc: int, t0: float, cpu: float) -> None:
        nonlocal passed, failed
        seconds = int(round(time.time() - t0))
        done[s.name] = rc == 0
        with open(run_times, "a") as f:  # stage, wall seconds, exit code, CPU seconds (the stage's processes)
            f.write("%s %d %d %d\n" % (s.name, seconds, rc, int(round(cpu))))
        if rc == 0:
            passed += 1
            print("== %-28s ok     (%ss)" % (s.name, seconds), flush=True)
            old = [l for l in (TIMES.read_text().splitlines() if TIMES.exists() else [])
                   if l.split()[:1] != [s.name]]
            TIMES.write_text("\n".join(sorted(old + ["%s %d" % (s.name, seconds)])) + "\n")
            load = Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "?"
            (LOGS / (s.name + ".time")).write_text("%d %s %s\n" % (seconds, load, time.strftime("%Y-%m-%d",
                                                                                             time.gmtime())))
        else:
            failed += 1
            failed_names.append(s.name)
            print("== %-28s FAILED (%ss) - last lines of build/check-logs/%s.log:" % (s.name, seconds, s.name))
            tail = (LOGS / (s.name + ".log")).read_text(errors="replace").splitlines()[-40:]
            print("\n".join("   | " + l for l in tail), flush=True)

    def stop(*_: object) -> None:
        for _, p, _ in running.values():
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        sys.exit(130)

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    while pending or running:
        started = True
        while started:
            started = False
            for s in pending:
                if ready(s):
                    pending.remove(s)
                    start_stage(s)
                    started = True
                    break
        if not running and pending:  # nothing can start: a dependency cycle in the headers
            s = pending.pop(0)
            start_stage(s)
            continue
        time.sleep(0.2)
        for name, (s, p, t0) in list(running.items()):
            pid, status, usage = os.wait4(p.pid, os.WNOHANG)
            if pid != 0:
                del running[name]
                p.returncode = os.waitstatus_to_exitcode(status)
                finish(s, p.returncode, t0, usage.ru_utime + usage.ru_stime)
    total = int(round(time.time() - start))
    if label == "all" and failed == 0:
        # The full run's wall time, beside the stages' (README's figure is
        # checked against the committed copy, tools/check.d/times.txt).
        old = [l for l in (TIMES.read_text().splitlines() if TIMES.exists() else []) if l.split()[:1] != ["all"]]
        TIMES.write_text("\n".join(sorted(old + ["all %d" % total])) + "\n")
    print("tools/check: %ds; logs in build/check-logs/" % total)
    if failed_names:
        print("failed stages: " + " ".join(failed_names))
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


def main(argv: list[str]) -> int:
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `tools/check --list | head` ends quietly
    stages = read_stages()
    suites = read_suites()
    budget = read_budget()
    serial = dry = False
    names = []
    for a in argv:
        if a in ("-h", "--help"):
            print(USAGE + "\n" + listing(stages, suites, budget))
            return 0
        if a in ("-l", "--list"):
            print(listing(stages, suites, budget))
            return 0
        if a == "--serial":
            serial = True
        elif a == "--dry-run":
            dry = True
        elif a.startswith("-"):
            print("tools/check: unknown option %s" % a, file=sys.stderr)
            print(USAGE, file=sys.stderr)
            return 2
        else:
            names.append(a)
    picked = select(names, stages, suites)
    if picked is None:
        return 2
    chosen, label = picked
    if dry:
        print(" ".join(s.name for s in chosen))
        return 0
    install = subprocess.run(["bash", str(ROOT / "tools" / "install-deps")], cwd=ROOT)
    if install.returncode != 0:
        print("tools/check: could not install dependencies")
        print("0 passed, 1 failed")
        return 1
    return run(chosen, label, serial)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
