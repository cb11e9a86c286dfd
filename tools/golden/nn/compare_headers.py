# SPDX-License-Identifier: Apache-2.0
"""Compares two generated golden headers number by number:
  compare_headers.py COMMITTED FRESH REL_TOL
Same names, same lengths, every value within REL_TOL (relative, with an
absolute floor of REL_TOL * 1e-3). Exit 1 on any difference."""
import os as _os
import sys as _sys

_sys.path.insert(0, _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "..", ".."))
import cli  # noqa: E402 (tools/cli.py: --help, unknown options)

if __name__ == "__main__":
    cli.check(__doc__)
import re
import sys


def parse(path):
    text = open(path).read()
    out = {}
    for m in re.finditer(r"constexpr [a-z ]+ (\w+)(\[\])? = \{?([^;]*?)\}?;", text, re.S):
        vals = [v.strip().rstrip("ULL") for v in m.group(3).replace("\n", " ").split(",") if v.strip()]
        out[m.group(1)] = [float(v) for v in vals]
    return out


def main():
    a, b, tol = parse(sys.argv[1]), parse(sys.argv[2]), float(sys.argv[3])
    bad = 0
    if sorted(a) != sorted(b):
        print("different names:", sorted(set(a) ^ set(b)))
        return 1
    worst = 0.0
    for name in a:
        if len(a[name]) != len(b[name]):
            print("%s: %d vs %d values" % (name, len(a[name]), len(b[name])))
            bad += 1
            continue
        for x, y in zip(a[name], b[name]):
            d = abs(x - y) / max(abs(x), 1e-3)
            worst = max(worst, d)
            if d > tol:
                print("%s: %r vs %r" % (name, x, y))
                bad += 1
                break
    print("%s vs %s: %d arrays, worst relative difference %.3g, %d mismatches" % (sys.argv[1], sys.argv[2], len(a),
                                                                                 worst, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
