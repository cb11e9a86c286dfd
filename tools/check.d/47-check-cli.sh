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

out=$("$root/tools/check" check-cli no-stage-has-this-name 2>&1); code=$?
[ "$code" = 2 ] || fail "one unmatched filter among others exited $code"
echo "one unmatched filter among matching ones: exit 2"

out=$("$root/tools/check" --no-such-option 2>&1); code=$?
[ "$code" = 2 ] || fail "an unknown option exited $code"
echo "unknown option: exit 2"
