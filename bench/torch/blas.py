# SPDX-License-Identifier: Apache-2.0
"""Prints one JSON line: the BLAS this Python process's torch runs on
(common.blas_info). tools/bench runs it, with the PyTorch benchmarks'
environment, before any benchmark."""
import json

from common import blas_info

print(json.dumps({"bench": "blas", "blas": blas_info()}), flush=True)
