# SPDX-License-Identifier: Apache-2.0
"""PyTorch side of row 3 (paper Table 4): save and load the small graph's 7
values (FP64) to a file and back, 5,000 iterations, as bench_io. The
idiomatic fast way: one 7-element tensor, torch.save / torch.load.

Usage: io.py --file PATH [--iterations N] [--runs R]
"""
import os

import common  # noqa: F401 (first: one BLAS thread before torch loads the BLAS)
import torch

from common import emit, flag, now, quantiles, ready, timing


def main():
    path = flag("--file", "bench_io.pt")
    iterations = flag("--iterations", 5000, int)
    runs = flag("--runs", 5, int)
    values = torch.tensor([-4.0, 2.0, -2.0, -8.0, 8.0, 0.0, -8.0], dtype=torch.float64)
    ready()
    save_us, load_us, both_us = [], [], []
    for _ in range(runs):
        t_save = t_load = 0.0
        for _ in range(iterations):
            t0 = now()
            torch.save(values, path)
            t1 = now()
            back = torch.load(path)
            t2 = now()
            t_save += t1 - t0
            t_load += t2 - t1
        if not torch.equal(back, values):
            raise SystemExit("load returned other values")
        save_us.append(t_save / iterations * 1e6)
        load_us.append(t_load / iterations * 1e6)
        both_us.append((t_save + t_load) / iterations * 1e6)
    file_bytes = os.path.getsize(path)
    os.remove(path)
    emit({"bench": "io", "iterations": iterations, "runs": runs, "values": 7,
          "save_us": quantiles(save_us)[0], "load_us": quantiles(load_us)[0],
          **timing(both_us, "us"), "file_bytes": file_bytes, "samples": both_us})


if __name__ == "__main__":
    main()
