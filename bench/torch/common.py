# SPDX-License-Identifier: Apache-2.0
"""Shared helpers of the PyTorch side of the benchmarks (bench/torch/*.py).

Every script runs with torch.set_num_threads(1) (one core, as libburtorch),
prints READY once initialisation is over (tools/bench timestamps it) and
then one JSON line with its results, in the same fields as the C++ side.
"""
import json
import statistics
import sys
import time

import torch

torch.set_num_threads(1)
torch.set_num_interop_threads(1)


def now():
    return time.perf_counter()


def quantiles(values):
    """Median and nearest-rank p10/p90, as bench/bench_util.hpp."""
    v = sorted(values)
    n = len(v)
    median = statistics.median(v)
    return median, v[(n - 1) // 10], v[((n - 1) * 9 + 9) // 10]


def timing(values, unit):
    """The JSON fields median_<unit>, p10_<unit>, p90_<unit> of `values`."""
    median, p10, p90 = quantiles(values)
    return {"median_" + unit: median, "p10_" + unit: p10, "p90_" + unit: p90}


def ready():
    """Prints READY; returns the time just before it."""
    t = now()
    print("READY", flush=True)
    return t


def peak_rss_bytes():
    """VmHWM of /proc/self/status: this process's own peak resident set."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def emit(record):
    record.setdefault("impl", "pytorch")
    record.setdefault("peak_rss_bytes", peak_rss_bytes())
    record.setdefault("torch", torch.__version__)
    print(json.dumps(record), flush=True)


def flag(name, default, cast=str):
    """--name value from sys.argv (no argparse: keeps start-up minimal)."""
    argv = sys.argv[1:]
    for i, a in enumerate(argv):
        if a == name and i + 1 < len(argv):
            return cast(argv[i + 1])
    return default


def step_flags(lr):
    """The flags of the SGD-step benchmarks (as bench/bench_train.hpp):
    --batch, --steps, --warmup, --lr (default `lr`), --data (None: generated)."""
    return (flag("--batch", 1, int), flag("--steps", 20, int), flag("--warmup", 2, int), flag("--lr", lr, float),
            flag("--data", None))


class Steps:
    """Times warmup + steps SGD steps, as bench_train.hpp's time_sgd_steps:
    prints READY, then per step, timed: step_loss() (draws a random batch,
    forward to the fused cross-entropy), zero_grad(set_to_none=True),
    backward, opt.step(). Keeps the times of the last `steps` (ms)."""

    def __init__(self, t_start, opt, step_loss, warmup, steps):
        self.init_ms = (ready() - t_start) * 1e3
        self.times = []
        self.first_loss = self.last_loss = 0.0
        for step in range(warmup + steps):
            t0 = now()
            loss = step_loss()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            t1 = now()
            value = loss.item()
            if step == 0:
                self.first_loss = value
            self.last_loss = value
            if step >= warmup:
                self.times.append((t1 - t0) * 1e3)

    def fields(self):
        """median_ms, p10_ms, p90_ms, init_ms, first_loss, last_loss."""
        return dict(timing(self.times, "ms"), init_ms=self.init_ms, first_loss=self.first_loss,
                    last_loss=self.last_loss)
