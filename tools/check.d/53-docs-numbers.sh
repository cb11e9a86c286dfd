# SPDX-License-Identifier: Apache-2.0
# Hand-written numbers in docs/ do not grow: tools/docs-numbers counts, per
# document, the numbers that no tool generates (outside the generated blocks
# of tools/footprint, tools/bench, tools/icount, code and references) and
# fails when one has more than tools/docs-numbers.txt allows; the counter
# itself must see a number added to a copy of a document. ~1 s.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
tools/docs-numbers
# The counter can fail: a hand-written number added to docs/README.md's copy.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/tools" "$tmp/docs"
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
printf '\n```\nbuild/host/x --steps 20\n```\nIn `--steps 30`, Rule 21.6.1, Fig. 2, a Cortex-M4 and FP32.\n' > "$tmp/docs/README.md"
"$tmp/tools/docs-numbers" >/dev/null || { echo "FAIL: code, references or names counted as numbers"; exit 1; }
echo "53-docs-numbers: an added number fails the count; code, references and names do not count"
