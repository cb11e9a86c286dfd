#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds fuzz/fuzz_tape.cpp against a library tree: build_tape_fuzzer.sh
# INCLUDE_DIR LIB_DIR OUTPUT. clang with libFuzzer + ASan + UBSan and the
# project's warnings; every .cpp under LIB_DIR is compiled in.
set -euo pipefail
source "$(dirname "$0")/../tools/usage.sh" "$0" "$@"  # --help: the comment above
include=$1
lib=$2
output=$3
root=$(cd "$(dirname "$0")/.." && pwd)
mapfile -t library_sources < <(find "$lib" -name '*.cpp' | sort)
clang++ -std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -Wall -Wextra -Wpedantic -Wconversion -Wsign-conversion -Wshadow -Werror \
  -fno-exceptions -fno-rtti -I"$include" -I"$lib" \
  "$root/fuzz/fuzz_tape.cpp" "${library_sources[@]}" -o "$output"
