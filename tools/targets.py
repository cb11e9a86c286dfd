#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The target registry (targets/targets.json) for the tools and check stages.

  tools/targets.py [--kind host|linux|mcu] [--field NAME]   one line per target
  tools/targets.py --check                                    the registry agrees
                                                              with CMakePresets.json,
                                                              tools/check.d and targets/boards/

Python tools import it: `from targets import TARGETS, by_kind` (tools/ on sys.path).
"""
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
with open(os.path.join(ROOT, "targets", "targets.json")) as _f:
    TARGETS = json.load(_f)["targets"]


def by_kind(*kinds):
    """The registry's entries of these kinds, in registry order."""
    return [t for t in TARGETS if t["kind"] in kinds]


def presets(*kinds):
    return [t["preset"] for t in (by_kind(*kinds) if kinds else TARGETS)]


def check():
    """Findings: entries without their preset, stage or board; stages and
    boards without an entry."""
    findings = []
    with open(os.path.join(ROOT, "CMakePresets.json")) as f:
        cmake = json.load(f)
    configure = {p["name"] for p in cmake["configurePresets"]}
    workflows = {p["name"] for p in cmake.get("workflowPresets", [])}
    stages = {os.path.splitext(n)[0] for n in os.listdir(os.path.join(ROOT, "tools", "check.d")) if n.endswith(".sh")}
    boards = {n for n in os.listdir(os.path.join(ROOT, "targets", "boards")) if n != "cortex-m"}
    for t in TARGETS:
        if t["preset"] not in configure:
            findings.append("%s: no configure preset of that name in CMakePresets.json" % t["preset"])
        if t["kind"] != "host" and t["preset"] not in workflows:
            findings.append("%s: no workflow preset (its stage runs `cmake --workflow --preset`)" % t["preset"])
        if t["stage"] not in stages:
            findings.append("%s: its stage tools/check.d/%s.sh does not exist" % (t["preset"], t["stage"]))
        elif t["kind"] != "host":
            text = open(os.path.join(ROOT, "tools", "check.d", t["stage"] + ".sh")).read()
            if "--preset %s" % t["preset"] not in text:
                findings.append("%s: tools/check.d/%s.sh does not build that preset" % (t["preset"], t["stage"]))
        if t["kind"] == "mcu" and not os.path.isfile(os.path.join(ROOT, "targets", "boards", t["board"], "board.cmake")):
            findings.append("%s: no targets/boards/%s/board.cmake" % (t["preset"], t["board"]))
    listed = {t.get("board") for t in TARGETS}
    for b in sorted(boards - listed):
        findings.append("targets/boards/%s: a board no registry entry names" % b)
    for s in sorted(stages):
        if s[:2] in ("20", "21", "22", "23", "24", "25", "26") and s not in {t["stage"] for t in TARGETS}:
            findings.append("tools/check.d/%s.sh: a target stage no registry entry names" % s)
    return findings


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description="The target registry (targets/targets.json).")
    ap.add_argument("--kind", choices=["host", "linux", "mcu"], action="append", help="only targets of this kind")
    ap.add_argument("--field", default="preset", help="the field to print (default: preset)")
    ap.add_argument("--check", action="store_true", help="check the registry against the tree; exit 1 on a finding")
    args = ap.parse_args(argv[1:])
    if args.check:
        findings = check()
        for f in findings:
            print("targets: " + f)
        print("targets: %d target(s), %d finding(s)" % (len(TARGETS), len(findings)))
        return 1 if findings else 0
    for t in (by_kind(*args.kind) if args.kind else TARGETS):
        value = t.get(args.field)
        if value is None:
            print("targets.py: %s has no field %s" % (t["preset"], args.field), file=sys.stderr)
            return 2
        print(" ".join(value) if isinstance(value, list) else value)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
