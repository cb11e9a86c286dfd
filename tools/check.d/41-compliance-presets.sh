# SPDX-License-Identifier: Apache-2.0
# The installed compliance kit on a product's build, for every cross preset
# the project ships (CMakePresets.json: each configure preset with a
# toolchain file) and the host:
#  1. each preset's library, as its stage built it, installed once
#     (build/prefix/PRESET, tools/check.d/lib/trees.sh);
#  2. tests/compliance/firmware (10 units, one C) is built out of tree
#     against the install with the install's toolchain file: a firmware for
#     the board (Cortex-M) or a Linux program (aarch64, armv7); the Cortex-M4
#     firmware runs under QEMU, the aarch64 program under qemu-aarch64;
#  3. the installed kit on it exits 0, our headers analysed, nothing
#     unsuppressed (Cortex-M4: all 10 units; the other presets: the unit
#     that uses libburtorch and the C unit); every SARIF file validates;
#  4. Cortex-M4 only: planted violations added to the user's build are
#     reported (exit 1, through the cache); a database pointing at a moved
#     install is a tool error (exit 2) naming the missing header; the same
#     firmware built by a Makefile, analysed through bear's database and a
#     hand-written one; the firmware built with analysis turned on
#     (CMAKE_CXX_CLANG_TIDY, CMAKE_<LANG>_CPPCHECK with the kit's settings):
#     the kit's cold run must take at most KIT_MARGIN times that build;
#  5. the kit on the examples (line_fit, xor_nn on the host install,
#     xor_firmware on the Cortex-M4 install): exit 0, nothing in our
#     headers, nothing in the examples' own code.
# Writes build/compliance-presets/measure.json (wall times, load average);
# tools/compliance-timings renders it into docs/compliance-in-your-ci.md
# (--write) and checks the docs' block (--check, run here).
# About 3.5 minutes of CPU time (6 minutes of wall time at load average 7 on 2
# cores; docs/compliance-in-your-ci.md, "Measured", has the last run).
# suite: compliance
# after: 10-host 20-aarch64-linux 21-armv7-linux 22-cortex-m0 23-cortex-m4 24-cortex-m7 25-cortex-m33 26-cortex-m55
# trees: compliance-presets
set -eu
cd "$(dirname "$0")/../.."
# The kit's time is held to the time of a build with analysis turned on: that
# build compiles (no compiler cache), as a product's CI build does.
unset CMAKE_C_COMPILER_LAUNCHER CMAKE_CXX_COMPILER_LAUNCHER
root=$PWD
work="$root/build/compliance-presets"
rm -rf "$work"
mkdir -p "$work"
cache="$work/cache"
results="$work/results.tsv"  # key, value: collected into measure.json
: >"$results"
note() { printf '%s\t%s\n' "$1" "$2" >>"$results"; }
fail() { echo "FAIL: $*"; exit 1; }
# shellcheck source=tools/check.d/lib/compliance.sh
. tools/check.d/lib/compliance.sh
# The kit's cold run on the Cortex-M4 firmware may take at most this many
# times the CPU seconds of the same firmware's build with analysis turned on
# (docs say why).
KIT_MARGIN=2.0
note load_before "$(cut -d' ' -f1 /proc/loadavg)"
note nproc "$(nproc)"
t_stage=$(date +%s.%N)
now() { date +%s.%N; }
since() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$1" "$(now)"; }
# CPU seconds (user + system) of the commands this shell has waited for, so
# far: the margin below compares the CPU the kit and the build take, which
# other stages running beside this one (tools/check) change less than wall
# time.
cpu() {  # cpu VAR: VAR = the CPU seconds so far (times runs in this shell, not a subshell)
  times >"$work/times.txt"
  printf -v "$1" '%s' "$(python3 - "$work/times.txt" <<'PY'
import re, sys
line = open(sys.argv[1]).read().splitlines()[-1]
print(sum(int(m) * 60 + float(s) for m, s in re.findall(r"(\d+)m([\d.]+)s", line)))
PY
)"
}
cpu_since() {  # cpu_since START: the CPU seconds since START (a value of cpu)
  local now_cpu
  cpu now_cpu
  python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$1" "$now_cpu"
}

clean_sarif() {  # clean_sarif FILE: nothing unsuppressed, our headers analysed; schema
  python3 tests/compliance/check_sarif.py clean "$1" docs/misra/deviations.json
  validate_sarif "$1"
}

# name|toolchain file|-D options of each cross preset of the registry
# (targets/targets.json), from CMakePresets.json.
mapfile -t presets < <(python3 - <<'PY'
import json
p = {c["name"]: c for c in json.load(open("CMakePresets.json"))["configurePresets"]}
def resolved(name):
    c = p[name]
    out = {"toolchainFile": None, "cacheVariables": {}}
    for parent in ([c["inherits"]] if isinstance(c.get("inherits"), str) else c.get("inherits", [])):
        r = resolved(parent)
        out["toolchainFile"] = r["toolchainFile"] or out["toolchainFile"]
        out["cacheVariables"].update(r["cacheVariables"])
    out["toolchainFile"] = c.get("toolchainFile", out["toolchainFile"])
    out["cacheVariables"].update(c.get("cacheVariables", {}))
    return out
import sys
sys.path.insert(0, "tools")
from targets import by_kind  # the cross targets of targets/targets.json
for name in (t["preset"] for t in by_kind("linux", "mcu")):
    c = p[name]
    r = resolved(name)
    tc = r["toolchainFile"].replace("${sourceDir}/", "")
    opts = " ".join(f"-D{k}={v}" for k, v in sorted(r["cacheVariables"].items()))
    print(f"{name}|{tc}|{opts}")
PY
)
[ "${#presets[@]}" -ge 7 ] || fail "expected the 7 cross presets in CMakePresets.json, found ${#presets[@]}"

# The presets' installs, shared with the other stages (tools/check.d/lib/trees.sh).
. tools/check.d/lib/trees.sh

for entry in "${presets[@]}"; do
  IFS='|' read -r name tc opts <<<"$entry"
  echo "== $name: library installed, firmware built against the install"
  prefix=$(preset_prefix "$name") || fail "$name: no install"
  installed_tc="$prefix/share/burtorch/toolchains/$(basename "$tc")"
  [ -f "$installed_tc" ] || fail "$name: the install has no toolchain file $(basename "$tc")"
  kit="$prefix/bin/burtorch-compliance"
  fw="$work/fw-$name"
  case "$name" in
    cortex-*) find_pkg=(-DCMAKE_PREFIX_PATH="$prefix") ;;
    *) find_pkg=(-Dburtorch_DIR="$prefix/lib/cmake/burtorch") ;;  # the toolchain re-roots CMAKE_PREFIX_PATH
  esac
  cmake -S tests/compliance/firmware -B "$fw" -DCMAKE_TOOLCHAIN_FILE="$installed_tc" "${find_pkg[@]}" \
    >"$fw.log" 2>&1 || { cat "$fw.log"; fail "$name: firmware configure"; }
  t0=$(now)
  cmake --build "$fw" -j2 >>"$fw.log" 2>&1 || { tail -30 "$fw.log"; fail "$name: firmware build"; }
  note "build_$name" "$(since "$t0")"
  case "$name" in
    cortex-m4)
      "$prefix/share/burtorch/tools/qemu-run" --machine mps2-an386 --timeout 60 -- "$fw/fw.elf" >"$fw.run" 2>&1 ||
        { cat "$fw.run"; fail "$name: the firmware failed under QEMU"; }
      grep 'final loss' "$fw.run" ;;
    aarch64-linux)
      qemu-aarch64 -L /usr/aarch64-linux-gnu "$fw/fw" >"$fw.run" 2>&1 || { cat "$fw.run"; fail "$name: the program failed"; }
      grep 'final loss' "$fw.run" ;;
    cortex-*) [ -f "$fw/fw.elf" ] || fail "$name: no fw.elf" ;;
    *) [ -x "$fw/fw" ] || fail "$name: no program" ;;
  esac
  if [ "$name" = cortex-m4 ]; then
    only=()
  else
    only=(--files '/src/(model\.cpp|crc16\.c)$')
  fi
  t0=$(now)
  cpu c0
  expect_rc 0 "$fw.kit" "$kit" -p "$fw" --cache-dir "$cache" --srcroot "$root" --sarif "$fw.sarif" "${only[@]}"
  note "kit_$name" "$(since "$t0")"
  cpu_since "$c0" >"$work/cpu.txt"
  note "kit_cpu_$name" "$(cat "$work/cpu.txt")"
  grep -E 'burtorch-compliance: |unsuppressed' "$fw.kit"
  clean_sarif "$fw.sarif"
done

m4=$(preset_prefix cortex-m4)
kit="$m4/bin/burtorch-compliance"
fw="$work/fw-cortex-m4"
units=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))))" "$fw/compile_commands.json")
[ "$units" -eq 10 ] || fail "the firmware's database lists $units units, not 10"
note units_cortex-m4 "$units"

echo "== cortex-m4: the kit again, nothing changed (every result from the cache)"
t0=$(now)
expect_rc 0 "$work/warm.kit" "$kit" -p "$fw" --cache-dir "$cache" --srcroot "$root"
note kit_warm "$(since "$t0")"
grep -q '20 of 20 analyses from the cache' "$work/warm.kit" || { cat "$work/warm.kit"; fail "not every analysis came from the cache"; }

echo "== cortex-m4: planted violations added to the build: reported, exit 1"
cmake -S tests/compliance/firmware -B "$fw" -DFW_EXTRA_SOURCES="$root/tests/compliance/planted.cpp" >>"$fw.log" 2>&1
t0=$(now)
expect_rc 1 "$work/planted.kit" "$kit" -p "$fw" --cache-dir "$cache" --srcroot "$root" --sarif "$work/planted.sarif"
note kit_one_more_file "$(since "$t0")"
grep -q '20 of 22 analyses from the cache' "$work/planted.kit" || { cat "$work/planted.kit"; fail "the unchanged units were analysed again"; }
python3 tests/compliance/check_sarif.py planted "$work/planted.sarif" tests/compliance/planted.cpp
validate_sarif "$work/planted.sarif"
cmake -S tests/compliance/firmware -B "$fw" -DFW_EXTRA_SOURCES= >>"$fw.log" 2>&1

echo "== cortex-m4: a database that points at a moved install: tool error, exit 2"
mkdir -p "$work/moved"
sed "s|$m4/include|$work/no-longer-here/include|g" "$fw/compile_commands.json" >"$work/moved/compile_commands.json"
expect_rc 2 "$work/moved.kit" "$kit" -p "$work/moved" --cache-dir "$cache" --sarif "$work/moved.sarif"
grep -q "model.cpp: arm-none-eabi-g++ cannot preprocess it: missing header 'burtorch/" "$work/moved.kit" ||
  { cat "$work/moved.kit"; fail "the missing header is not named"; }
grep 'error:' "$work/moved.kit" | head -3
if grep -q 'unsuppressed findings: [1-9]' "$work/moved.kit"; then fail "findings from a broken database"; fi
validate_sarif "$work/moved.sarif"

echo "== cortex-m4: the firmware built by a Makefile; bear's and a hand-written database"
mk="$work/make"
mkdir -p "$mk"
(cd "$mk" && bear -- make -C "$root/tests/compliance/make-firmware" BURTORCH="$m4" OUT="$mk/out" >"$mk/make.log" 2>&1) ||
  { tail -20 "$mk/make.log"; fail "make"; }
[ -f "$mk/out/fw.elf" ] || fail "make built no fw.elf"
n=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))))" "$mk/compile_commands.json")
[ "$n" -eq 10 ] || fail "bear recorded $n compile commands, not 10"
expect_rc 0 "$mk/bear.kit" "$kit" -p "$mk" --cache-dir "$cache" --srcroot "$root" --sarif "$mk/bear.sarif" \
  --files '/src/(model\.cpp|crc16\.c)$'
grep -E 'burtorch-compliance: |unsuppressed' "$mk/bear.kit"
clean_sarif "$mk/bear.sarif"
mkdir -p "$mk/hand"
sed -e "s|@SRC@|$root/tests/compliance/firmware/src|g" -e "s|@OUT@|$mk/out|g" -e "s|@BURTORCH@|$m4|g" \
  tests/compliance/make-firmware/compile_commands.in.json >"$mk/hand/compile_commands.json"
expect_rc 0 "$mk/hand.kit" "$kit" -p "$mk/hand" --cache-dir "$cache" --srcroot "$root" --sarif "$mk/hand.sarif"
grep -E 'burtorch-compliance: |unsuppressed' "$mk/hand.kit"
clean_sarif "$mk/hand.sarif"

echo "== cortex-m4: the same firmware built with analysis turned on"
mapfile -t hooks < <(python3 tests/compliance/analysis_hooks.py "$kit" "$work/hooks" arm-none-eabi-g++ \
  -mthumb -mcpu=cortex-m4 -mfpu=fpv4-sp-d16 -mfloat-abi=hard -ffunction-sections -fdata-sections -Os)
cmake -S tests/compliance/firmware -B "$work/fw-analysis" -DCMAKE_TOOLCHAIN_FILE="$m4/share/burtorch/toolchains/cortex-m4.cmake" \
  -DCMAKE_PREFIX_PATH="$m4" "${hooks[@]}" >"$work/fw-analysis.log" 2>&1
t0=$(now)
cpu c0
cmake --build "$work/fw-analysis" -j2 >>"$work/fw-analysis.log" 2>&1 || { tail -30 "$work/fw-analysis.log"; fail "analysis build"; }
note build_with_analysis "$(since "$t0")"
cpu_since "$c0" >"$work/cpu.txt"
note build_cpu_with_analysis "$(cat "$work/cpu.txt")"
grep -q -- '--tidy=' "$work/fw-analysis/CMakeFiles/fw.dir/build.make" && grep -q -- '--cppcheck=' \
  "$work/fw-analysis/CMakeFiles/fw.dir/build.make" || fail "the analysis build does not run clang-tidy and cppcheck"

echo "== the kit on the examples"
host_prefix=$(preset_prefix host) || fail "host: no install"
for ex in line_fit xor_nn xor_firmware; do
  if [ "$ex" = xor_firmware ]; then
    args=(-DCMAKE_TOOLCHAIN_FILE="$m4/share/burtorch/toolchains/cortex-m4.cmake" -DCMAKE_PREFIX_PATH="$m4")
    exkit=$kit
  else
    args=(-DCMAKE_PREFIX_PATH="$host_prefix")
    exkit="$host_prefix/bin/burtorch-compliance"
  fi
  cmake -S "examples/$ex" -B "$work/ex-$ex" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON "${args[@]}" >"$work/ex-$ex.log" 2>&1
  t0=$(now)
  set +e
  "$exkit" -p "$work/ex-$ex" --cache-dir "$cache" --srcroot "$root" --sarif "$work/ex-$ex.sarif" >"$work/ex-$ex.kit" 2>&1
  rc=$?
  set -e
  note "kit_example_$ex" "$(since "$t0")"
  [ "$rc" -le 1 ] || { cat "$work/ex-$ex.kit"; fail "$ex: the kit could not analyse it"; }
  grep -E 'burtorch-compliance: |unsuppressed' "$work/ex-$ex.kit"
  grep -q "unsuppressed findings: [0-9]* ([0-9]* in your code, 0 in libburtorch)" "$work/ex-$ex.kit" ||
    fail "$ex: findings in libburtorch's headers"
  # The examples write what docs/compliance-in-your-ci.md teaches: nothing
  # in their own code either.
  [ "$rc" -eq 0 ] && grep -q "unsuppressed findings: 0 (0 in your code" "$work/ex-$ex.kit" ||
    { cat "$work/ex-$ex.kit"; fail "$ex: findings in the example's own code"; }
  note "findings_example_$ex" "$(sed -n 's/.*unsuppressed findings: \([0-9]*\) .*/\1/p' "$work/ex-$ex.kit")"
  validate_sarif "$work/ex-$ex.sarif"
done

note load_after "$(cut -d' ' -f1 /proc/loadavg)"
note stage_seconds "$(since "$t_stage")"
note margin "$KIT_MARGIN"
python3 - "$results" "$work/measure.json" <<'PY'
import json, platform, subprocess, sys, datetime
data = {}
for line in open(sys.argv[1]):
    k, v = line.rstrip("\n").split("\t")
    data[k] = float(v) if k not in ("load_before", "load_after") else float(v)
data["date"] = datetime.date.today().isoformat()
data["machine"] = platform.machine()
data["cppcheck"] = subprocess.run(["cppcheck", "--version"], capture_output=True, text=True).stdout.split()[-1]
data["clang_tidy"] = next(w for w in subprocess.run(["clang-tidy", "--version"], capture_output=True,
                                                    text=True).stdout.split() if w[:1].isdigit())
json.dump(data, open(sys.argv[2], "w"), indent=1, sort_keys=True)
print(json.dumps(data, sort_keys=True))
PY
python3 - "$work/measure.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
kit, build = m["kit_cpu_cortex-m4"], m["build_cpu_with_analysis"]
print(f"kit on the 10-unit Cortex-M4 firmware: {kit:.1f} CPU s ({m['kit_cortex-m4']:.1f} s of wall time); the build "
      f"with analysis turned on: {build:.1f} CPU s ({m['build_with_analysis']:.1f} s) (limit {m['margin']} x = "
      f"{m['margin'] * build:.1f} CPU s)")
if kit > m["margin"] * build:
    sys.exit("FAIL: the kit took longer than the margin allows")
PY
tools/compliance-timings --check "$work/measure.json"
echo "compliance kit on every preset's install: our headers silent, planted violations and broken databases reported"
