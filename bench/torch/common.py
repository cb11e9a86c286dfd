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


def ready():
    print("READY", flush=True)


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
