# SPDX-License-Identifier: Apache-2.0
# burtorch-cnn against PyTorch: its first 60 steps (SGD and Adam, --print-every
# 1) equal a PyTorch FP64 twin of its model trained from the same initial
# weights (the library PRNG's draws, reimplemented) on the same batches and
# pictures, to 1e-9 relative (tools/golden/nn/cnn_parity.py). Skips (exit 0)
# without python3-torch. About 10 s after stage 17's build.
# suite: build
# after: 10-host
# jobs: 1
set -eu
cd "$(dirname "$0")/../.."
. tools/check.d/lib/nn-golden.sh
needs_torch
nn_golden_build burtorch-cnn
/usr/bin/python3 tools/golden/nn/cnn_parity.py "$build/targets/host/burtorch-cnn" 60
