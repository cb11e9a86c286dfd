#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Validates SARIF files against the SARIF 2.1.0 JSON schema.

  validate_sarif.py SCHEMA FILE...

Draft-04 validation with format checks (jsonschema, Debian python3-jsonschema).
Prints each violation (the JSON path and the schema's message); exit 0 when
every file is valid, 1 when one is not, 2 when jsonschema is missing.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

try:
    import jsonschema
except ImportError:
    print("validate_sarif: the jsonschema package is missing (Debian: python3-jsonschema)")
    sys.exit(2)


def main(argv: list[str]) -> int:
    if argv[:1] in (["-h"], ["--help"]):
        print(__doc__)
        return 0
    if argv[:1] and argv[0].startswith("-"):
        sys.stderr.write("%s: unknown option %s (see --help)\n" % (Path(sys.argv[0]).name, argv[0]))
        return 2
    if len(argv) < 2:
        print(__doc__)
        return 2
    with open(argv[0]) as f:
        schema = json.load(f)
    jsonschema.Draft4Validator.check_schema(schema)
    validator = jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker())
    bad = 0
    for path in argv[1:]:
        with open(path) as f:
            doc = json.load(f)
        errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
        for e in errors[:20]:
            where = "/".join(str(p) for p in e.absolute_path) or "(root)"
            print(f"validate_sarif: {path}: {where}: {e.message[:300]}")
        if errors:
            bad += 1
            print(f"validate_sarif: {path}: INVALID ({len(errors)} violations of the SARIF 2.1.0 schema)")
        else:
            n = sum(len(run.get("results", [])) for run in doc.get("runs", []))
            print(f"validate_sarif: {path}: valid SARIF 2.1.0 ({len(doc.get('runs', []))} runs, {n} results)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
