# SPDX-License-Identifier: Apache-2.0
# Sourced by the stages that compare with PyTorch (17-19): needs_torch ends
# the stage as skipped (exit 0) without python3-torch; nn_golden_build
# builds its targets in the host preset's tree (build/host, built by stage
# 10; tools/check.d/lib/trees.sh) and sets $build to it.
needs_torch() {
  if ! /usr/bin/python3 -c "import torch" 2>/dev/null; then
    echo "skipped: PyTorch (python3-torch) is not installed"
    exit 0
  fi
}
nn_golden_build() {
  build=build/host
  . tools/check.d/lib/trees.sh
  preset_targets host "$@"
}
