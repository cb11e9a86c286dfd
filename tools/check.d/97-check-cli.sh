# SPDX-License-Identifier: Apache-2.0
# tools/check's own command line and runner: --help prints the usage and
# runs nothing (no dependency installer, no stage); --list shows every
# suite and every stage with a time and a description; a name selects
# exactly the suite or stage so named (an unknown one exits 2 with a
# message, never "0 passed"); every stage is in one suite of suites.txt,
# has a unique number and a committed time. Then the runner itself, on a
# scratch copy with stages that record when they run: two single-core
# stages run side by side, two stages that use both cores do not, nor two
# that write one tree; a stage runs after the ones it names; a failing
# stage is reported and counted; 99-budget fails a run past its budget.
# ~15 s.
# suite: gates
# jobs: 1
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
  name=$(basename "$stage" .sh)
  line=$(printf '%s\n' "$list" | grep -E "^  $name +")
  [ -n "$line" ] || fail "--list does not list $name"
  printf '%s\n' "$line" | grep -Eq "^  $name +([0-9]+s|[0-9]+m[0-9]{2}s)  [^ ].{10,}" ||
    fail "--list's line of $name lacks a time or a description: '$line'"
done
for suite in build targets gates compliance fuzz docs fleet bench quick; do
  printf '%s\n' "$list" | grep -Eq "^$suite \([0-9]+ stages, " || fail "--list does not show the suite $suite"
done
echo "--list: every suite, and every stage with its time and description"

# Every stage: one suite that suites.txt names, a unique number, a committed time.
python3 - "$root" <<'PY' || exit 1
import sys
sys.path.insert(0, sys.argv[1] + "/tools/check.d/lib")
import run
stages, suites = run.read_stages(), run.read_suites()
numbers = [s.number for s in stages]
bad = [n for n in set(numbers) if numbers.count(n) > 1]
if bad:
    sys.exit("FAIL: stage numbers used twice: %s" % " ".join(sorted(bad)))
for s in stages:
    if s.suite not in suites or suites[s.suite][0]:
        sys.exit("FAIL: %s: suite '%s' is not a suite of suites.txt" % (s.name, s.suite))
    if run.measured(s.name) is None or not any(l.split()[:1] == [s.name] for l in run.DEFAULT_TIMES.read_text().splitlines()):
        sys.exit("FAIL: tools/check.d/times.txt has no time for %s" % s.name)
    for a in s.after:
        if a not in {t.name for t in stages}:
            sys.exit("FAIL: %s runs after %s, which is no stage" % (s.name, a))
for name, (explicit, _) in suites.items():
    for m in explicit:
        if m not in {s.name for s in stages}:
            sys.exit("FAIL: the tier %s names %s, which is no stage" % (name, m))
    if not run.members(name, stages, suites):
        sys.exit("FAIL: the suite %s has no stage" % name)
print("stages: %d, each in one of %d suites, numbers unique, every one timed" % (len(stages), len(suites)))
PY

# Exact names: a stage by its name with or without its number, a suite by its name.
got=$("$root/tools/check" --dry-run host) || fail "--dry-run host"
[ "$got" = "10-host" ] || fail "'tools/check host' would run '$got', not 10-host alone"
got=$("$root/tools/check" --dry-run 23-cortex-m4) || fail "--dry-run 23-cortex-m4"
[ "$got" = "23-cortex-m4" ] || fail "'tools/check 23-cortex-m4' would run '$got'"
want=$(grep -l '^# suite: fuzz$' "$root"/tools/check.d/*.sh | xargs -n1 basename | sed 's/\.sh$//' | tr '\n' ' ')
got=$("$root/tools/check" --dry-run fuzz) || fail "--dry-run fuzz"
[ "$got " = "${want}99-budget " ] || fail "'tools/check fuzz' would run '$got', not '${want}99-budget'"
got=$("$root/tools/check" --dry-run quick) || fail "--dry-run quick"
[ "$got" = "10-host 23-cortex-m4 30-gates-architecture 99-budget" ] || fail "'tools/check quick' would run '$got'"
echo "names: 'host' is 10-host alone, 'fuzz' the fuzz suite, 'quick' its tier"

out=$("$root/tools/check" no-stage-has-this-name 2>&1); code=$?
[ "$code" = 2 ] || fail "an unknown name exited $code: $out"
printf '%s\n' "$out" | grep -q "no suite or stage is named 'no-stage-has-this-name'" || fail "no message: $out"
printf '%s\n' "$out" | grep -q 'passed' && fail "an unknown name reported a count: $out"
out=$("$root/tools/check" gates no-stage-has-this-name 2>&1); code=$?
[ "$code" = 2 ] || fail "one unknown name among known ones exited $code"
out=$("$root/tools/check" gate 2>&1); code=$?
[ "$code" = 2 ] || fail "a part of a name ('gate') was accepted: $out"
out=$("$root/tools/check" --no-such-option 2>&1); code=$?
[ "$code" = 2 ] || fail "an unknown option exited $code"
echo "unknown names, parts of names and unknown options: exit 2"

# The target registry agrees with CMakePresets.json, the stages and the boards.
python3 "$root/tools/targets.py" --check || fail "targets/targets.json disagrees with the tree"

# The runner on a scratch copy: stages that record their start and end.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/tools/check.d/lib" "$tmp/build"
cp "$root/tools/check" "$tmp/tools/check"
cp "$root/tools/check.d/lib/run.py" "$root/tools/check.d/lib/budget.py" "$tmp/tools/check.d/lib/"
cp "$root/tools/check.d/99-budget.sh" "$tmp/tools/check.d/"
printf '#!/bin/sh\nexit 0\n' > "$tmp/tools/install-deps"
printf 'one -- a suite\ntwo -- another\n' > "$tmp/tools/check.d/suites.txt"
printf 'all 60 -- a minute\none 1 -- one second\n' > "$tmp/tools/check.d/budget.txt"
stage() {  # stage NAME SUITE FIELDS-LINES SECONDS [EXIT]
  {
    printf '# SPDX-License-Identifier: Apache-2.0\n# Stage %s of the runner test.\n# suite: %s\n%b' "$1" "$2" "$3"
    printf 'echo "start $(date +%%s.%%N)" > build/%s.t\nsleep %s\necho "end $(date +%%s.%%N)" >> build/%s.t\nexit %s\n' \
      "$1" "$4" "$1" "${5:-0}"
  } > "$tmp/tools/check.d/$1.sh"
}
stage 10-single-a one '# jobs: 1\n' 1
stage 11-single-b one '# jobs: 1\n' 1
stage 12-double-a two '' 1
stage 13-double-b two '' 1
stage 14-after one '# jobs: 1\n# after: 13-double-b\n' 0
stage 15-tree-a one '# jobs: 1\n# trees: t\n' 1
stage 16-tree-b one '# jobs: 1\n# trees: t\n' 1
stage 17-fails two '# jobs: 1\n' 0 3
printf '10-single-a 1\n' > "$tmp/tools/check.d/times.txt"
(cd "$tmp" && tools/check > "$tmp/run.out" 2>&1); code=$?
cat "$tmp/run.out"
[ "$code" = 1 ] || fail "a run with a failing stage exited $code, not 1"
tail -1 "$tmp/run.out" | grep -qx '8 passed, 1 failed' || fail "the run did not end with '8 passed, 1 failed'"
grep -q '^== 17-fails  *FAILED' "$tmp/run.out" || fail "the failing stage was not reported"
python3 - "$tmp/build" <<'PY' || exit 1
import sys
from pathlib import Path
t = {}
for f in Path(sys.argv[1]).glob("*.t"):
    d = dict(l.split() for l in f.read_text().splitlines())
    t[f.stem] = (float(d["start"]), float(d["end"]))
def overlap(a, b):
    return t[a][0] < t[b][1] and t[b][0] < t[a][1]
checks = [
    (overlap("10-single-a", "11-single-b"), "two single-core stages ran side by side"),
    (not overlap("12-double-a", "13-double-b"), "two stages that use both cores ran one after the other"),
    (t["14-after"][0] >= t["13-double-b"][1], "a stage ran after the stage it names"),
    (not overlap("15-tree-a", "16-tree-b"), "two stages that write one tree ran one after the other"),
]
for ok, what in checks:
    if not ok:
        sys.exit("FAIL: not so: " + what)
    print("runner: " + what)
PY
grep -q 'within budget' "$tmp/build/check-logs/99-budget.log" || fail "99-budget did not judge the full run"
# A run of suite one takes longer than its 1 s budget: 99-budget fails it.
# Judged without the allowance for other work: the outer run's stages are
# other work to this one.
(cd "$tmp" && BURTORCH_CHECK_NO_LOAD_ALLOWANCE=1 tools/check one > "$tmp/one.out" 2>&1); code=$?
[ "$code" = 1 ] && grep -q '^== 99-budget  *FAILED' "$tmp/one.out" || { cat "$tmp/one.out"; fail "a run past its budget passed"; }
echo "runner: a run past its budget fails (99-budget)"
# --list prefers the time measured here to the committed one.
"$tmp/tools/check" --list | grep -Eq '^  10-single-a +[0-9]+s  Stage 10-single-a of the runner test\.$' ||
  fail "--list does not show a stage's time and description"
echo "10-single-a 754" > "$tmp/build/check-times.txt"
"$tmp/tools/check" --list | grep -Eq '^  10-single-a +12m34s  ' || fail "--list does not prefer the measured time"
echo "--list: the measured time (build/check-times.txt) before the committed one"
