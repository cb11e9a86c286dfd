#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One consumption recipe per kind of install, the same in every document
# and in the stages that build it:
#   host install        find_package + -DCMAKE_PREFIX_PATH=P (stage 42)
#   Cortex-M install    -DCMAKE_TOOLCHAIN_FILE=P/share/burtorch/toolchains/cortex-mN.cmake
#                       -DCMAKE_PREFIX_PATH=P (stages 42, 44, 45)
#   Linux cross install -DCMAKE_TOOLCHAIN_FILE=P/share/burtorch/toolchains/
#                       aarch64-linux-gnu.cmake | arm-linux-gnueabihf.cmake
#                       -DCMAKE_PREFIX_PATH=P (stage 43)
#   Make                include $(BURTORCH_PREFIX)/share/burtorch/burtorch.mk (stage 44)
# Fails on a document (README.md, docs/*.md) that names burtorch_DIR, gives
# an installed toolchain file without -DCMAKE_PREFIX_PATH of the same
# prefix in the same command, or includes burtorch.mk another way; on a
# recipe no document shows; and on a stage that no longer builds its
# recipe this way. ~1 s.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$root"
python3 - <<'EOF'
import pathlib
import re
import sys

docs = [pathlib.Path("README.md")] + sorted(pathlib.Path("docs").glob("*.md"))
problems = []
seen = set()
toolchain = re.compile(r"-DCMAKE_TOOLCHAIN_FILE=(\S*?)/share/burtorch/toolchains/([A-Za-z0-9_.-]+)\.cmake")
for doc in docs:
    lines = doc.read_text().splitlines()
    for n, line in enumerate(lines):
        where = f"{doc}:{n + 1}"
        if "burtorch_DIR" in line:
            problems.append(f"{where}: burtorch_DIR (the recipe is -DCMAKE_PREFIX_PATH=<prefix>)")
        if re.search(r"^\s*-?include\s.*burtorch\.mk", line):
            if line.strip() != "include $(BURTORCH_PREFIX)/share/burtorch/burtorch.mk":
                problems.append(f"{where}: burtorch.mk included another way: {line.strip()}")
            else:
                seen.add("make")
        for m in toolchain.finditer(line):
            prefix, name = m.group(1), m.group(2)
            # The command: this line and the lines it continues into or from.
            start, end = n, n
            while start > 0 and lines[start - 1].rstrip().endswith("\\"):
                start -= 1
            while end + 1 < len(lines) and (lines[end].rstrip().endswith("\\") or lines[end + 1].lstrip().startswith("-D")):
                end += 1
            command = " ".join(lines[start:end + 1]).replace("`", " ")
            if not re.search(r"-DCMAKE_PREFIX_PATH=" + re.escape(prefix) + r"(\s|$)", command):
                problems.append(f"{where}: {name}.cmake of {prefix} without -DCMAKE_PREFIX_PATH={prefix}")
                continue
            seen.add("cortex-m" if name.startswith("cortex-m") else "linux-cross"
                     if name in ("aarch64-linux-gnu", "arm-linux-gnueabihf") else name)
        if re.search(r"find_package\(burtorch\b.*-DCMAKE_PREFIX_PATH=", line):
            seen.add("host")
for kind in ("host", "cortex-m", "linux-cross", "make"):
    if kind not in seen:
        problems.append(f"no document shows the {kind} recipe")

# The stages that build the recipes build them this way.
stage_forms = {
    "42-install-examples": [r'-DCMAKE_PREFIX_PATH="\$host"', r'-DCMAKE_PREFIX_PATH="\$m4"'],
    "43-cross-install": [r'-DCMAKE_TOOLCHAIN_FILE="\$tc" -DCMAKE_PREFIX_PATH="\$prefix"'],
    "44-make-firmware": [r"include \\\$\(BURTORCH_PREFIX\)/share/burtorch/burtorch\.mk",
                         r'-DCMAKE_TOOLCHAIN_FILE="\$tc" -DCMAKE_PREFIX_PATH="\$prefix"'],
    "45-firmware-on-use": [r'-DCMAKE_TOOLCHAIN_FILE="\$prefix/share/burtorch/toolchains/\$cpu\.cmake"'],
}
for stage, forms in stage_forms.items():
    text = pathlib.Path(f"tools/check.d/{stage}.sh").read_text()
    for form in forms:
        if not re.search(form, text):
            problems.append(f"tools/check.d/{stage}.sh no longer builds the recipe {form!r}")

for p in problems:
    print("FAIL:", p)
if problems:
    sys.exit(1)
print(f"docs-recipes: {len(docs)} documents, the recipes {', '.join(sorted(seen))} each in one form; "
      "stages 42-45 build them so")
EOF
