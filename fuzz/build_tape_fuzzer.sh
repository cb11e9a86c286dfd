#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds fuzz/fuzz_tape.cpp against a library tree: build_tape_fuzzer.sh
# INCLUDE_DIR LIB_DIR OUTPUT. clang with libFuzzer + ASan + UBSan and the
# project's warnings; every .cpp under LIB_DIR is compiled in
# (fuzz/build_fuzzer.sh).
set -euo pipefail
source "$(dirname "$0")/../tools/usage.sh" "$0" "$@"  # --help: the comment above
include=$1
lib=$2
output=$3
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/fuzz/build_fuzzer.sh" "$output" "$root/fuzz/fuzz_tape.cpp" "$include" "$lib"
