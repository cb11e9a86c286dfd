#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fuzzes the checkpoint loader (fuzz/fuzz_checkpoint.cpp) with libFuzzer for a
# bounded time: BURTORCH_FUZZ_SECONDS (default 60) plus about 10 s to build;
# inputs up to 512 bytes (the largest seed layout is 188).
# First checks that the committed seed corpus is what the independent Python
# encoder (fuzz/make_corpus.py) makes. Reports executions and crashes; fails
# on any crash, leak, timeout or broken invariant (saved under
# build/fuzz-checkpoint/artifacts/).
# suite: fuzz
# jobs: 1
# trees: fuzz-checkpoint
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
seconds=${BURTORCH_FUZZ_SECONDS:-60}
out=build/fuzz-checkpoint
mkdir -p "$out/corpus" "$out/artifacts"
rm -f "$out"/artifacts/*

# 1. The committed seeds are the reference encoder's output.
rm -rf "$out/seeds"
mkdir -p "$out/seeds"
cp fuzz/make_corpus.py "$out/seeds/"
/usr/bin/python3 "$out/seeds/make_corpus.py" >/dev/null
diff -r "$out/seeds/corpus" fuzz/corpus
echo "seed corpus: $(ls fuzz/corpus | wc -l) files, identical to fuzz/make_corpus.py output"

# 2. Build with clang: libFuzzer + ASan + UBSan, the project's warnings, and
# every library source (the tape calls the SIMD kernels of lib/simd).
bash fuzz/build_fuzzer.sh "$out/fuzz_checkpoint" fuzz/fuzz_checkpoint.cpp include lib

# 3. Fuzz. New inputs go to the build corpus; the committed seeds are read only.
status=0
"$out/fuzz_checkpoint" -max_total_time="$seconds" -max_len=512 -print_final_stats=1 -timeout=10 -rss_limit_mb=1024 \
  -artifact_prefix="$out/artifacts/" "$out/corpus" fuzz/corpus >"$out/fuzz.log" 2>&1 || status=$?
tail -n 25 "$out/fuzz.log"
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/fuzz.log" | tail -n 1)
crashes=$(find "$out/artifacts" -type f | wc -l)
echo "fuzz_checkpoint: ${runs:-0} executions in ${seconds} s, ${crashes} crashes, exit ${status}," \
  "corpus $(ls "$out/corpus" | wc -l) inputs"
[ "$status" -eq 0 ] && [ "$crashes" -eq 0 ] && [ -n "$runs" ]
