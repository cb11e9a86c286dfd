#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks a SARIF file written by tools/burtorch-compliance.

  check_sarif.py clean FILE DEVIATIONS_JSON
      structure; no unsuppressed result; every suppression names a deviation
      of the record and sits in a file of ours; our headers were analysed
      (results suppressed by at least two deviations, in include/burtorch/
      only: a program does not compile lib/)
  check_sarif.py clean-sources FILE DEVIATIONS_JSON
      the same for a build that compiles the library's sources too (a
      Makefile over an install's share/burtorch/src): suppressions in
      include/burtorch/, lib/, port/ and targets/
  check_sarif.py planted FILE PLANTED_CPP
      structure; every rule listed after a `PLANTED:` marker in PLANTED_CPP is
      reported, unsuppressed, at that line (aliases of one clang-tidy check,
      such as cppcoreguidelines-avoid-c-arrays and hicpp-avoid-c-arrays, in
      one result that lists both); nothing in PLANTED_CPP is suppressed
Structure, for both: every run names its tool, version and invocation; every
rule has a short description and a help URI; every location (of results,
related locations, code flows, artifacts) is relative to a base of
originalUriBaseIds; one result per diagnostic (aliases folded).
Exit 0 when every check holds, 1 otherwise. Standard library only.
"""

from __future__ import annotations

import os as _os
import sys as _sys

_sys.path.insert(0, _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "..", "..", "tools"))
import cli  # noqa: E402 (tools/cli.py: --help, unknown options)

if __name__ == "__main__":
    cli.check(__doc__)

import json
import re
import sys
from pathlib import Path
from urllib.parse import unquote, urlparse


def fail(msg: str) -> None:
    print(f"check_sarif: FAIL: {msg}")
    sys.exit(1)


def artifact_locations(node) -> list[dict]:
    """Every artifactLocation under node, and the location of every entry
    of an artifacts array."""
    found = []
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, dict):
            for k, v in n.items():
                if k == "artifactLocation" and isinstance(v, dict):
                    found.append(v)
                elif k == "artifacts" and isinstance(v, list):
                    found += [a["location"] for a in v if isinstance(a, dict) and isinstance(a.get("location"), dict)]
                    stack += v
                    continue
                stack.append(v)
        elif isinstance(n, list):
            stack += n
    return found


def load(path: str) -> list[dict]:
    """Structure the kit promises beyond the schema (validate_sarif.py checks
    the schema): each run names its tool and version and the invocation
    (command line, success, exit code); each rule has a short description and
    a help URI; each location is relative to a base of originalUriBaseIds
    (SRCROOT for the user's files, BURTORCH* for ours)."""
    doc = json.loads(Path(path).read_text())
    if doc.get("version") != "2.1.0":
        fail(f"version is {doc.get('version')!r}, not '2.1.0'")
    if "sarif" not in str(doc.get("$schema", "")):
        fail("no SARIF $schema")
    runs = doc.get("runs")
    if not isinstance(runs, list) or not runs:
        fail("no runs")
    names = []
    results = []
    for run in runs:
        driver = run.get("tool", {}).get("driver", {})
        name = driver.get("name")
        if not name or not re.match(r"^\d+\.\d+", str(driver.get("version", ""))):
            fail(f"a run without tool.driver.name and a version: {name} {driver.get('version')}")
        names.append(name)
        if not any(e.get("name") == "burtorch-compliance" and e.get("version")
                   for e in run["tool"].get("extensions", [])):
            fail(f"{name}: the kit is not listed with its version in tool.extensions")
        inv = run.get("invocations", [{}])[0]
        if "burtorch-compliance" not in inv.get("commandLine", "") or "exitCode" not in inv or \
                not isinstance(inv.get("executionSuccessful"), bool):
            fail(f"{name}: invocation without commandLine, exitCode and executionSuccessful")
        bases = {k: v["uri"] for k, v in run.get("originalUriBaseIds", {}).items()}
        if not bases.get("SRCROOT", "").startswith("file:///") or not bases["SRCROOT"].endswith("/"):
            fail(f"{name}: no SRCROOT in originalUriBaseIds")
        # Every location anywhere in the run (results, related locations,
        # code flows, artifacts, notifications), not only each result's
        # first: relative to a base of originalUriBaseIds, never absolute.
        n_locations = 0
        for art in artifact_locations(run):
            n_locations += 1
            uri, base = art.get("uri", ""), art.get("uriBaseId")
            if base not in bases or uri.startswith(("/", "file:")) or ":" in uri.split("/")[0]:
                fail(f"{name}: a location not relative to a base of originalUriBaseIds: {base} {uri}")
        if run.get("results") and n_locations < len(run["results"]):
            fail(f"{name}: fewer locations than results")
        rules = {}
        for r in driver.get("rules", []):
            if not r.get("shortDescription", {}).get("text") or not str(r.get("helpUri", "")).startswith(
                    ("https://", "file:///")):
                fail(f"rule {r.get('id')} without shortDescription and helpUri")
            rules[r["id"]] = r
        for r in run.get("results", []):
            if not r.get("ruleId") or r["ruleId"] not in rules:
                fail(f"result without a ruleId of its driver's rules: {r.get('ruleId')}")
            if r.get("level") not in ("error", "warning", "note", "none"):
                fail(f"bad level {r.get('level')!r}")
            if not r.get("message", {}).get("text"):
                fail("result without message text")
            locs = r.get("locations")
            if not locs:
                fail(f"{r['ruleId']}: no locations")
            phys = locs[0].get("physicalLocation", {})
            art = phys.get("artifactLocation", {})
            uri, base = art.get("uri", ""), art.get("uriBaseId")
            line = phys.get("region", {}).get("startLine")
            if base not in bases or uri.startswith(("/", "file:")) or not isinstance(line, int) or line < 1:
                fail(f"{r['ruleId']}: location not relative to a base of originalUriBaseIds: {base} {uri}:{line}")
            origin = r.get("properties", {}).get("origin")
            if (origin == "ours") != base.startswith("BURTORCH") or (origin == "user") != (base in ("SRCROOT", "ROOT")):
                fail(f"{r['ruleId']}: {origin} result located under {base}")
            checks = r.get("properties", {}).get("checks")
            if not checks or checks[0] != r["ruleId"]:
                fail(f"{r['ruleId']}: properties.checks does not start with the ruleId")
            for s in r.get("suppressions", []):
                if s.get("kind") != "external" or not s.get("justification"):
                    fail(f"{r['ruleId']}: suppression without kind 'external' and a justification")
            r["_tool"] = name
            r["_path"] = unquote(urlparse(bases[base]).path) + unquote(uri)
            r["_line"] = line
            r["_checks"] = checks
            results.append(r)
    if sorted(names) != ["clang-tidy", "cppcheck"]:
        fail(f"runs are {names}, expected cppcheck and clang-tidy")
    # Aliases folded: one result per (tool, place, message).
    seen: dict[tuple, str] = {}
    for r in results:
        k = (r["_tool"], r["_path"], r["_line"], r["locations"][0]["physicalLocation"]["region"].get("startColumn"),
             r["message"]["text"])
        if k in seen:
            fail(f"two results for one diagnostic at {r['_path']}:{r['_line']}: {seen[k]} and {r['ruleId']}")
        seen[k] = r["ruleId"]
    return results


def check_clean(sarif: str, record: str, sources: bool = False) -> None:
    """Nothing unsuppressed, every suppression one of ours. sources: the
    build compiled the library's sources too (a Makefile over an install's
    share/burtorch/src), so suppressions must be found in lib/, port/ and
    targets/ as well as in the headers."""
    results = load(sarif)
    ids = {d["id"] for d in json.loads(Path(record).read_text())["deviations"]}
    open_ = [r for r in results if not r.get("suppressions")]
    for r in open_:
        print(f"  unsuppressed: {r['_path']}:{r['_line']}: {r['ruleId']}: {r['message']['text']}")
    if open_:
        fail(f"{len(open_)} unsuppressed results")
    used = {}
    for r in results:
        just = r["suppressions"][0]["justification"]
        m = re.match(r"^(BT-DEV-\d{3}): ", just)
        if not m or m.group(1) not in ids:
            fail(f"suppression justification {just[:60]!r} names no deviation of the record")
        if r.get("properties", {}).get("origin") != "ours":
            fail(f"suppressed result outside our files: {r['_path']}")
        used.setdefault(m.group(1), set()).add(r["properties"]["burtorchPath"].split("/")[0])
    where = set().union(*used.values()) if used else set()
    # The consumer includes the public headers and the tape's template
    # definitions (include/burtorch/core/detail/); lib/ is the library's
    # private directory, not on a program's include path.
    detail = any(r["properties"]["burtorchPath"].startswith("include/burtorch/core/detail/") for r in results)
    want = {"include", "lib", "port", "targets"} if sources else {"include"}
    if len(used) < 2 or where != want or not detail:
        fail(f"our headers do not look analysed: suppressions {sorted(used)} in {sorted(where)}"
             f" (in include/burtorch/core/detail/: {detail})")
    print(f"check_sarif: {sarif}: {len(results)} results, all suppressed by "
          + ", ".join(f"{k} ({len([r for r in results if r['suppressions'][0]['justification'].startswith(k)])})"
                      for k in sorted(used)))


def check_planted(sarif: str, planted: str) -> None:
    results = load(sarif)
    src = Path(planted).resolve()
    mine = [r for r in results if Path(r["_path"]).resolve() == src]
    bad = [r for r in mine if r.get("suppressions")]
    if bad:
        fail(f"{len(bad)} results in {src.name} suppressed, e.g. {bad[0]['ruleId']} at line {bad[0]['_line']}")
    missing = []
    n = 0
    for i, text in enumerate(src.read_text().splitlines(), 1):
        m = re.search(r"//\s*PLANTED:\s*(.*)$", text)
        if not m:
            continue
        for rule in m.group(1).split():
            n += 1
            if not any(rule in r["_checks"] and r["_line"] == i for r in mine):
                missing.append(f"{src.name}:{i}: {rule}")
    if n == 0:
        fail(f"no PLANTED markers in {src}")
    if missing:
        fail("planted violations not reported: " + ", ".join(missing))
    print(f"check_sarif: {sarif}: all {n} planted (line, rule) pairs reported, none suppressed; "
          f"{len(mine)} results in {src.name}")


def main() -> int:
    if len(sys.argv) != 4 or sys.argv[1] not in ("clean", "clean-sources", "planted"):
        print(__doc__)
        return 2
    if sys.argv[1] in ("clean", "clean-sources"):
        check_clean(sys.argv[2], sys.argv[3], sources=sys.argv[1] == "clean-sources")
    else:
        check_planted(sys.argv[2], sys.argv[3])
    return 0


if __name__ == "__main__":
    sys.exit(main())
