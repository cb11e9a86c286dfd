# SPDX-License-Identifier: Apache-2.0
# tools/check's own command line: --help prints the usage and runs nothing
# (no dependency installer, no stage); --list names every stage; a stage
# filter that matches no stage exits 2 with a message instead of reporting
# "0 passed"; an unknown option exits 2.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
fail() { echo "FAIL: $*"; exit 1; }

out=$("$root/tools/check" --help 2>&1); code=$?
[ "$code" = 0 ] || fail "--help exited $code"
printf '%s\n' "$out" | head -1 | grep -q '^usage: tools/check' || fail "--help printed: $out"
printf '%s\n' "$out" | grep -Eq '^(== |[0-9]+ passed, )' && fail "--help ran stages: $out"
printf '%s\n' "$out" | grep -q 'could not install' && fail "--help ran the installer: $out"
echo "--help: usage, exit 0, no stage run"

list=$("$root/tools/check" --list); code=$?
[ "$code" = 0 ] || fail "--list exited $code"
for stage in "$root"/tools/check.d/*.sh; do
  printf '%s\n' "$list" | grep -qx "$(basename "$stage" .sh)" || fail "--list lacks $(basename "$stage")"
done
echo "--list: $(printf '%s\n' "$list" | wc -l) stages"

out=$("$root/tools/check" no-stage-has-this-name 2>&1); code=$?
[ "$code" = 2 ] || fail "an unmatched filter exited $code: $out"
printf '%s\n' "$out" | grep -q "no stage matches 'no-stage-has-this-name'" || fail "no message: $out"
printf '%s\n' "$out" | grep -q 'passed' && fail "an unmatched filter reported a count: $out"
echo "unmatched filter: exit 2, '$out'"

# The target registry agrees with CMakePresets.json, the stages and the boards.
python3 "$root/tools/targets.py" --check || fail "targets/targets.json disagrees with the tree"

out=$("$root/tools/check" check-cli no-stage-has-this-name 2>&1); code=$?
[ "$code" = 2 ] || fail "one unmatched filter among others exited $code"
echo "one unmatched filter among matching ones: exit 2"

out=$("$root/tools/check" --no-such-option 2>&1); code=$?
[ "$code" = 2 ] || fail "an unknown option exited $code"
echo "unknown option: exit 2"

# --help lists every stage, each with its typical time and a description.
out=$("$root/tools/check" --help)
for stage in "$root"/tools/check.d/*.sh; do
  name=$(basename "$stage" .sh)
  line=$(printf '%s\n' "$out" | grep -E "^  $name +")
  [ -n "$line" ] || fail "--help does not list $name"
  printf '%s\n' "$line" | grep -Eq "^  $name +([0-9]+s|[0-9]+m[0-9]{2}s)  [^ ].{10,}" ||
    fail "--help's line of $name lacks a time or a description: '$line'"
done
echo "--help: every stage with a typical time and a description"
# The times come from build/check-times.txt when it names the stage, else
# from the committed tools/check.d/times.txt, which names every stage.
for stage in "$root"/tools/check.d/*.sh; do
  grep -q "^$(basename "$stage" .sh) [0-9]\+$" "$root/tools/check.d/times.txt" ||
    fail "tools/check.d/times.txt has no time for $(basename "$stage" .sh)"
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/tools/check.d" "$tmp/build"
cp "$root/tools/check" "$tmp/tools/check"
printf '# SPDX-License-Identifier: Apache-2.0\n# A stage that passes.\ntrue\n' > "$tmp/tools/check.d/01-pass.sh"
echo "01-pass 754" > "$tmp/tools/check.d/times.txt"
"$tmp/tools/check" --help | grep -Eq '^  01-pass +12m34s  A stage that passes\.$' || fail "--help does not show the committed time"
echo "01-pass 3" > "$tmp/build/check-times.txt"
"$tmp/tools/check" --help | grep -Eq '^  01-pass +3s  A stage that passes\.$' || fail "--help does not prefer the measured time"
echo "--help: the measured time (build/check-times.txt) before the committed one"
