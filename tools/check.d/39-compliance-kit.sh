# SPDX-License-Identifier: Apache-2.0
# The compliance kit users run in their CI (tools/burtorch-compliance,
# installed as bin/burtorch-compliance; docs/compliance-in-your-ci.md):
#  1. docs/misra/deviations.md is the rendering of deviations.json;
#  2. usage errors exit 2;
#  3. tests/compliance/consumer.cpp (every public template for float, double
#     and lanes) builds with the library and runs; analysed through a CMake
#     build's compile_commands.json (our headers as SYSTEM include
#     directories, as an installed package's are), the kit must exit 0: no
#     unsuppressed finding in our headers or in the consumer, every
#     suppression names a deviation, our headers were analysed;
#  4. tests/compliance/planted.cpp (heap, new, recursion, casts, a C array,
#     an uninitialised member next to a BT-DEV comment, in the user's code):
#     the kit must exit 1 with each planted (line, rule) in the SARIF and none
#     of them suppressed, also with a deviation record that tries to
#     suppress everything everywhere, and with relative paths in the
#     compile command;
#  5. a deviation applies only at its site: with the BT-DEV-012 comment
#     removed from a copy of the headers, its finding is reported.
# About 1 minute on 2 cores (cppcheck's MISRA addon on the consumer is most of it).
set -eu
cd "$(dirname "$0")/../.."
out=build/compliance
mkdir -p "$out"
kit=tools/burtorch-compliance

echo "== deviation record: JSON and Markdown agree"
tools/render-deviations --check

for unit in consumer planted; do
  rm -rf "$out/$unit"
  cmake -S tests/compliance -B "$out/$unit" -DBURTORCH_SOURCE_DIR="$PWD" \
    -DBURTORCH_COMPLIANCE_UNIT="$unit.cpp" >"$out/$unit-configure.log"
done

echo "== usage errors exit 2"
expect_rc() {
  local want=$1
  shift
  set +e
  "$@" >"$out/usage.log" 2>&1
  local rc=$?
  set -e
  if [ "$rc" -ne "$want" ]; then
    echo "expected exit $want, got $rc: $*"
    cat "$out/usage.log"
    exit 1
  fi
  echo "exit $rc: $* ($(tail -1 "$out/usage.log" | cut -c1-100))"
}
expect_rc 2 "$kit"
expect_rc 2 "$kit" -p "$out/no-such-dir"
expect_rc 2 "$kit" -p . --no-such-flag
expect_rc 2 "$kit" -p "$out/consumer" --cppcheck no-such-cppcheck-binary
expect_rc 2 "$kit" -p "$out/consumer" --clang-tidy no-such-clang-tidy-binary
expect_rc 0 "$kit" --help

echo "== consumer: builds with the library and runs"
mapfile -t sources < <(find lib -name '*.cpp' | sort)
g++ -std=c++17 -O1 -fno-exceptions -fno-rtti -Wall -Wextra -Wpedantic -Wconversion -Wsign-conversion \
  -Wshadow -Werror -I include -I lib tests/compliance/consumer.cpp "${sources[@]}" -o "$out/consumer-bin"
"$out/consumer-bin"
echo "consumer ran: exit 0"

echo "== consumer: the kit must pass"
# A failure here is reported at the end, after the planted checks have run.
consumer_ok=1
SECONDS=0
"$kit" -p "$out/consumer" --sarif "$out/consumer.sarif" || consumer_ok=0
echo "kit on the consumer: ${SECONDS} s"
python3 tests/compliance/check_sarif.py clean "$out/consumer.sarif" docs/misra/deviations.json || consumer_ok=0

echo "== planted violations: the kit must report each one and fail"
expect_rc 1 "$kit" -p "$out/planted" --sarif "$out/planted.sarif"
cat "$out/usage.log"
python3 tests/compliance/check_sarif.py planted "$out/planted.sarif" tests/compliance/planted.cpp

echo "== planted violations under a record that suppresses everything, everywhere"
python3 - "$out/greedy.json" <<'PY'
import json, sys
d = json.load(open("docs/misra/deviations.json"))
d["deviations"][0]["kit_suppressions"] = [
    {"tool": t, "check": "*", "path": "*", "site_marker": False} for t in ("cppcheck", "clang-tidy")]
json.dump(d, open(sys.argv[1], "w"))
PY
expect_rc 1 "$kit" -p "$out/planted" --sarif "$out/planted-greedy.sarif" --deviations "$out/greedy.json"
python3 tests/compliance/check_sarif.py planted "$out/planted-greedy.sarif" tests/compliance/planted.cpp

echo "== planted violations, compile command with relative paths (as bear writes them)"
rm -rf "$out/relative"
mkdir -p "$out/relative"
cat >"$out/relative/compile_commands.json" <<JSON
[{"directory": "$PWD/$out/relative",
  "command": "c++ -std=c++17 -isystem ../../../include -c ../../../tests/compliance/planted.cpp -o planted.o",
  "file": "../../../tests/compliance/planted.cpp"}]
JSON
expect_rc 1 "$kit" -p "$out/relative" --sarif "$out/relative.sarif"
python3 tests/compliance/check_sarif.py planted "$out/relative.sarif" tests/compliance/planted.cpp

echo "== a deviation applies only at its documented site"
# A copy of the headers in which FixedTape's constructor no longer carries its
# BT-DEV-012 comment: cppcheck's uninitMemberVar there must come back.
rm -rf "$out/unmarked"
mkdir -p "$out/unmarked"
cp -r include "$out/unmarked/include"
sed -i 's|// BT-DEV-012: storage_|// (no ID): storage_|' "$out/unmarked/include/burtorch/tape.hpp"
cmake -S tests/compliance -B "$out/unmarked/build" -DBURTORCH_SOURCE_DIR="$PWD/$out/unmarked" \
  -DBURTORCH_COMPLIANCE_UNIT=planted.cpp >"$out/unmarked-configure.log"
expect_rc 1 "$kit" -p "$out/unmarked/build" --only cppcheck --sarif "$out/unmarked.sarif"
python3 - "$out/unmarked.sarif" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
hits = [r for run in runs for r in run["results"]
        if r["ruleId"] == "uninitMemberVar" and r["properties"].get("burtorchPath") == "include/burtorch/tape.hpp"]
if not hits or any(r.get("suppressions") for r in hits):
    sys.exit("FAIL: uninitMemberVar in tape.hpp without its BT-DEV-012 comment was not reported unsuppressed")
print(f"uninitMemberVar in tape.hpp without its BT-DEV-012 comment: reported, unsuppressed ({len(hits)})")
PY

if [ "$consumer_ok" -ne 1 ]; then
  echo "FAILED: the kit reports unsuppressed findings on tests/compliance/consumer.cpp (see above)"
  exit 1
fi
echo "compliance kit: consumer clean, every planted violation reported"
