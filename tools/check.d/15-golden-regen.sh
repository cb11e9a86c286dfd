# SPDX-License-Identifier: Apache-2.0
# PyTorch golden data for the core: regenerates tests/golden/core_golden.hpp
# into a temporary directory with the committed script and requires it to be
# byte-identical to the committed file. Needs /usr/bin/python3 with Debian's
# python3-torch (1.13); without it the stage says so and passes (the
# committed header is still checked by the test_golden suite). About 2 s.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
py=/usr/bin/python3
if ! "$py" -c 'import torch' >/dev/null 2>&1; then
  echo "15-golden-regen: $py cannot import torch (Debian python3-torch); regeneration check skipped"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$py" tools/golden/core/gen_core_golden.py --stats -o "$tmp/core_golden.hpp"
if ! diff -u tests/golden/core_golden.hpp "$tmp/core_golden.hpp" >"$tmp/diff"; then
  head -n 60 "$tmp/diff"
  echo "15-golden-regen: tests/golden/core_golden.hpp differs from what" \
       "tools/golden/core/gen_core_golden.py generates with torch $("$py" -c 'import torch; print(torch.__version__)')" \
       "(expected 1.13). Regenerate with:"
  echo "  $py tools/golden/core/gen_core_golden.py -o tests/golden/core_golden.hpp"
  exit 1
fi
echo "15-golden-regen: tests/golden/core_golden.hpp is byte-identical to a fresh regeneration"
