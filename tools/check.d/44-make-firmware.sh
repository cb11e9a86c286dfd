# SPDX-License-Identifier: Apache-2.0
# Firmware without CMake, and the getting-started page's code: on the
# cortex-m4 preset's install (MPS2 AN386, MinSizeRel; build/prefix/):
#  - checks that docs/getting-started-mcu.md shows examples/firmware-start
#    as it is: its ```cpp blocks, in order, are main.cpp (after the file's
#    opening comment), its ```make block the Makefile and its ```cmake
#    block the CMakeLists.txt (each after its comment lines), so every
#    snippet of the page is compiled below;
#  - builds that firmware with CMake against the package and with Make from
#    the installed share/burtorch/burtorch.mk (the library compiled from the
#    installed sources by the fragment's rules);
#  - checks that every object the fragment compiles is byte for byte the
#    member of the installed archive built from the same source, that the
#    two firmware images (objcopy -O binary) are identical, and that both
#    print the same lines under QEMU, ending in a loss below 0.01, and that
#    the training memory's size in the ELF is the plan's bytes it prints;
#  - runs the installed compliance kit on the Make firmware through bear's
#    database (the library's sources from share/burtorch/src are the
#    library's: 0 findings there, none in the user's main.cpp, exit 0), on
#    the same database with tests/compliance/planted.cpp added (each planted
#    violation reported as the user's, exit 1), and on the same firmware
#    linked against the installed archives (exit 0);
#  - runs the kit on examples/xor_firmware built with CMake against the
#    install: 0 findings, exit 0;
#  - compiles docs/training.md's memory-plan block (its static_asserts of
#    plan.bytes == sizeof) for the host (64-bit) and the Cortex-M4.
# About 55 s on 2 cores at load average 1.7 with a warm compiler cache, 150 s
# at load average 5.7 (build/check-logs/44-make-firmware.time has the last
# run); most of it the kit's cold runs: the 17 units of the Make build (the
# library's sources included; 25 s at load 1.7), then xor_firmware (12 s).
# suite: compliance
# jobs: 1
# after: 23-cortex-m4
# trees: make-firmware
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
work="$root/build/make-firmware"
rm -rf "$work"
mkdir -p "$work"
example="$root/examples/firmware-start"
fail() { echo "FAIL: $*"; exit 1; }

echo "== docs/getting-started-mcu.md shows examples/firmware-start as it is"
python3 - "$root/docs/getting-started-mcu.md" "$example" <<'PY'
import re, sys
doc, example = sys.argv[1], sys.argv[2]
blocks = {}
for lang, body in re.findall(r"^```(\w*)\n(.*?)^```", open(doc).read(), re.S | re.M):
    blocks.setdefault(lang, []).append(body)

def body_of(path, comment):
    lines = open(path).read().splitlines(keepends=True)
    while lines and (lines[0].startswith(comment) or not lines[0].strip()):
        lines.pop(0)
    return "".join(lines)

def same(lang, path, comment, joined):
    want = body_of(path, comment)
    got = "\n".join(blocks.get(lang, [])) if joined else "".join(blocks.get(lang, [])[:1])
    if got != want:
        import difflib
        sys.stdout.writelines(difflib.unified_diff(want.splitlines(True), got.splitlines(True), path, doc))
        sys.exit(f"FAIL: the ```{lang} blocks of {doc} are not {path}")
    print(f"  {len(blocks[lang]) if joined else 1} ```{lang} block(s): {path.split('/')[-1]}, {len(want.splitlines())} lines")

same("cpp", f"{example}/main.cpp", "//", True)
same("make", f"{example}/Makefile", "#", False)
same("cmake", f"{example}/CMakeLists.txt", "#", False)
PY

echo "== the cortex-m4 preset's install (mps2-an386, MinSizeRel; build/prefix/cortex-m4)"
. "$root/tools/check.d/lib/trees.sh"
prefix=$(preset_prefix cortex-m4) || fail "no cortex-m4 install"
mk="$prefix/share/burtorch/burtorch.mk"
[ -f "$mk" ] || fail "the install lacks share/burtorch/burtorch.mk"
tc="$prefix/share/burtorch/toolchains/cortex-m4.cmake"

echo "== examples/firmware-start with CMake"
cmake -S "$example" -B "$work/cmake" -DCMAKE_TOOLCHAIN_FILE="$tc" -DCMAKE_PREFIX_PATH="$prefix" \
      -DCMAKE_BUILD_TYPE=MinSizeRel >/dev/null
cmake --build "$work/cmake" >/dev/null
ctest --test-dir "$work/cmake" --no-tests=error -V > "$work/cmake.ctest" 2>&1 || { cat "$work/cmake.ctest"; fail "the CMake firmware failed"; }

echo "== examples/firmware-start with Make (burtorch.mk)"
make -C "$example" BURTORCH_PREFIX="$prefix" BUILD="$work/make" -j2 > "$work/make.log" 2>&1 ||
  { cat "$work/make.log"; fail "the Make build failed"; }
make -C "$example" BURTORCH_PREFIX="$prefix" BUILD="$work/make" run > "$work/make.out" 2>&1 ||
  { cat "$work/make.out"; fail "the Make firmware failed"; }

if grep -n "^qemu-system-arm:" "$work/make.out" "$work/cmake.ctest"; then fail "a stray line from QEMU"; fi

echo "== the fragment's objects are the installed archives' members"
objects=0
for pair in "libburtorch.a:$work/make/burtorch/libburtorch.a" \
            "libburtorch_port_cortex_m_core.a:$work/make/burtorch/libburtorch_port.a" \
            "libburtorch_port_semihosting.a:$work/make/burtorch/libburtorch_port.a"; do
  installed="$prefix/lib/${pair%%:*}"
  made="${pair#*:}"
  mkdir -p "$work/ar/${pair%%:*}" "$work/ar/made-${pair%%:*}"
  (cd "$work/ar/${pair%%:*}" && arm-none-eabi-ar x "$installed")
  (cd "$work/ar/made-${pair%%:*}" && arm-none-eabi-ar x "$made")
  for member in $(arm-none-eabi-ar t "$installed"); do
    made_member="$work/ar/made-${pair%%:*}/${member%.obj}.o"
    [ -f "$made_member" ] || fail "${pair%%:*}: $member has no object in the Make build"
    cmp -s "$work/ar/${pair%%:*}/$member" "$made_member" || fail "${pair%%:*}: $member differs from the Make build's"
    objects=$((objects + 1))
  done
done
[ "$objects" -gt 10 ] || fail "only $objects objects compared"
echo "  $objects objects identical"
# Member names are file names: two sources of one name would hide one.
[ "$(arm-none-eabi-ar t "$prefix/lib/libburtorch.a" | sort | uniq -d)" = "" ] || fail "two members of one name"

echo "== one firmware image, one output"
arm-none-eabi-objcopy -O binary "$work/cmake/start.elf" "$work/cmake.bin"
arm-none-eabi-objcopy -O binary "$work/make/start.elf" "$work/make.bin"
cmp "$work/cmake.bin" "$work/make.bin" || fail "the two firmware images differ"
echo "  image of $(stat -c %s "$work/make.bin") bytes, identical"
sed 's/^[0-9]*: //' "$work/cmake.ctest" | grep -E '^(memory plan|epoch|xor)' > "$work/cmake.lines" || true
grep -E '^(memory plan|epoch|xor)' "$work/make.out" > "$work/make.lines" || true
[ -s "$work/make.lines" ] || { cat "$work/make.out"; fail "the Make firmware printed nothing"; }
diff "$work/cmake.lines" "$work/make.lines" || fail "the two firmware print different lines"
python3 - "$work/make.lines" <<'PY'
import sys
losses = [float(l.split()[3]) for l in open(sys.argv[1]) if l.startswith("epoch")]
assert losses and losses[-1] < 0.01, f"FAIL: final loss {losses[-1:]}"
print(f"  {len(losses)} loss lines, the last {losses[-1]:.3g}")
PY
plan=$(sed -n 's/^memory plan: \([0-9]*\) bytes.*/\1/p' "$work/make.lines")
size=$(arm-none-eabi-nm -C -S "$work/make/start.elf" | awk '/::g_memory$/ && !/guard variable/ { print $2 }')
size=$((16#${size:-x}))
[ -n "$plan" ] && [ "$plan" = "$size" ] || fail "g_memory is ${size:-?} bytes, the plan printed ${plan:-?}"
echo "  g_memory: $size bytes in the ELF, the plan's bytes"
arm-none-eabi-size "$work/make/start.elf"

echo "== the installed kit on the Make firmware (bear; the library compiled from share/burtorch/src)"
. "$root/tools/check.d/lib/compliance.sh"
kit="$prefix/bin/burtorch-compliance"
cache="$work/kit-cache"
mkdir -p "$work/bear"
(cd "$work/bear" && bear -- make -C "$example" BURTORCH_PREFIX="$prefix" BUILD="$work/bear/build" -j2) \
  > "$work/bear.log" 2>&1 || { cat "$work/bear.log"; fail "bear -- make failed"; }
cd "$root"
expect_rc 0 "$work/bear.kit" "$kit" -p "$work/bear" -j 2 --cache-dir "$cache" --srcroot "$root" --sarif "$work/bear.sarif"
grep -q "unsuppressed findings: 0 (0 in your code, 0 in libburtorch)" "$work/bear.kit" ||
  { cat "$work/bear.kit"; fail "findings on the Make firmware"; }
for f in lib/checkpoint.cpp port/cortex-m/port_cortex_m.cpp targets/boards/cortex-m/board.cpp; do
  grep -q "^  $f (libburtorch): 0 finding(s)" "$work/bear.kit" || { cat "$work/bear.kit"; fail "$f: not analysed as the library's"; }
done
python3 tests/compliance/check_sarif.py clean-sources "$work/bear.sarif" docs/misra/deviations.json
validate_sarif "$work/bear.sarif"
grep "burtorch-compliance:" "$work/bear.kit" | head -n 1

echo "== the same database with planted violations: reported in the user's code, exit 1"
python3 - "$work/bear/compile_commands.json" "$root/tests/compliance/planted.cpp" "$work/planted/compile_commands.json" <<'PY'
import json, os, sys
db = json.load(open(sys.argv[1]))
main = next(e for e in db if e["file"].endswith("main.cpp"))
planted = dict(main, file=sys.argv[2], output=os.path.dirname(sys.argv[3]) + "/planted.o")
key = "arguments" if "arguments" in main else "command"
if key == "arguments":
    planted["arguments"] = [sys.argv[2] if a.endswith("main.cpp") else planted["output"] if a.endswith("main.o") else a
                            for a in main["arguments"]]
else:
    planted["command"] = main["command"].replace("main.cpp", sys.argv[2]).replace("main.o", planted["output"])
os.makedirs(os.path.dirname(sys.argv[3]), exist_ok=True)
json.dump(db + [planted], open(sys.argv[3], "w"), indent=1)
PY
expect_rc 1 "$work/planted.kit" "$kit" -p "$work/planted" -j 2 --cache-dir "$cache" --srcroot "$root" --sarif "$work/planted.sarif"
grep -q "unsuppressed findings: [1-9][0-9]* ([1-9][0-9]* in your code, 0 in libburtorch)" "$work/planted.kit" ||
  { cat "$work/planted.kit"; fail "the planted violations are not all the user's"; }
python3 tests/compliance/check_sarif.py planted "$work/planted.sarif" tests/compliance/planted.cpp
validate_sarif "$work/planted.sarif"

echo "== the same firmware linked against the installed archives"
mkdir -p "$work/archives"
cat > "$work/archives/Makefile" <<MK
# The firmware of examples/firmware-start, linked against the install's archives.
BURTORCH_PREFIX := $prefix
include \$(BURTORCH_PREFIX)/share/burtorch/burtorch.mk
start.elf: main.o
	\$(BURTORCH_CXX) \$(BURTORCH_LDFLAGS) \$(BURTORCH_LINK) -Wl,--defsym=__burtorch_ram_budget=24576 \\
	  main.o \$(BURTORCH_BOARD_PREBUILT_OBJECTS) \$(BURTORCH_ARCHIVES) -o \$@
main.o: $example/main.cpp
	\$(BURTORCH_CXX) \$(BURTORCH_CPPFLAGS) \$(BURTORCH_CXXFLAGS) -c \$< -o \$@
run: start.elf
	\$(BURTORCH_QEMU_RUN) start.elf
MK
(cd "$work/archives" && bear -- make -j2) > "$work/archives.log" 2>&1 || { cat "$work/archives.log"; fail "the archive build failed"; }
[ "$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))))' "$work/archives/compile_commands.json")" = 1 ] ||
  fail "the archive build compiled more than main.cpp"
make -s -C "$work/archives" run > "$work/archives.out" 2>&1 ||
  { cat "$work/archives.out"; fail "the archive-linked firmware failed"; }
grep -E '^(memory plan|epoch|xor)' "$work/archives.out" | diff "$work/make.lines" - || fail "the archive-linked firmware prints other lines"
if grep -n "^qemu-system-arm:" "$work/archives.out"; then fail "a stray line from QEMU"; fi
expect_rc 0 "$work/archives.kit" "$kit" -p "$work/archives" -j 2 --cache-dir "$cache" --srcroot "$root" --sarif "$work/archives.sarif"
grep -q "unsuppressed findings: 0 (0 in your code, 0 in libburtorch)" "$work/archives.kit" ||
  { cat "$work/archives.kit"; fail "findings on the archive-linked firmware"; }
validate_sarif "$work/archives.sarif"
grep "burtorch-compliance:" "$work/archives.kit" | head -n 1

echo "== the kit on examples/xor_firmware built with CMake: nothing in the user's code either (exit 0)"
# The patterns docs/compliance-in-your-ci.md teaches ("A firmware the kit
# accepts"): the training memory as a function-local static, std::array
# for buffers and tables. An example that slips back into a global or a C
# array fails here (firmware-start's main.cpp: the Make database above).
for ex in xor_firmware; do
  cmake -S "$root/examples/$ex" -B "$work/kit-$ex" -DCMAKE_TOOLCHAIN_FILE="$tc" -DCMAKE_PREFIX_PATH="$prefix" \
        -DCMAKE_BUILD_TYPE=MinSizeRel -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >"$work/kit-$ex.log" 2>&1 ||
    { cat "$work/kit-$ex.log"; fail "$ex does not configure"; }
  expect_rc 0 "$work/kit-$ex.kit" "$kit" -p "$work/kit-$ex" -j 2 --cache-dir "$cache" --srcroot "$root" \
    --sarif "$work/kit-$ex.sarif"
  grep -q "unsuppressed findings: 0 (0 in your code, 0 in libburtorch)" "$work/kit-$ex.kit" ||
    { cat "$work/kit-$ex.kit"; fail "findings in examples/$ex"; }
  validate_sarif "$work/kit-$ex.sarif"
  echo "  examples/$ex: $(grep "burtorch-compliance:" "$work/kit-$ex.kit" | head -n 1)"
done

echo "== docs/training.md's memory-plan block compiles (host, cortex-m4)"
python3 - "$root/docs/training.md" "$work/plan_snippet.cpp" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
section = text[text.index("## Memory plans"):]
block = re.search(r"^```cpp\n(.*?)^```", section, re.S | re.M).group(1)
assert "TrainingMemory" in block, "the memory-plan block no longer declares TrainingMemory"
open(sys.argv[2], "w").write(
    "// The memory-plan block of docs/training.md, at namespace scope.\n"
    "#include <burtorch/burtorch.hpp>\n#include <burtorch/nn/nn.hpp>\n#include <cstddef>\n"
    "namespace bt = burtorch;\nnamespace nn = burtorch::nn;\n"
    "constexpr std::size_t kRamBudget = std::size_t{1} << 20U;\n" + block)
PY
g++ -std=c++17 -Wall -Wextra -Werror -fsyntax-only -I"$prefix/include" "$work/plan_snippet.cpp" ||
  fail "docs/training.md's block does not compile for the host"
flags=$(printf 'include %s\nflags:\n\t@echo $(BURTORCH_CXXFLAGS)\n' "$mk" | make -s -f - flags)
# shellcheck disable=SC2086
arm-none-eabi-g++ $flags -Wall -Wextra -Werror -I"$prefix/include" -c "$work/plan_snippet.cpp" -o "$work/plan_snippet.o" ||
  fail "docs/training.md's block does not compile for the cortex-m4"
echo "  compiled: g++ (host), arm-none-eabi-g++ $flags"
echo "44-make-firmware: the page's code builds, the Make firmware is the CMake firmware byte for byte"
