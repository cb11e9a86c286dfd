# SPDX-License-Identifier: Apache-2.0
"""Golden data is computed by PyTorch on the netlib reference BLAS.

Debian's python3-torch calls whatever libblas.so.3 the system's alternatives
point at. OpenBLAS (which the benchmarks install, as a PyTorch user has it)
chooses its kernels by CPU and rounds sums in another order, so golden
headers made with it differ in the last digits from machine to machine. The
reference BLAS gives the same bits on every x86-64 CPU: every generator
calls ensure() before importing torch, which restarts the script once with
the reference BLAS first on the library path (when Debian's libblas3 is
installed; otherwise it says so and goes on with what there is)."""
import os
import sys

REFERENCE_DIRS = ("/usr/lib/x86_64-linux-gnu/blas", "/usr/lib/aarch64-linux-gnu/blas")
MARK = "BURTORCH_REFERENCE_BLAS"


def ensure():
    if os.environ.get(MARK) == "1":
        return
    for d in REFERENCE_DIRS:
        if os.path.exists(os.path.join(d, "libblas.so.3")):
            env = dict(os.environ)
            env[MARK] = "1"
            env["LD_LIBRARY_PATH"] = d + ((":" + env["LD_LIBRARY_PATH"]) if env.get("LD_LIBRARY_PATH") else "")
            os.execve(sys.executable, [sys.executable] + sys.argv, env)
    sys.stderr.write("reference_blas: Debian's libblas3 (netlib reference BLAS) not found; golden data "
                     "will follow whatever BLAS is installed\n")
