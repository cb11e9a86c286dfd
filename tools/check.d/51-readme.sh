# SPDX-License-Identifier: Apache-2.0
# README's commands, in README's order, on a fresh clone of this repository
# (git clone of HEAD into a temporary directory): every command of its sh
# and plain code blocks is run and its promised output checked, or skipped
# for a reason printed here; a command this stage does not know fails it
# (README changed: teach the stage). The demo workflow runs as written;
# /opt/burtorch is a temporary prefix, and README's cmake block and
# pkg-config line build examples/line_fit against that install. `tools/check`
# with names is not run (those stages are this suite's neighbours) but its
# names must select stages (`tools/check --dry-run NAME...`), and
# `tools/check --list` must list the suites; `tools/check` alone is this
# run. Also checks that the install recipe leaves build/host alone. ~2
# minutes on 2 cores.
# suite: docs
# jobs: 1
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

while IFS= read -r cmd; do
  echo "== $cmd"
  case "$cmd" in
    "cmake --workflow --preset demo")
      $cmd < /dev/null > "$work/demo.out" 2>&1 || { tail -30 "$work/demo.out"; fail "the demo workflow failed"; }
      grep -q '100% tests passed' "$work/demo.out" || fail "demo: tests did not all pass"
      grep -q 'Small graph (paper Fig. 2' "$work/demo.out" && grep -q 'wrote .*small_graph.dot' "$work/demo.out" ||
        fail "demo: no small graph and DOT file"
      grep -q 'samples: ' "$work/demo.out" || fail "demo: no sampled words"
      echo "  demo built and run; its tests passed, words sampled" ;;
    "tools/check")
      echo "  skipped: the full run, which runs this stage" ;;
    "tools/check --list")
      $cmd < /dev/null > "$work/list.out" || fail "'$cmd' exited non-zero"
      for suite in build targets gates compliance fuzz docs quick; do
        grep -q "^$suite (" "$work/list.out" || { cat "$work/list.out"; fail "'$cmd' does not list the suite $suite"; }
      done
      grep -q '^The full run: ' "$work/list.out" || fail "'$cmd' does not give the full run"
      echo "  lists the suites, their stages and the full run" ;;
    "tools/check "*)
      # shellcheck disable=SC2086
      selected=$(tools/check --dry-run ${cmd#tools/check } < /dev/null) || fail "'$cmd': a name that is no suite or stage"
      [ -n "$selected" ] || fail "'$cmd' selects no stage"
      echo "  not run (stages of tools/check); it selects: $selected" ;;
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
    *)
      fail "README has a command this stage does not know: '$cmd' (teach tools/check.d/51-readme.sh)" ;;
  esac
done < "$work/commands.txt"
grep -qx 'cmake --workflow --preset demo' "$work/commands.txt" && grep -qx 'tools/check' "$work/commands.txt" ||
  fail "README's quick start lost one of its two commands (cmake --workflow --preset demo, tools/check)"
echo "51-readme: every README command run in order (or skipped, said above) on a fresh clone"
