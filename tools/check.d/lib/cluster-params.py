#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# examples/cluster_mlp's final parameters (its "params" line) against a
# reference run's: cluster-params.py BOUND LABEL REFERENCE OUTPUT...
# prints each output's largest parameter difference from REFERENCE and
# exits 1 past BOUND (or on a run with no params line, or another count).
# Stages 43 and 55.
import sys


def params(path):
    rows = [line for line in open(path) if line.startswith("params ")]
    if len(rows) != 1:
        sys.exit(f"FAIL: {path}: no params line")
    return [float(v) for v in rows[0].split()[1].split(",")]


bound, label, reference, outputs = float(sys.argv[1]), sys.argv[2], params(sys.argv[3]), sys.argv[4:]
failed = False
for path in outputs:
    got = params(path)
    if len(got) != len(reference):
        sys.exit(f"FAIL: {path}: {len(got)} parameters, {len(reference)} in {sys.argv[3]}")
    gap = max(abs(a - b) for a, b in zip(got, reference))
    print(f"  cluster_mlp {path.rsplit('/', 1)[-1]}: largest parameter difference from {label} {gap:.3g} "
          f"({len(got)} parameters; bound {bound:g})")
    failed = failed or not (gap <= bound)
sys.exit(1 if failed else 0)
