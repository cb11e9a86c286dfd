# SPDX-License-Identifier: Apache-2.0
"""The command line of the project's Python scripts that read sys.argv by
hand: check(__doc__) before anything slow is imported. -h/--help prints the
script's docstring (its usage) and exits 0; an option that the docstring
does not name exits 2 with one line. Positional arguments and negative
numbers pass."""
import os
import re
import sys


def check(doc, argv=None):
    argv = sys.argv[1:] if argv is None else argv
    text = (doc or "").strip()
    if "-h" in argv or "--help" in argv:
        print(text)
        sys.exit(0)
    known = set(re.findall(r"--[A-Za-z][A-Za-z0-9-]*", text))
    for arg in argv:
        if arg == "--":
            break
        if arg.startswith("-") and len(arg) > 1 and not (arg[1].isdigit() or arg[1] == ".") \
                and arg.split("=", 1)[0] not in known:
            sys.stderr.write("%s: unknown option %s (see --help)\n" % (os.path.basename(sys.argv[0]), arg))
            sys.exit(2)
