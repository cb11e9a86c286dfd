# SPDX-License-Identifier: Apache-2.0
# Sourced by the stages that compare with PyTorch (50-52): needs_torch ends
# the stage as skipped (exit 0) without python3-torch; nn_golden_build
# builds its targets in build/nn-golden (Release, no benchmarks), the one
# build these stages share, and sets $build to it.
needs_torch() {
  if ! /usr/bin/python3 -c "import torch" 2>/dev/null; then
    echo "skipped: PyTorch (python3-torch) is not installed"
    exit 0
  fi
}
nn_golden_build() {
  build=build/nn-golden
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DBURTORCH_BUILD_BENCH=OFF >/dev/null
  cmake --build "$build" -j2 --target "$@"
}
