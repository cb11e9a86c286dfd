# SPDX-License-Identifier: Apache-2.0
"""Shared helpers of the PyTorch side of the benchmarks (bench/torch/*.py).

Every script runs with torch.set_num_threads(1) (one core, as libburtorch;
tools/bench also sets OPENBLAS_NUM_THREADS, OMP_NUM_THREADS and
MKL_NUM_THREADS to 1), prints READY once initialisation is over (tools/bench
timestamps it) and then one JSON line with its results, in the same fields
as the C++ side, plus "blas": the BLAS this very process runs on.
"""
import ctypes
import json
import os
import re
import statistics
import sys
import time

# The running script's command line (tools/cli.py): --help prints its
# docstring without loading torch; an option it does not name exits 2.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import cli  # noqa: E402

if getattr(sys.modules.get("__main__"), "__file__", None) and \
        os.path.dirname(os.path.abspath(sys.modules["__main__"].__file__)) == os.path.dirname(os.path.abspath(__file__)):
    cli.check(sys.modules["__main__"].__doc__)

# One BLAS thread, as tools/bench sets them (read when torch loads the BLAS).
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import torch  # noqa: E402 (after the environment above)

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


_BLAS = None


def _blas_from_maps():
    """The BLAS library mapped into this process, from /proc/self/maps:
    (name, path). Debian's reference BLAS is .../blas/libblas.so.3; the
    alternatives (OpenBLAS, BLIS, MKL) map a library with their own name."""
    try:
        with open("/proc/self/maps") as f:
            paths = sorted({line.split()[-1] for line in f if "/" in line})
    except OSError:
        return None, None
    for path in paths:
        base = os.path.basename(path)
        for pattern, name in ((r"^libopenblas", "openblas"), (r"^libmkl_rt|^libmkl_core", "mkl"),
                              (r"^libblis", "blis"), (r"^libflexiblas", "flexiblas")):
            if re.search(pattern, base):
                return name, path
    for path in paths:
        if re.search(r"^lib(c)?blas\.so", os.path.basename(path)):
            real = os.path.realpath(path)
            # libblas.so.3 of another implementation lives in its own directory
            # (Debian: openblas-pthread/, blis-openmp/, ...); blas/ is netlib's.
            if _is_reference(real):
                return "reference", real
            return os.path.basename(os.path.dirname(real)), real
    return None, None


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p), ("dli_sname", ctypes.c_char_p),
                ("dli_saddr", ctypes.c_void_p)]


def _sgemm_provider():
    """The library whose sgemm_ torch's CPU library binds to (dlsym in
    libtorch_cpu's scope, then dladdr): with OpenBLAS only mapped through
    liblapack.so.3, libblas.so.3 may still be the reference one."""
    try:
        with open("/proc/self/maps") as f:
            torch_cpu = sorted({line.split()[-1] for line in f if "libtorch_cpu" in line})
        if not torch_cpu:
            return None
        addr = ctypes.cast(ctypes.CDLL(torch_cpu[0]).sgemm_, ctypes.c_void_p).value
        info = _DlInfo()
        if ctypes.CDLL(None).dladdr(ctypes.c_void_p(addr), ctypes.byref(info)) == 0 or not info.dli_fname:
            return None
        return os.path.realpath(info.dli_fname.decode())
    except (OSError, AttributeError):
        return None


def _is_reference(path):
    """Debian's netlib BLAS: .../blas/libblas.so.3*."""
    return bool(path) and os.path.basename(os.path.dirname(path)) == "blas" and \
        os.path.basename(path).startswith("libblas.so")


def blas_info():
    """Which BLAS this process's torch calls, and how: name (openblas, mkl,
    blis, reference, ...), version, kernel (the core type OpenBLAS chose),
    threads, library path, and how it was found (threadpoolctl, or this
    process's own mappings when threadpoolctl is missing or does not know the
    library, as for the reference BLAS). Cached per process."""
    global _BLAS
    if _BLAS is not None:
        return _BLAS
    torch.mm(torch.ones(2, 2), torch.ones(2, 2))  # make sure the BLAS is loaded
    info = {"name": None, "version": None, "kernel": None, "threads": None, "library": None, "source": None}
    if not os.environ.get("BURTORCH_BENCH_NO_THREADPOOLCTL"):
        try:
            from threadpoolctl import threadpool_info
            for m in threadpool_info():
                if m.get("user_api") == "blas":
                    info.update(name=m.get("internal_api"), version=m.get("version"), kernel=m.get("architecture"),
                                threads=m.get("num_threads"), library=m.get("filepath"), source="threadpoolctl")
                    break
        except ImportError:
            pass
    if info["name"] is None:
        name, path = _blas_from_maps()
        info.update(name=name, library=path, source="/proc/self/maps")
        if name == "openblas" and path:
            m = re.search(r"-r(\d+(?:\.\d+)+)", os.path.basename(path))
            info["version"] = m.group(1) if m else None
            try:
                lib = ctypes.CDLL(path)
                lib.openblas_get_corename.restype = ctypes.c_char_p
                info["kernel"] = lib.openblas_get_corename().decode()
                info["threads"] = int(lib.openblas_get_num_threads())
            except (OSError, AttributeError):
                pass
    # What sgemm_ resolves to decides; a BLAS that is only mapped does not.
    info["sgemm"] = _sgemm_provider()
    if _is_reference(info["sgemm"]) or (info["sgemm"] is None and _is_reference(info["library"])):
        if info["name"] not in (None, "reference"):
            info["note"] = "%s is mapped, but sgemm_ is the reference BLAS's" % info["name"]
        info.update(name="reference", version=None, kernel=None, threads=1, library=info["sgemm"] or info["library"],
                    source="dladdr of sgemm_" if info["sgemm"] else info["source"])
    info["torch_threads"] = torch.get_num_threads()
    info["env"] = {k: os.environ[k] for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                                               "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if k in os.environ}
    _BLAS = info
    return info


def emit(record):
    record.setdefault("impl", "pytorch")
    record.setdefault("peak_rss_bytes", peak_rss_bytes())
    record.setdefault("torch", torch.__version__)
    record.setdefault("blas", blas_info())
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
