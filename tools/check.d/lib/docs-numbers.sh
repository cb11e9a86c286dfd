#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Hand-written numbers in README.md and docs/ do not grow: tools/docs-numbers
# counts, per document, the numbers that no tool generates (outside the generated blocks
# of tools/footprint, tools/bench, tools/icount, code, references and the
# blocks a checker verifies) and fails when one has more than
# tools/docs-numbers.txt allows or names a stage that does not exist; the
# blocks tools/docs-checks verifies must say what it computes; the counter
# itself must see a number added to a copy of a document. ~1 s.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$root"
tools/docs-numbers
tools/docs-checks | tools/docs-numbers --verify tools/docs-checks
# The counter can fail: a hand-written number added to docs/README.md's copy.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/tools/check.d" "$tmp/docs" "$tmp/tests"
cp tools/docs-numbers tools/docs-numbers.txt "$tmp/tools/"
cp docs/README.md "$tmp/docs/README.md"
"$tmp/tools/docs-numbers" >/dev/null
printf '\nThe tape core is 12,042 B on a Cortex-M4.\n' >> "$tmp/docs/README.md"
if "$tmp/tools/docs-numbers" > "$tmp/out.txt"; then
  cat "$tmp/out.txt"
  echo "FAIL: a hand-written number added to docs/README.md was not caught"
  exit 1
fi
grep -q 'docs/README.md .* 1 hand-written numbers  MORE THAN ITS 0' "$tmp/out.txt" || { cat "$tmp/out.txt"; exit 1; }
# The top-level README.md is counted too (tools/docs-numbers.txt lists it).
cp docs/README.md "$tmp/docs/README.md"
printf '# libburtorch\n\nA tape in `FixedTape<double, 256>`.\n' > "$tmp/README.md"
"$tmp/tools/docs-numbers" >/dev/null || { echo "FAIL: a README.md without numbers was refused"; exit 1; }
printf '\nA full run takes 25 minutes.\n' >> "$tmp/README.md"
"$tmp/tools/docs-numbers" > "$tmp/out.txt" && { echo "FAIL: a number added to README.md was not caught"; exit 1; }
grep -q '^  README.md .* 1 hand-written numbers  MORE THAN ITS 0' "$tmp/out.txt" || { cat "$tmp/out.txt"; exit 1; }
rm "$tmp/README.md"
cp docs/README.md "$tmp/docs/README.md"
printf '\nThe losses agree within 2.5e-7.\n' >> "$tmp/docs/README.md"
"$tmp/tools/docs-numbers" > "$tmp/out.txt" && { echo "FAIL: a number in scientific notation was not counted"; exit 1; }
grep -q 'docs/README.md .* 1 hand-written numbers  MORE THAN ITS 0' "$tmp/out.txt" || { cat "$tmp/out.txt"; exit 1; }
printf '\n```\nbuild/host/x --steps 20\n```\nIn `--steps 30`, Rule 21.6.1, Fig. 2, a Cortex-M4 and FP32.\n' > "$tmp/docs/README.md"
printf '\n## 2. Rules 8.2.10 and 7.0.1, misra 17.2, 12.3 and 13.5, IEEE 754.\n' >> "$tmp/docs/README.md"
"$tmp/tools/docs-numbers" >/dev/null || { echo "FAIL: code, references or names counted as numbers"; exit 1; }
# "stage NN" names a stage that exists.
printf '#!/bin/sh\n' > "$tmp/tools/check.d/42-x.sh"
printf 'Stage 42 checks it.\n' >> "$tmp/docs/README.md"
"$tmp/tools/docs-numbers" >/dev/null || { echo "FAIL: a reference to an existing stage was refused"; exit 1; }
printf 'Stage 43 checks it.\n' >> "$tmp/docs/README.md"
if "$tmp/tools/docs-numbers" > "$tmp/out.txt"; then
  echo "FAIL: a reference to a stage that does not exist was not caught"; exit 1
fi
grep -q 'names stage 43, which tools/check.d does not have' "$tmp/out.txt" || { cat "$tmp/out.txt"; exit 1; }
sed -i '$d' "$tmp/docs/README.md"
# A checked block is not counted when its checker is one, and --verify
# compares every number of it; a block whose checker is not one is counted.
printf '\n<!-- BEGIN checked by ctest fake: sizes -->\n| a | 16 B |\n| b | 28 B |\n<!-- END checked by ctest fake -->\n' \
  >> "$tmp/docs/README.md"
if "$tmp/tools/docs-numbers" > "$tmp/out.txt"; then
  echo "FAIL: a block checked by a test that does not exist was not counted"; exit 1
fi
grep -q 'docs/README.md .* 2 hand-written numbers  MORE THAN ITS 0' "$tmp/out.txt" || { cat "$tmp/out.txt"; exit 1; }
printf 'add_test(NAME fake COMMAND cmake -DCOUNTER=tools/docs-numbers -P fake.cmake)\n' > "$tmp/tests/CMakeLists.txt"
"$tmp/tools/docs-numbers" >/dev/null || { echo "FAIL: a block checked by a test was counted"; exit 1; }
printf '@ docs/README.md sizes\n16\n28\n' | "$tmp/tools/docs-numbers" --verify "ctest fake" >/dev/null ||
  { echo "FAIL: --verify refused a block that says what its checker computes"; exit 1; }
for wrong in '16\n29\n' '28\n16\n' '16\n' '16\n28\n4\n'; do
  if printf "@ docs/README.md sizes\n$wrong" | "$tmp/tools/docs-numbers" --verify "ctest fake" >/dev/null; then
    echo "FAIL: --verify accepted a block that differs from its checker ($wrong)"; exit 1
  fi
done
if printf '@ docs/README.md other\n1\n' | "$tmp/tools/docs-numbers" --verify "ctest fake" >/dev/null; then
  echo "FAIL: --verify accepted a checker that says nothing about a block"; exit 1
fi
echo "50-docs: an added number fails the count; code, references and names do not count; stages named" \
     "exist; checked blocks say what their checker computes"
