# SPDX-License-Identifier: Apache-2.0
"""PyTorch side of rows 1 and 2: the paper's tiny graph (Fig. 1, 1e5
iterations) and small graph (Fig. 2, micrograd's example, 2e4 iterations)
in FP64, eager mode: build + backward per iteration, as bench_graphs.

Usage: graphs.py --graph tiny|small [--iterations N] [--runs R] [--callgrind LIB]
  --callgrind LIB  under valgrind --tool=callgrind --instr-atstart=no: load
                   LIB (bench/torch/cgtoggle.c, built by tools/bench) and
                   instrument only the --iterations builds after a warm-up;
                   no timing.
"""
import ctypes

import common  # noqa: F401 (first: one BLAS thread before torch loads the BLAS)
import torch

from common import emit, flag, now, ready, timing

F64 = torch.float64


def tiny():
    a = torch.tensor(-41.0, dtype=F64, requires_grad=True)
    b = torch.tensor(2.0, dtype=F64, requires_grad=True)
    c = a + b
    d = a * b + b**3
    e = c - d
    f = e**2
    g = f / 2.0
    g.backward()
    return a.grad


def small():
    a = torch.tensor(-4.0, dtype=F64, requires_grad=True)
    b = torch.tensor(2.0, dtype=F64, requires_grad=True)
    c = a + b
    d = a * b + b**3
    c = c + c + 1
    c = c + 1 + c + (-a)
    d = d + d * 2 + (b + a).relu()
    d = d + 3 * d + (b - a).relu()
    e = c - d
    f = e**2
    g = f / 2.0
    g = g + 10.0 / f
    g.backward()
    return a.grad


def main():
    graph = flag("--graph", "tiny")
    build = tiny if graph == "tiny" else small
    default_iterations = 100000 if graph == "tiny" else 20000
    iterations = flag("--iterations", default_iterations, int)
    runs = flag("--runs", 3, int)
    # The values are those of the C++ side (and of the paper's worked example).
    expected = -35.0 if graph == "tiny" else 138.83381924198252
    got = float(build())
    if abs(got - expected) > 1e-9 * abs(expected):
        raise SystemExit("wrong gradient: %r" % got)
    ready()
    for _ in range(max(1, iterations // 10)):  # warm-up
        build()
    toggle = flag("--callgrind", None)
    if toggle is not None:
        lib = ctypes.CDLL(toggle)
        lib.bt_callgrind_start()
        for _ in range(iterations):
            build()
        lib.bt_callgrind_stop()
        emit({"bench": graph, "iterations": iterations, "callgrind": True})
        return
    times = []
    for _ in range(runs):
        t0 = now()
        for _ in range(iterations):
            build()
        times.append((now() - t0) / iterations * 1e9)
    emit({"bench": graph, "iterations": iterations, "runs": runs, **timing(times, "ns"), "samples": times})


if __name__ == "__main__":
    main()
