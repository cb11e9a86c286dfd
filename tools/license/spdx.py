#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Every source file of the project carries an SPDX license line near its top.

  tools/license/spdx.py           check: list the files without one, exit 1 if any
  tools/license/spdx.py --add     add the line where it is missing

Source files are the files git tracks, except prose and data that carry no
comments (Markdown, JSON, CSV, the fuzz corpus, LICENSE itself). The line
goes first, or after a '#!' line, in the file's own comment syntax."""
import os as _os
import sys as _sys

_sys.path.insert(0, _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), ".."))
import cli  # noqa: E402 (tools/cli.py: --help, unknown options)

if __name__ == "__main__":
    cli.check(__doc__)
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
ID = "SPDX-License-Identifier: Apache-2.0"
SKIP_SUFFIX = {".md", ".json", ".csv", ".bin", ".png", ".svg", ".txt.in"}
SKIP_NAMES = {"LICENSE"}
SKIP_DIRS = ("fuzz/corpus", "docs/img")


def comment_for(path):
    name = path.name
    suffix = path.suffix
    if suffix in {".cpp", ".hpp", ".h", ".c", ".cc", ".in"} and name.endswith((".hpp.in", ".h.in")):
        return "// " + ID
    if suffix in {".cpp", ".hpp", ".h", ".c", ".cc"}:
        return "// " + ID
    if suffix in {".S", ".ld"}:
        return "/* " + ID + " */"
    return "# " + ID  # CMake, Python, shell, YAML, package and budget lists


def tracked():
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, check=True, capture_output=True, text=True).stdout
    for rel in out.splitlines():
        path = ROOT / rel
        if (path.name in SKIP_NAMES or path.suffix in SKIP_SUFFIX or rel.startswith(SKIP_DIRS)
                or "".join(path.suffixes[-2:]) in SKIP_SUFFIX or not path.is_file()):
            continue
        yield rel, path


def has_line(text):
    return ID in "\n".join(text.splitlines()[:3])


def main(argv):
    add = argv[1:] == ["--add"]
    if argv[1:] not in ([], ["--add"]):
        print(__doc__)
        return 2
    missing = []
    for rel, path in tracked():
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
        if has_line(text):
            continue
        missing.append(rel)
        if add:
            line = comment_for(path) + "\n"
            if text.startswith("#!"):
                first, _, rest = text.partition("\n")
                text = first + "\n" + line + rest
            else:
                text = line + text
            path.write_text(text, encoding="utf-8", errors="surrogateescape")
    if missing and not add:
        print("files without '%s':" % ID)
        for rel in missing:
            print("  " + rel)
        return 1
    print("spdx: %d files %s" % (len(missing), "given the line" if add else "missing; all files carry it"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
