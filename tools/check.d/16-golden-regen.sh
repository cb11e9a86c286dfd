# SPDX-License-Identifier: Apache-2.0
# PyTorch golden data for the core: regenerates tests/golden/core_golden.hpp
# and tests/golden/ops_losses_golden.hpp into a temporary directory with the
# committed scripts and requires each to be byte-identical to the committed
# file. Needs /usr/bin/python3 with Debian's python3-torch (1.13); without
# it the stage says so and passes (the
# committed headers are still checked by the test_golden and test_ops_losses
# suites). About 3 s.
# suite: build
# jobs: 1
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
py=/usr/bin/python3
if ! "$py" -c 'import torch' >/dev/null 2>&1; then
  echo "16-golden-regen: $py cannot import torch (Debian python3-torch); regeneration check skipped"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
regen() {  # regen <script> <committed header> [options of the script]
  local script=$1 header=$2 name
  shift 2
  name=$(basename "$header")
  "$py" "$script" "$@" -o "$tmp/$name"
  if ! diff -u "$header" "$tmp/$name" >"$tmp/diff"; then
    head -n 60 "$tmp/diff"
    echo "16-golden-regen: $header differs from what $script generates with torch" \
         "$("$py" -c 'import torch; print(torch.__version__)') (expected 1.13). Regenerate with:"
    echo "  $py $script -o $header"
    status=1
  else
    echo "16-golden-regen: $header is byte-identical to a fresh regeneration"
  fi
}
regen tools/golden/core/gen_core_golden.py tests/golden/core_golden.hpp --stats
regen tools/golden/core/gen_ops_losses_golden.py tests/golden/ops_losses_golden.hpp
exit "$status"
