#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The library's gates on a user's translation units.

Code generated for a user (burtorch-import's model header, a compiled
training step) is compiled inside the user's units, where the library's
gates (tools/gates/gates.py, which analyse libburtorch.a) never see it.
This tool applies the same checks to named units of a user's build:

  1. recompiles each unit with its own compile command from the build's
     compile_commands.json, adding -fstack-usage -fcallgraph-info=su (no
     compiler cache: ccache does not restore .ci files);
  2. merges their call graphs with the library's, read from a preset tree
     the library's stage built with -DBURTORCH_ANALYSIS=ON (the same archive
     bytes the preset installs);
  3. checks what is reachable from the entry functions:
       recursion   no call cycle
       frames      no dynamic (unbounded) stack frame
       indirect    every indirect call in lib/ or include/burtorch/ carries
                   its `// BT-DEV-NNN` (the library's record); the user's
                   own are listed
       symbols     the units' objects reference no heap, exceptions, RTTI,
                   guards, atexit, libc I/O, time or process control
                   (gates.py's list)
       stack       the worst static depth of each entry (frames summed along
                   the deepest path, with gates.py's allowances for calls that
                   leave the build), at most --budget bytes when given.

Usage:
  unit_gates.py --preset cortex-m4 --build DIR --unit main.cpp [--unit ...]
                [--also FILE ...] --entry REGEX [--budget BYTES]
Exit status: 0 every check passed, 1 a finding, 2 a usage or tool error.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gates  # noqa: E402  (the library's gates: parsers, symbol list, deviations)

ANALYSIS = ["-fstack-usage", "-fcallgraph-info=su"]


def fail_usage(text: str) -> None:
    print(f"unit-gates: {text}", file=sys.stderr)
    raise SystemExit(2)


def unit_commands(build: Path, units: list[str], target: str | None) -> list[tuple[list[str], Path, Path]]:
    db = build / "compile_commands.json"
    if not db.exists():
        fail_usage(f"{db} is missing (configure with -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)")
    entries = json.loads(db.read_text())
    out = []
    for unit in units:
        hits = [e for e in entries if Path(e["file"]).name == unit or e["file"].endswith("/" + unit)]
        if target is not None:  # a source several targets compile: the target's own command
            hits = [e for e in hits if f"/{target}.dir/" in e.get("command", " ".join(e.get("arguments", [])))]
        if len(hits) != 1:
            fail_usage(f"{unit}: {len(hits)} entries in {db} (expected one)")
        e = hits[0]
        argv = e["arguments"] if "arguments" in e else shlex.split(e["command"])
        out.append((argv, Path(e["directory"]), Path(e["file"])))
    return out


def compile_unit(argv: list[str], cwd: Path, src: Path, work: Path, k: int) -> Path:
    argv = list(argv)
    while argv and Path(argv[0]).name in ("ccache", "sccache"):
        argv = argv[1:]
    obj = work / f"unit{k}.o"
    cmd, skip = [], False
    for a in argv:
        if skip:
            skip = False
            continue
        if a == "-o":
            skip = True
            continue
        if a.startswith("-o") and len(a) > 2:
            continue
        cmd.append(a)
    cmd += ANALYSIS + ["-o", str(obj)]
    res = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if res.returncode != 0:
        print(res.stdout)
        fail_usage(f"{src}: the unit did not compile with the analysis flags")
    ci = obj.with_suffix(".ci")
    if not ci.exists():
        fail_usage(f"{src}: GCC wrote no call graph ({ci})")
    return obj


def defined_globals(nm: str, files: list[Path]) -> set[str]:
    out = set()
    for f in files:
        res = subprocess.run([nm, "-P", "--defined-only", str(f)], stdout=subprocess.PIPE, text=True)
        for line in res.stdout.splitlines():
            parts = line.split()
            if len(parts) >= 2 and parts[1] in "TWVDRBiu" and not parts[0].endswith(":"):
                out.add(parts[0])
    return out


def load(ci_files: list[Path], external: set[str]) -> dict[str, gates.Node]:
    """Merges .ci files as gates.load_graph does: a function with external
    linkage is the same node in every unit (its bare symbol)."""

    def canon(title: str) -> str:
        if ":" in title:
            sym = title.rsplit(":", 1)[1]
            if sym in external:
                return sym
        return title

    return gates.read_graph(ci_files, canon)


def reachable(nodes: dict[str, gates.Node], roots: list[str]) -> set[str]:
    seen, todo = set(roots), list(roots)
    while todo:
        for c in nodes[todo.pop()].callees:
            if c not in seen:
                seen.add(c)
                todo.append(c)
    return seen


def depth_of(nodes: dict[str, gates.Node], root: str, allowance) -> tuple[int, list[str]]:
    memo: dict[str, tuple[int, list[str]]] = {}
    stack = [(root, False)]
    while stack:
        cur, expanded = stack.pop()
        if cur in memo:
            continue
        node = nodes[cur]
        if node.frame is None:
            memo[cur] = (allowance(cur), [cur + " (outside the build)"])
            continue
        if not expanded:
            stack.append((cur, True))
            stack.extend((c, False) for c in node.callees if c not in memo)
            continue
        best = (0, [])
        for c in sorted(node.callees):
            if memo[c][0] > best[0]:
                best = memo[c]
        memo[cur] = (node.frame + best[0], [cur] + best[1])
    return memo[root]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", required=True, help="the preset whose analysis tree holds the library's call graph")
    ap.add_argument("--library-tree", help="that tree (default: build/PRESET)")
    ap.add_argument("--build", required=True, type=Path, help="the user's build directory (compile_commands.json)")
    ap.add_argument("--unit", action="append", required=True, help="a source file of the build (name or path)")
    ap.add_argument("--target", help="the CMake target whose commands to take (a source several targets compile)")
    ap.add_argument("--also", action="append", default=[], type=Path,
                    help="another source compiled with the first unit's command (a planted check)")
    ap.add_argument("--entry", required=True, help="regex on the demangled names of the entry functions")
    ap.add_argument("--budget", type=int, help="worst stack depth allowed per entry, bytes")
    args = ap.parse_args()

    tree = Path(args.library_tree) if args.library_tree else gates.ROOT / "build" / args.preset
    lib_ci = sorted((tree / "CMakeFiles" / "burtorch.dir").rglob("*.ci"))
    archive = tree / "libburtorch.a"
    if not lib_ci or not archive.exists():
        fail_usage(f"{tree} holds no library call graph (its stage configures it with -DBURTORCH_ANALYSIS=ON)")
    cross = "arm-none-eabi-" if args.preset.startswith("cortex-m") else \
        {"aarch64-linux": "aarch64-linux-gnu-", "armv7-linux": "arm-linux-gnueabihf-"}.get(args.preset, "")
    nm = cross + "nm"

    with tempfile.TemporaryDirectory(prefix="unit-gates-") as tmp:
        work = Path(tmp)
        commands = unit_commands(args.build, args.unit, args.target)
        argv0, cwd0, src0 = commands[0]
        for extra in args.also:
            if not extra.exists():
                fail_usage(f"{extra}: no such file")
            swapped = [str(extra.resolve()) if a in (str(src0), src0.name) or a.endswith("/" + src0.name) else a
                       for a in argv0]
            commands.append((swapped, cwd0, extra.resolve()))
        objs = [compile_unit(argv, cwd, src, work, k) for k, (argv, cwd, src) in enumerate(commands)]
        external = defined_globals(nm, [archive] + objs)
        nodes = load(lib_ci + [o.with_suffix(".ci") for o in objs], external)
        names = gates.demangle(sorted({gates.symbol_of(k) for k in nodes}))
        entry_rx = re.compile(args.entry)
        roots = sorted(t for t, n in nodes.items() if n.frame is not None
                       and entry_rx.search(names.get(gates.symbol_of(t), t)))
        if not roots:
            fail_usage(f"no function defined in the units matches --entry {args.entry!r}")
        reach = reachable(nodes, roots)
        findings: list[str] = []

        # Recursion: cycles among what the entries reach.
        sub = {t: nodes[t] for t in reach}
        cycles = gates.strongly_connected(sub)
        for comp in cycles:
            findings.append("recursion: " + " -> ".join(names.get(gates.symbol_of(c), c) for c in comp))
        # Frames.
        for t in sorted(reach):
            n = nodes[t]
            if n.frame is not None and n.qualifier.startswith("dynamic") and n.qualifier != "dynamic,bounded":
                findings.append(f"unbounded dynamic stack frame: {names.get(gates.symbol_of(t), t)} ({n.where})")
        # Indirect calls.
        documented = gates.deviation_ids()
        users = []
        for t in sorted(reach):
            for s in sorted(nodes[t].indirect_sites):
                if s.startswith(("lib/", "include/burtorch/")):
                    dev = gates.site_deviation(s)
                    if dev is None or dev not in documented:
                        findings.append(f"indirect call without a recorded BT-DEV deviation: {s}")
                else:
                    users.append(s or "(no location)")
        # Symbols.
        n_syms = 0
        for o in objs:
            res = subprocess.run([nm, "-P", str(o)], stdout=subprocess.PIPE, text=True)
            for line in res.stdout.splitlines():
                parts = line.split()
                if len(parts) < 2:
                    continue
                n_syms += 1
                for rx, why in gates.FORBIDDEN_RE:
                    if rx.search(parts[0]):
                        findings.append(f"symbol {gates.demangle([parts[0]])[parts[0]]}: {why}")
        # Stack.
        _budgets, externals, default_external = gates.load_budget()

        def allowance(title: str) -> int:
            sym = gates.symbol_of(title)
            return next((b for rx, b in externals if rx.search(sym)), default_external)

        print(f"unit-gates: {args.preset}: {len(objs)} unit(s), {len(reach)} functions reachable from "
              f"{len(roots)} entr{'y' if len(roots) == 1 else 'ies'}, {n_syms} symbols checked")
        for r in roots:
            if cycles:
                print(f"  stack: {names.get(gates.symbol_of(r), r)}: unbounded (call cycles)")
                continue
            total, path = depth_of(nodes, r, allowance)
            name = names.get(gates.symbol_of(r), r)
            print(f"  stack: {name}: {total} B (deepest path {len(path)} calls)")
            if args.budget is not None and total > args.budget:
                chain = " -> ".join(names.get(gates.symbol_of(p.split(' ')[0]), p) for p in path)
                findings.append(f"stack of {name}: {total} B > budget {args.budget} B; path: {chain}")
        print(f"  indirect calls in the user's code (the user's to justify): {len(users)}")
        for s in users[:20]:
            print(f"    {s}")
        print(f"  findings: {len(findings)}")
        for f in findings:
            print(f"    {f}")
        return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
