#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds a libFuzzer target: build_fuzzer.sh OUTPUT TARGET.cpp INCLUDE_DIR
# LIB_DIR [SOURCE ...]. clang with libFuzzer + ASan + UBSan and the
# project's warnings; the target and each source (default: every .cpp under
# LIB_DIR) compiled to its own object in OUTPUT.objects/, then linked. Run
# from the repository root with relative paths, the library's objects are
# the same compile for every fuzzer (through ccache when tools/check
# exports CCACHE_DIR and ccache is installed, so each is compiled once).
# FUZZ_DEFINES (optional): more -D flags for every object of this fuzzer
# (49-fuzz-frame: -DBURTORCH_FLEET_WORK_PROBE, the codec's work counter).
set -euo pipefail
source "$(dirname "$0")/../tools/usage.sh" "$0" "$@"  # --help: the comment above
output=$1
target=$2
include=$3
lib=$4
shift 4
if [ $# -gt 0 ]; then
  sources=("$@")
else
  mapfile -t sources < <(find "$lib" -name '*.cpp' | sort)
fi
cache=()
if [ -n "${CCACHE_DIR:-}" ] && command -v ccache >/dev/null; then
  # The fuzzers' objects are the same compile wherever their copy of the
  # sources is (fuzz/prove_tape_fuzzer.sh builds from copies): the build
  # directory is not part of the cache key, only of the debug information.
  cache=(env CCACHE_NOHASHDIR=1 ccache)
fi
flags=(-std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
       -Wall -Wextra -Wpedantic -Wconversion -Wsign-conversion -Wshadow -Werror
       -fno-exceptions -fno-rtti -I"$include" -I"$lib")
if [ -n "${FUZZ_DEFINES:-}" ]; then
  read -r -a defines <<< "$FUZZ_DEFINES"
  flags+=("${defines[@]}")
fi
objects_dir="$output.objects"
rm -rf "$objects_dir"
mkdir -p "$objects_dir"
objects=()
for src in "$target" "${sources[@]}"; do
  obj="$objects_dir/$(echo "$src" | tr '/' '_').o"
  "${cache[@]}" clang++ "${flags[@]}" -c "$src" -o "$obj"
  objects+=("$obj")
done
clang++ -fsanitize=fuzzer,address,undefined "${objects[@]}" -o "$output"
