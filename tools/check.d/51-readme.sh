# SPDX-License-Identifier: Apache-2.0
# README's commands, in README's order, on a fresh clone of this repository
# (git clone of HEAD into a temporary directory): every command of its sh
# and plain code blocks is run and its promised output checked, or skipped
# for a reason printed here; a command this stage does not know fails it
# (README changed: teach the stage). Made cheap, as README allows: the
# trainers get a small --steps (the flag README lists), `cmake --build
# build/host` builds the three trainers only (tests and benchmarks are stage
# 10's), the `--data` runs get small files of the documented formats, and
# /opt/burtorch is a temporary prefix. Skipped: `tools/check` and `tools/check
# gates` (this suite), `tools/bench` (ten minutes; its plots are stage 50's).
# Also checks that the install recipe leaves build/host's configuration
# alone (BURTORCH_BUILD_PROGRAMS stays on). ~3 minutes on 2 cores.
# suite: docs
# after: 13-demo 10-host
# trees: readme
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
work="$root/build/readme"
rm -rf "$work"
mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
# README's `cmake --build DIR` lines use CMake's default parallelism: 2 jobs.
export CMAKE_BUILD_PARALLEL_LEVEL=2
git clone -q "$root" "$work/clone"
clone="$work/clone"
prefix="$work/prefix"
cd "$clone"
echo "fresh clone of $(git rev-parse --short HEAD) in $clone"

# The commands of README's ```sh and ``` blocks, one per line, in order
# (comments dropped); and README's ```cmake block (the package's use).
python3 - README.md "$work" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
commands, cmake = [], []
for lang, body in re.findall(r"^```(\w*)\n(.*?)^```", text, re.S | re.M):
    if lang in ("sh", ""):
        for line in body.splitlines():
            line = re.sub(r"\s+#.*$", "", line).strip()
            if line:
                commands.append(line)
    elif lang == "cmake" and "find_package(burtorch" in body:
        cmake.append(body)
open(sys.argv[2] + "/commands.txt", "w").write("\n".join(commands) + "\n")
open(sys.argv[2] + "/package.cmake", "w").write(cmake[0] if cmake else "")
PY
[ -s "$work/package.cmake" ] || fail "README has no cmake block with find_package(burtorch"

# Small inputs in the formats README documents: a word list, a text.
printf 'anna\nbob\ncarla\ndavid\nemma\nfrank\ngrace\nhenry\nirene\njack\nkate\nliam\n' > "$clone/names.txt"
for i in $(seq 1 40); do echo "The quick brown fox jumps over the lazy dog number $i."; done > "$clone/input.txt"

trained=0
# A trainer run: README's command with --steps 20 --print-every 10 appended
# (later flags win); checks what README promises of it.
trainer() {
  local out="$work/run$trained.out"
  trained=$((trained + 1))
  # shellcheck disable=SC2086
  $1 --steps 20 --print-every 10 > "$out" || { cat "$out"; fail "'$1' exited non-zero"; }
  grep -Eq '^step 10 loss [0-9.]+$' "$out" && grep -Eq '^step 20 loss [0-9.]+$' "$out" || { cat "$out"; fail "'$1': no step lines"; }
  grep -q '^val loss ' "$out" || fail "'$1': no validation loss"
  local files
  files=$(sed -n 's/^trained 20 steps in .*; wrote \(.*\)$/\1/p' "$out")
  [ -n "$files" ] || { cat "$out"; fail "'$1': the summary line names no files"; }
  for f in ${files//,/}; do [ -s "$f" ] || fail "'$1': $f named but not written"; done
  grep -Eq '^(samples: |sample:$|picture 0: )' "$out" || { cat "$out"; fail "'$1': no samples"; }
  echo "  ran with --steps 20: step lines, val loss, wrote $files, samples"
}

while IFS= read -r cmd; do
  echo "== $cmd"
  case "$cmd" in
    "cmake --workflow --preset demo")
      $cmd > "$work/demo.out" 2>&1 || { tail -30 "$work/demo.out"; fail "the demo workflow failed"; }
      grep -q '100% tests passed' "$work/demo.out" || fail "demo: tests did not all pass"
      grep -q 'Small graph (paper Fig. 2' "$work/demo.out" && grep -q 'wrote .*small_graph.dot' "$work/demo.out" ||
        fail "demo: no small graph and DOT file"
      grep -q 'samples: ' "$work/demo.out" || fail "demo: no sampled words"
      echo "  demo built and run; its tests passed, words sampled" ;;
    "tools/check"|"tools/check gates")
      echo "  skipped: stages of tools/check, which runs this stage" ;;
    "tools/bench")
      echo "  skipped: ten minutes of benchmarks (its plots: stage 50; its programs: stage 60)" ;;
    "cmake --preset install && cmake --build build/install && cmake --install build/install --prefix /opt/burtorch")
      eval "${cmd//\/opt\/burtorch/$prefix}" > "$work/install.out" 2>&1 || { tail -30 "$work/install.out"; fail "install failed"; }
      [ -f "$prefix/lib/cmake/burtorch/burtorchConfig.cmake" ] && [ -f "$prefix/lib/libburtorch.a" ] || fail "install: no package"
      [ ! -e build/host ] || fail "the install recipe touched build/host"
      mkdir -p "$work/app"
      { echo "cmake_minimum_required(VERSION 3.25)"; echo "project(app LANGUAGES CXX)";
        echo "add_executable(app $clone/examples/line_fit/main.cpp)"; cat "$work/package.cmake"; } > "$work/app/CMakeLists.txt"
      cmake -S "$work/app" -B "$work/app/build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
      cmake --build "$work/app/build" >/dev/null
      "$work/app/build/app" | grep -q '^slope ' || fail "README's cmake lines: the program does not run"
      echo "  installed into a temporary prefix; README's find_package/target_link_libraries lines build a program" ;;
    "g++ app.cpp "*)
      cp examples/line_fit/main.cpp app.cpp
      eval "${cmd//\/opt\/burtorch/$prefix}" -o "$work/app_pc" || fail "the pkg-config line does not compile"
      "$work/app_pc" | grep -q '^slope ' || fail "the pkg-config build does not run"
      echo "  compiled and ran (app.cpp: examples/line_fit/main.cpp)" ;;
    "cmake --preset host && cmake --build build/host")
      cmake --preset host > "$work/host.out" 2>&1 || { cat "$work/host.out"; fail "cmake --preset host"; }
      grep -q '^BURTORCH_BUILD_PROGRAMS:BOOL=OFF' build/host/CMakeCache.txt && fail "build/host has the programs off"
      cmake --build build/host --target burtorch-makemore burtorch-gpt burtorch-cnn >> "$work/host.out" 2>&1 ||
        { tail -30 "$work/host.out"; fail "building the trainers"; }
      echo "  configured; built the three trainers (the tests and benchmarks are stage 10's)" ;;
    build/host/targets/host/burtorch-*)
      trainer "$cmd" ;;
    *)
      fail "README has a command this stage does not know: '$cmd' (teach tools/check.d/51-readme.sh)" ;;
  esac
done < "$work/commands.txt"
[ "$trained" -ge 3 ] || fail "only $trained trainer commands in README"
echo "51-readme: every README command run in order (or skipped, said above) on a fresh clone"
