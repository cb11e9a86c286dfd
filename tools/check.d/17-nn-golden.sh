# SPDX-License-Identifier: Apache-2.0
# nn golden data: tools/golden/nn/*.py, run with PyTorch now,
# reproduce the committed headers tests/golden/test_nn_golden.hpp,
# tests/golden/test_nn_trajectory_golden.hpp, tests/golden/test_nn_gru_golden.hpp and
# tests/golden/test_nn_conv_golden.hpp (to 1e-12: BLAS builds may differ in the
# last bits). Skips (exit 0) without python3-torch. About 30 s.
# suite: build
# after: 10-host
# jobs: 1
set -eu
cd "$(dirname "$0")/../.."
. tools/check.d/lib/nn-golden.sh
needs_torch
nn_golden_build test_nn_export
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export BURTORCH_GOLDEN_OUT="$out"
/usr/bin/python3 tools/golden/nn/make_layers.py
/usr/bin/python3 tools/golden/nn/make_trajectory.py "$build/tests/test_nn_export"
/usr/bin/python3 tools/golden/nn/make_gru.py
/usr/bin/python3 tools/golden/nn/make_conv.py
/usr/bin/python3 tools/golden/nn/compare_headers.py tests/golden/test_nn_golden.hpp "$out/test_nn_golden.hpp" 1e-12
/usr/bin/python3 tools/golden/nn/compare_headers.py tests/golden/test_nn_trajectory_golden.hpp \
  "$out/test_nn_trajectory_golden.hpp" 1e-12
/usr/bin/python3 tools/golden/nn/compare_headers.py tests/golden/test_nn_gru_golden.hpp "$out/test_nn_gru_golden.hpp" 1e-12
/usr/bin/python3 tools/golden/nn/compare_headers.py tests/golden/test_nn_conv_golden.hpp "$out/test_nn_conv_golden.hpp" 1e-12
