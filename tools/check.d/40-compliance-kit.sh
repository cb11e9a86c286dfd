# SPDX-License-Identifier: Apache-2.0
# The compliance kit users run in their CI (tools/burtorch-compliance,
# installed as bin/burtorch-compliance; docs/compliance-in-your-ci.md), from
# the source tree. 41-compliance-presets.sh runs the installed kit on
# firmware built against each cross preset's install.
#  1. docs/misra/deviations.md is the rendering of deviations.json;
#  2. usage errors exit 2 with one line and no traceback (bad regex, no -p,
#     unreadable or malformed deviation record, broken compile databases);
#  3. the hostile consumer: every header under include/burtorch/ and
#     port/include/burtorch/ (found, not listed) included after a product's
#     globals tape, value, grad, status, min, max and macros DEBUG, MAX,
#     ERROR, assert (tests/compliance/hostile.hpp), then
#     tests/compliance/consumer.cpp (every public template for float, double
#     and lanes); it builds with -Wshadow -Werror and runs; analysed through
#     a hand-written compile database (arguments form, no -std: g++'s default,
#     -Wall -Wextra -Wshadow, a directory with a space in its name) the kit
#     must exit 0: nothing unsuppressed anywhere, every suppression names a
#     deviation, our headers were analysed;
#  4. the same unit compiled as C++14: "C++17 required" once, exit 2;
#  5. tests/compliance/planted.cpp (violations in the user's code): exit 1
#     with each planted (line, rule) in the SARIF, aliases folded into one
#     result, none suppressed: through CMake's database, under a record
#     that tries to suppress everything everywhere, through a bear-style
#     database (command form, relative paths, GCC-only options, a response
#     file);
#  5b. the library's sources in a user's database (an install's
#     share/burtorch/src, with and without the private -I, and this
#     checkout's board and POSIX port sources, as add_subdirectory compiles
#     them): reported as the library's, 0 findings (BT-DEV-025 applied), each
#     placed under a base of its own (the prefix, the checkout), every SARIF
#     location relative to a base (a related location with an absolute URI
#     is refused);
#  5c. tests/compliance/tables.cpp (a one-output model trained over a C
#     table with nn::serial_batch): no finding in libburtorch with mse's
#     by-value and counted forms, nor with a bare pointer (which drew
#     clang-analyzer's garbage argument in nn/losses.hpp until the loss
#     became all-or-nothing: the stage holds it to none);
#  6. MISRA messages: the rule number and chapter without --rule-texts, the
#     user's text with it;
#  7. a deviation applies only at its site (BT-DEV-012 comment removed);
#  8. broken databases are tool errors (exit 2, naming the file and the
#     missing header or compiler), never findings;
#  9. every SARIF file validates against the SARIF 2.1.0 JSON schema
#     (tests/compliance/sarif/), and the validator rejects a broken one.
# About 1 minute on 2 idle cores, 2 at load average 7 (cppcheck's MISRA
# addon on the hostile consumer is most of it; 5b about 25 s).
# suite: compliance
# jobs: 1
# trees: compliance
set -eu
cd "$(dirname "$0")/../.."
root=$PWD
out=build/compliance
rm -rf "$out"
mkdir -p "$out"
kit=tools/burtorch-compliance
cache="$out/cache"

# shellcheck source=tools/check.d/lib/compliance.sh
. tools/check.d/lib/compliance.sh

echo "== deviation record: JSON and Markdown agree"
tools/render-deviations --check

echo "== the schema validator rejects what the schema forbids"
python3 - "$out/broken.sarif" <<'PY'
import json, sys
doc = {"version": "2.1.0", "runs": [{"tool": {"driver": {"version": "1"}},
        "results": [{"ruleId": "x", "level": "severe", "message": {"text": "t"}}]}]}
json.dump(doc, open(sys.argv[1], "w"))
PY
if validate_sarif "$out/broken.sarif"; then echo "FAIL: the validator accepted a SARIF file without a driver name"; exit 1; fi

one_line() {  # one_line WANT-REGEX CMD...: exit 2 and exactly one line, matching
  local want=$1
  shift
  expect_rc 2 "$out/usage.log" "$@"
  if [ "$(wc -l <"$out/usage.log")" -ne 1 ] || grep -q Traceback "$out/usage.log" || ! grep -Eq "$want" "$out/usage.log"; then
    echo "FAIL: not one line matching '$want': $*"
    cat "$out/usage.log"
    exit 1
  fi
  echo "exit 2: ${*:2} -> $(cut -c1-110 "$out/usage.log")"
}

for unit in planted; do
  cmake -S tests/compliance -B "$out/$unit" -DBURTORCH_SOURCE_DIR="$PWD" \
    -DBURTORCH_COMPLIANCE_UNIT="$unit.cpp" >"$out/$unit-configure.log"
done

echo "== usage errors: exit 2, one line"
mkdir -p "$out/db"
echo '[{"directory": ' >"$out/db/truncated.json"
echo '{"file": "a.cpp"}' >"$out/db/object.json"
echo '[{"file": "a.cpp", "directory": "/"}]' >"$out/db/nocommand.json"
echo '[]' >"$out/db/empty.json"
echo 'not json' >"$out/db/record.txt"
one_line 'required' "$kit"
one_line 'not found' "$kit" -p "$out/no-such-dir"
one_line 'unrecognized' "$kit" -p "$out/planted" --no-such-flag
one_line 'regular expression' "$kit" -p "$out/planted" --files '('
one_line 'matches no translation unit' "$kit" -p "$out/planted" --files 'no-such-unit'
one_line 'cppcheck' "$kit" -p "$out/planted" --cppcheck no-such-cppcheck-binary
one_line 'clang-tidy' "$kit" -p "$out/planted" --clang-tidy no-such-clang-tidy-binary
one_line 'deviation record' "$kit" -p "$out/planted" --deviations "$out/db"
one_line 'deviation record' "$kit" -p "$out/planted" --deviations "$out/db/record.txt"
one_line 'no such file' "$kit" -p "$out/planted" --deviations "$out/no-such-record.json"
one_line 'rule-texts' "$kit" -p "$out/planted" --rule-texts "$out/no-such-texts.txt"
one_line 'cannot write' "$kit" -p "$out/planted" --sarif "$out/no-such-dir/x.sarif"
one_line 'at least 1' "$kit" -p "$out/planted" -j 0
one_line 'not valid JSON' "$kit" -p "$out/db/truncated.json"
one_line 'not a JSON array' "$kit" -p "$out/db/object.json"
one_line "lacks 'directory'" "$kit" -p "$out/db/nocommand.json"
one_line 'no C or C\+\+ translation unit' "$kit" -p "$out/db/empty.json"
expect_rc 0 "$out/usage.log" "$kit" --help
grep -q -- '--rule-texts' "$out/usage.log" || { echo "FAIL: --help does not list --rule-texts"; exit 1; }

echo "== hostile consumer: every header after a product's names and macros"
hostile="$out/hostile dir"  # a space in the path, as some users have
mkdir -p "$hostile"
{
  echo '// Generated by tools/check.d/40-compliance-kit.sh: tests/compliance/hostile.hpp, then every header.'
  echo '#include "hostile.hpp"'
  for dir in include port/include; do
    (cd "$dir" && find burtorch -name '*.hpp' | LC_ALL=C sort | sed 's|.*|#include <&>|')
  done
} >"$hostile/hostile_all.hpp"
{
  echo '// Generated by tools/check.d/40-compliance-kit.sh: the hostile names, every header, then the consumer.'
  echo '#include "hostile_all.hpp"'
  echo '#include "consumer.cpp"  // NOLINT(bugprone-suspicious-include): the consumer, after the hostile names'
} >"$hostile/hostile.cpp"
headers=$(grep -c '^#include <burtorch/' "$hostile/hostile_all.hpp")
[ "$headers" -ge 30 ] || { echo "FAIL: only $headers headers found under include/burtorch/"; exit 1; }
echo "$headers headers included"
mapfile -t sources < <(find lib -name '*.cpp' | sort)
g++ -std=c++17 -O1 -fno-exceptions -fno-rtti -Wall -Wextra -Wpedantic -Wconversion -Wsign-conversion \
  -Wshadow -Werror -I tests/compliance -I include -I port/include -I lib "$hostile/hostile.cpp" "${sources[@]}" \
  -o "$out/hostile-bin"
"$out/hostile-bin"
echo "hostile consumer built with -Wshadow -Werror and ran: exit 0"
python3 - "$hostile" "$root" <<'PY'
import json, os, sys
d, root = os.path.abspath(sys.argv[1]), sys.argv[2]
args = ["g++", "-fno-exceptions", "-fno-rtti", "-Wall", "-Wextra", "-Wshadow", f"-I{root}/tests/compliance",
        "-I.", "-isystem", f"{root}/include", "-isystem", f"{root}/port/include", "-c", "hostile.cpp", "-o", "hostile.o"]
json.dump([{"directory": d, "arguments": args, "file": "hostile.cpp"}], open(f"{d}/compile_commands.json", "w"), indent=1)
PY
SECONDS=0
expect_rc 0 "$out/hostile.log" "$kit" -p "$hostile" --cache-dir "$cache" --sarif "$out/hostile.sarif"
t_hostile=$SECONDS
cat "$out/hostile.log"
python3 tests/compliance/check_sarif.py clean "$out/hostile.sarif" docs/misra/deviations.json
grep -q ' -std=gnu++17, ' "$out/hostile.sarif" || { echo "FAIL: g++'s default standard not found"; exit 1; }
echo "kit on the hostile consumer: ${t_hostile} s"

echo "== the same unit as C++14: C++17 required, once"
python3 - "$hostile" <<'PY'
import json, sys
p = f"{sys.argv[1]}/compile_commands.json"
db = json.load(open(p))
db[0]["arguments"].insert(1, "-std=c++14")
json.dump(db, open(f"{sys.argv[1]}/c++14.json", "w"))
PY
expect_rc 2 "$out/cxx14.log" "$kit" -p "$hostile/c++14.json" --cache-dir "$cache"
cat "$out/cxx14.log"
[ "$(grep -c 'C++17 required' "$out/cxx14.log")" -eq 1 ] || { echo "FAIL: 'C++17 required' not said exactly once"; exit 1; }
if grep -q 'unsuppressed findings: [1-9]' "$out/cxx14.log"; then echo "FAIL: findings under C++14"; exit 1; fi

echo "== planted violations: each one reported, none suppressed"
expect_rc 1 "$out/planted.log" "$kit" -p "$out/planted" --cache-dir "$cache" --sarif "$out/planted.sarif"
cat "$out/planted.log"
python3 tests/compliance/check_sarif.py planted "$out/planted.sarif" tests/compliance/planted.cpp
grep -Eq '^  tests/compliance/planted.cpp: [0-9]+ finding\(s\) \(' "$out/planted.log" || {
  echo "FAIL: no one-line summary for planted.cpp"; exit 1; }

echo "== planted violations under a record that suppresses everything, everywhere"
python3 - "$out/greedy.json" <<'PY'
import json, sys
d = json.load(open("docs/misra/deviations.json"))
d["deviations"][0]["kit_suppressions"] = [
    {"tool": t, "check": "*", "path": "*", "site_marker": False} for t in ("cppcheck", "clang-tidy")]
json.dump(d, open(sys.argv[1], "w"))
PY
expect_rc 1 "$out/greedy.log" "$kit" -p "$out/planted" --cache-dir "$cache" --sarif "$out/planted-greedy.sarif" \
  --deviations "$out/greedy.json"
python3 tests/compliance/check_sarif.py planted "$out/planted-greedy.sarif" tests/compliance/planted.cpp
grep -q '2 of 2 analyses from the cache' "$out/greedy.log" || { echo "FAIL: the unchanged unit was analysed again"; cat "$out/greedy.log"; exit 1; }

echo "== planted violations, bear-style database: command form, relative paths, GCC-only options, response file"
rel="$out/relative"
mkdir -p "$rel/obj"
printf '%s\n' '-isystem ../../../../include' '-Wall' >"$rel/obj/flags.rsp"
cat >"$rel/compile_commands.json" <<JSON
[{"directory": "obj",
  "command": "ccache c++ -std=c++17 @flags.rsp -fstack-usage -fcallgraph-info=su -fconserve-stack -Werror -Wlogical-op -c ../../../../tests/compliance/planted.cpp -o planted.o",
  "file": "../../../../tests/compliance/planted.cpp"}]
JSON
expect_rc 1 "$out/relative.log" "$kit" -p "$rel" --cache-dir "$cache" --sarif "$out/relative.sarif"
python3 tests/compliance/check_sarif.py planted "$out/relative.sarif" tests/compliance/planted.cpp
grep -q 'options clang does not know (left out for clang-tidy): -fcallgraph-info=su -fconserve-stack' \
  "$out/relative.sarif" || { echo "FAIL: GCC-only options not reported as left out"; exit 1; }

echo "== the library's sources in a user's database: the library's, each location under a base"
# A Makefile over an install's burtorch.mk compiles lib/, port/ and targets/
# from P/share/burtorch/src; add_subdirectory compiles them from a source
# checkout. Either way they are the library's: analysed under its record,
# reported as lib/..., port/..., targets/... apart from the user's code, and
# placed in SARIF relative to a base of their own (the install's prefix,
# the checkout), never as absolute file:// URIs. A port source compiled
# without the library's private -I (as the Make route may) is recognised
# by where it lies. The user's unit next to them is clean: exit 0.
srcdb="$root/$out/sources"
mkdir -p "$srcdb/prefix/share/burtorch/src" "$srcdb/user"
cp -r lib port targets "$srcdb/prefix/share/burtorch/src/"
cat >"$srcdb/user/app.cpp" <<'CPP'
// SPDX-License-Identifier: Apache-2.0
// A user's unit beside the library's sources (tools/check.d/40-compliance-kit.sh).
#include <burtorch/burtorch.hpp>

int main() {
  static burtorch::FixedTape<float, 8U> tape;
  const burtorch::Value<float> x = tape.leaf(2.0F);
  const burtorch::Value<float> y = x * x;
  return (tape.backward(y) == burtorch::Status::kOk) ? 0 : 1;
}
CPP
python3 - "$srcdb" "$root" <<'PY'
import json, sys
out, root = sys.argv[1], sys.argv[2]
src = f"{out}/prefix/share/burtorch/src"
cm4 = ["arm-none-eabi-g++", "-mthumb", "-mcpu=cortex-m4", "-mfpu=fpv4-sp-d16", "-mfloat-abi=hard", "-fno-exceptions",
       "-fno-rtti", "-Os", "-DNDEBUG", "-std=c++17", "-isystem", f"{root}/include", "-isystem", f"{root}/port/include"]
def entry(f, extra=()):
    return {"directory": out, "arguments": [*cm4, *extra, "-c", f, "-o", f.rsplit("/", 1)[1] + ".o"], "file": f}
host = {"directory": out, "file": f"{root}/port/posix/file_posix.cpp",   # the checkout's, a host build's port
        "arguments": ["g++", "-std=c++17", "-O2", "-fno-exceptions", "-fno-rtti", "-I", f"{root}/include",
                      "-I", f"{root}/port/include", "-c", f"{root}/port/posix/file_posix.cpp", "-o", "file_posix.o"]}
json.dump([entry(f"{src}/lib/checkpoint.cpp", ["-I", f"{src}/lib"]),   # the install's, with the private -I
           entry(f"{src}/port/cortex-m/semihosting.cpp"),              # the install's, without it
           entry(f"{root}/targets/boards/cortex-m/board.cpp"),         # the checkout's
           host, entry(f"{out}/user/app.cpp")], open(f"{out}/compile_commands.json", "w"), indent=1)
PY
expect_rc 0 "$out/sources.log" "$kit" -p "$srcdb" --cache-dir "$cache" --srcroot "$srcdb/user" --sarif "$out/sources.sarif"
grep -q "unsuppressed findings: 0 (0 in your code, 0 in libburtorch)" "$out/sources.log" || {
  cat "$out/sources.log"; echo "FAIL: findings with the library's sources in the database"; exit 1; }
for f in lib/checkpoint.cpp port/cortex-m/semihosting.cpp targets/boards/cortex-m/board.cpp port/posix/file_posix.cpp; do
  grep -q "^  $f (libburtorch): 0 finding(s)" "$out/sources.log" || {
    cat "$out/sources.log"; echo "FAIL: $f not reported as the library's"; exit 1; }
done
python3 tests/compliance/check_sarif.py clean-sources "$out/sources.sarif" docs/misra/deviations.json
python3 - "$out/sources.sarif" "$srcdb" "$root" <<'PY'
import json, sys
sarif, db, root = sys.argv[1:]
want = {"lib/checkpoint.cpp": (f"file://{db}/prefix/", "share/burtorch/src/lib/checkpoint.cpp"),
        "port/cortex-m/semihosting.cpp": (f"file://{db}/prefix/", "share/burtorch/src/port/cortex-m/semihosting.cpp"),
        "targets/boards/cortex-m/board.cpp": (f"file://{root}/", "targets/boards/cortex-m/board.cpp"),
        "port/posix/file_posix.cpp": (f"file://{root}/", "port/posix/file_posix.cpp")}
seen = set()
for run in json.load(open(sarif))["runs"]:
    bases = {k: v["uri"] for k, v in run["originalUriBaseIds"].items()}
    for r in run["results"]:
        art = r["locations"][0]["physicalLocation"]["artifactLocation"]
        path = r["properties"].get("burtorchPath")
        if path in want:
            if (bases[art["uriBaseId"]], art["uri"]) != want[path] or not art["uriBaseId"].startswith("BURTORCH"):
                sys.exit(f"FAIL: {path} placed at {art['uriBaseId']}={bases[art['uriBaseId']]} + {art['uri']}, "
                         f"not {want[path]}")
            seen.add(path)
if seen != set(want):
    sys.exit(f"FAIL: no result placed for {sorted(set(want) - seen)}")
if not any(r["properties"].get("burtorchPath") == "port/posix/file_posix.cpp" and
           r.get("suppressions", [{}])[0].get("justification", "").startswith("BT-DEV-025")
           for run in json.load(open(sarif))["runs"] for r in run["results"]):
    sys.exit("FAIL: open(2) in port/posix/file_posix.cpp not suppressed by BT-DEV-025")
print("the library's sources: " + ", ".join(f"{p} under {want[p][0]}" for p in sorted(want)))
PY
validate_sarif "$out/sources.sarif"
# The location check reads every location, not only each result's first: a
# related location with an absolute URI is refused.
python3 - "$out/sources.sarif" "$out/absolute.sarif" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
r = doc["runs"][0]["results"][0]
r["relatedLocations"] = [{"physicalLocation": {"artifactLocation": {"uri": "file:///etc/x.cpp"}, "region": {"startLine": 1}}}]
json.dump(doc, open(sys.argv[2], "w"))
PY
if python3 tests/compliance/check_sarif.py clean-sources "$out/absolute.sarif" docs/misra/deviations.json >"$out/absolute.log"; then
  echo "FAIL: check_sarif accepted an absolute related location"; exit 1
fi
grep -q "not relative to a base" "$out/absolute.log" || { cat "$out/absolute.log"; exit 1; }
echo "an absolute related location: refused ($(cut -c1-100 "$out/absolute.log"))"

echo "== mse over a C table per sample: no finding in libburtorch with the forms that say the count"
# tests/compliance/tables.cpp: the loss of a one-output model against a
# table's target, by value and by pointer with the count. The same unit with
# a bare pointer (mse(t, y, &ys[i])) drew clang-analyzer's garbage argument
# in nn/losses.hpp (the analyser followed mse's loop past the table) until
# mse became all-or-nothing; it must stay clean in libburtorch too. The
# unit's own C arrays are the product's findings (exit 1): the analysis ran.
tables="$root/$out/tables"
mkdir -p "$tables"
sed -e 's|mse(t, y, &ys\[i\], 1U)|mse(t, y, \&ys[i])|' -e 's|mse(t, y, ys\[i\])|mse(t, y, \&ys[i])|' \
  tests/compliance/tables.cpp >"$tables/bare.cpp"
[ "$(grep -c 'mse(t, y, &ys\[i\]);' "$tables/bare.cpp")" = 2 ] || { echo "FAIL: tables.cpp's mse calls not found"; exit 1; }
python3 - "$tables" "$root" <<'PY'
import json, sys
d, root = sys.argv[1], sys.argv[2]
for name, src in (("forms", f"{root}/tests/compliance/tables.cpp"), ("bare", f"{d}/bare.cpp")):
    args = ["g++", "-std=c++17", "-O1", "-fno-exceptions", "-fno-rtti", "-isystem", f"{root}/include",
            "-isystem", f"{root}/port/include", "-c", src, "-o", f"{name}.o"]
    json.dump([{"directory": d, "arguments": args, "file": src}], open(f"{d}/{name}.json", "w"), indent=1)
PY
expect_rc 1 "$out/tables.log" "$kit" -p "$tables/forms.json" --only clang-tidy --cache-dir "$cache"
grep -Eq "unsuppressed findings: [1-9][0-9]* \([1-9][0-9]* in your code, 0 in libburtorch\)" "$out/tables.log" || {
  cat "$out/tables.log"; echo "FAIL: findings in libburtorch with mse's counted and by-value forms"; exit 1; }
expect_rc 1 "$out/tables-bare.log" "$kit" -p "$tables/bare.json" --only clang-tidy --cache-dir "$cache"
grep -Eq "unsuppressed findings: [1-9][0-9]* \([1-9][0-9]* in your code, 0 in libburtorch\)" "$out/tables-bare.log" || {
  cat "$out/tables-bare.log"; echo "FAIL: findings in libburtorch with mse over a bare pointer"; exit 1; }
echo "mse by value and with the count: $(grep -o 'unsuppressed findings: .*' "$out/tables.log");" \
  "with a bare pointer: $(grep -o 'unsuppressed findings: .*' "$out/tables-bare.log")"

echo "== MISRA messages: rule number and chapter, or the user's rule texts"
python3 - "$out/planted.sarif" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
hits = [r for run in runs for r in run["results"] if r["ruleId"] == "misra-c2012-17.2"]
want = "MISRA C:2012 Rule 17.2 (Functions), MISRA C++:2023 counterpart 8.2.10"
if not hits or not all(r["message"]["text"].startswith(want) and "--rule-texts" in r["message"]["text"] for r in hits):
    sys.exit(f"FAIL: misra-c2012-17.2 without its rule number and chapter: {[r['message']['text'] for r in hits]}")
if any("misra violation" in r["message"]["text"] for run in runs for r in run["results"]):
    sys.exit("FAIL: the addon's placeholder message is still there")
print(f"misra-c2012-17.2: {hits[0]['message']['text']}")
PY
expect_rc 1 "$out/texts.log" "$kit" -p "$out/planted" --only cppcheck --cache-dir "$cache" \
  --rule-texts tests/compliance/rule-texts-sample.txt --sarif "$out/texts.sarif"
grep -q 'misra-c2012-17.2: MISRA C:2012 Rule 17.2 (Functions), MISRA C++:2023 counterpart 8.2.10: Sample text seventeen two' \
  "$out/texts.log" || { echo "FAIL: the rule text given with --rule-texts is not in the message"; cat "$out/texts.log"; exit 1; }
echo "with --rule-texts: $(grep -o 'misra-c2012-17.2: MISRA.*' "$out/texts.log" | head -1)"

echo "== a deviation applies only at its documented site"
# A copy of the headers in which FixedTape's constructor no longer carries its
# BT-DEV-012 comment: cppcheck's uninitMemberVar there must come back.
mkdir -p "$out/unmarked"
cp -r include "$out/unmarked/include"
sed -i 's|// BT-DEV-012: storage_|// (no ID): storage_|' "$out/unmarked/include/burtorch/core/tape.hpp"
cmake -S tests/compliance -B "$out/unmarked/build" -DBURTORCH_SOURCE_DIR="$PWD/$out/unmarked" \
  -DBURTORCH_COMPLIANCE_UNIT=planted.cpp >"$out/unmarked-configure.log"
expect_rc 1 "$out/unmarked.log" "$kit" -p "$out/unmarked/build" --only cppcheck --cache-dir "$cache" \
  --sarif "$out/unmarked.sarif"
python3 - "$out/unmarked.sarif" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
hits = [r for run in runs for r in run["results"]
        if r["ruleId"] == "uninitMemberVar" and r["properties"].get("burtorchPath") == "include/burtorch/core/tape.hpp"]
if not hits or any(r.get("suppressions") for r in hits):
    sys.exit("FAIL: uninitMemberVar in core/tape.hpp without its BT-DEV-012 comment was not reported unsuppressed")
print(f"uninitMemberVar in core/tape.hpp without its BT-DEV-012 comment: reported, unsuppressed ({len(hits)})")
PY

echo "== broken compile databases: tool errors (exit 2), never findings"
python3 - "$out" "$root" <<'PY'
import json, os, sys
out, root = os.path.abspath(sys.argv[1]), sys.argv[2]
src = f"{root}/tests/compliance/planted.cpp"
def db(name, args):
    json.dump([{"directory": out, "arguments": args + ["-c", src], "file": src}], open(f"{out}/db/{name}.json", "w"))
db("moved-install", ["g++", "-std=c++17", "-isystem", f"{root}/no-such-prefix/include"])
db("no-compiler", ["arm-none-eabi-g++-99", "-std=c++17", "-isystem", f"{root}/include"])
json.dump([{"directory": out, "arguments": ["g++", "-c", "gone.cpp"], "file": "gone.cpp"}], open(f"{out}/db/gone.json", "w"))
PY
expect_rc 2 "$out/broken.log" "$kit" -p "$out/db/moved-install.json" --cache-dir "$cache"
grep -q "planted.cpp: g++ cannot preprocess it: missing header 'burtorch/core/ops.hpp'" "$out/broken.log" || {
  echo "FAIL: the missing header is not named"; cat "$out/broken.log"; exit 1; }
if grep -q 'unsuppressed findings: [1-9]' "$out/broken.log"; then echo "FAIL: findings from a broken unit"; exit 1; fi
grep 'error:' "$out/broken.log"
expect_rc 2 "$out/broken.log" "$kit" -p "$out/db/no-compiler.json" --cache-dir "$cache"
grep -q "its compiler 'arm-none-eabi-g++-99' is not installed" "$out/broken.log" || { cat "$out/broken.log"; exit 1; }
grep 'error:' "$out/broken.log"
expect_rc 2 "$out/broken.log" "$kit" -p "$out/db/gone.json" --cache-dir "$cache"
grep -q "gone.cpp: listed in .* but not found" "$out/broken.log" || { cat "$out/broken.log"; exit 1; }
grep 'error:' "$out/broken.log"

echo "== every SARIF file: SARIF 2.1.0 schema"
validate_sarif "$out"/hostile.sarif "$out"/planted.sarif "$out"/planted-greedy.sarif "$out"/relative.sarif \
  "$out"/texts.sarif "$out"/unmarked.sarif
echo "compliance kit: hostile consumer clean, every planted violation reported, usage and tool errors exit 2"
