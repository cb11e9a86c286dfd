#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fuzzes the tape's public API (fuzz/fuzz_tape.cpp) with libFuzzer for a
# bounded time: BURTORCH_FUZZ_SECONDS (default 60) plus about 15 s to build;
# inputs up to 1024 bytes. First checks that the committed seed corpus is
# what fuzz/make_tape_corpus.py makes and that every seed passes. Reports
# executions and executions per second; fails on any crash, leak, timeout
# or broken invariant (saved under build/fuzz-tape/artifacts/; replay one
# with FUZZ_TAPE_TRACE=1 build/fuzz-tape/fuzz_tape FILE).
# suite: fuzz
# jobs: 1
# trees: fuzz-tape
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
seconds=${BURTORCH_FUZZ_SECONDS:-60}
out=build/fuzz-tape
mkdir -p "$out/corpus" "$out/artifacts"
rm -f "$out"/artifacts/*

# Every check of the target is on. FUZZ_TAPE_SKIP=name,... turns checks off
# for an investigation (e.g. while a known defect waits for its fix).
export FUZZ_TAPE_SKIP=${FUZZ_TAPE_SKIP-}

# 1. The committed seeds are the generator's output.
rm -rf "$out/seeds"
mkdir -p "$out/seeds"
cp fuzz/make_tape_corpus.py "$out/seeds/"
/usr/bin/python3 "$out/seeds/make_tape_corpus.py" >/dev/null
diff -r "$out/seeds/corpus-tape" fuzz/corpus-tape
echo "seed corpus: $(ls fuzz/corpus-tape | wc -l) files, identical to fuzz/make_tape_corpus.py output"

# 2. Build with clang: libFuzzer + ASan + UBSan, the project's warnings, and
# every library source (the tape calls the SIMD kernels of lib/simd).
bash fuzz/build_tape_fuzzer.sh include lib "$out/fuzz_tape"

# 3. Every seed passes on its own.
"$out/fuzz_tape" -runs=0 fuzz/corpus-tape >"$out/seeds.log" 2>&1 || { tail -n 30 "$out/seeds.log"; exit 1; }

# 4. Fuzz. New inputs go to the build corpus; the committed seeds are read only.
status=0
start=$(date +%s)
"$out/fuzz_tape" -max_total_time="$seconds" -max_len=1024 -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 \
  -artifact_prefix="$out/artifacts/" "$out/corpus" fuzz/corpus-tape >"$out/fuzz.log" 2>&1 || status=$?
elapsed=$(( $(date +%s) - start ))
grep -E 'invariant broken|ERROR|SUMMARY' "$out/fuzz.log" | head -n 5 || true
tail -n 12 "$out/fuzz.log"
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/fuzz.log" | tail -n 1)
crashes=$(find "$out/artifacts" -type f | wc -l)
echo "fuzz_tape: ${runs:-0} executions in ${elapsed} s ($(( ${runs:-0} / (elapsed > 0 ? elapsed : 1) )) per second)," \
  "${crashes} crashes, exit ${status}, corpus $(ls "$out/corpus" | wc -l) inputs; skipped checks: ${FUZZ_TAPE_SKIP:-none}"
[ "$status" -eq 0 ] && [ "$crashes" -eq 0 ] && [ -n "$runs" ]
