# SPDX-License-Identifier: Apache-2.0
# Fuzzes the update-frame decoder (fuzz/fuzz_frame.cpp: check_frame, decode,
# accumulate, FedAvg::add; each input also resealed with a matching CRC;
# each call's work counted and bounded by the frame's size and the
# receiver's capacity) with libFuzzer for a bounded time:
# BURTORCH_FUZZ_SECONDS (default 30) plus about 10 s to build; inputs up to
# 1024 bytes. First checks that the committed seed corpus is what the
# independent Python encoder (fuzz/make_frame_corpus.py) makes. Fails on any
# crash, leak, timeout or broken invariant (saved under
# build/fuzz-frame/artifacts/).
# suite: fuzz
# jobs: 1
# trees: fuzz-frame
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
seconds=${BURTORCH_FUZZ_SECONDS:-30}
out=build/fuzz-frame
mkdir -p "$out/corpus" "$out/artifacts"
rm -f "$out"/artifacts/*

# 1. The committed seeds are the reference encoder's output.
rm -rf "$out/seeds"
mkdir -p "$out/seeds"
cp fuzz/make_frame_corpus.py "$out/seeds/"
/usr/bin/python3 "$out/seeds/make_frame_corpus.py" >/dev/null
diff -r "$out/seeds/corpus-frame" fuzz/corpus-frame
echo "seed corpus: $(ls fuzz/corpus-frame | wc -l) files, identical to fuzz/make_frame_corpus.py output"

# 2. Build with clang: libFuzzer + ASan + UBSan, the project's warnings, and
# the codec's sources (its CRC-32 is the checkpoints', lib/checkpoint.cpp),
# with the codec's work probe, which the fuzzer counts.
FUZZ_DEFINES=-DBURTORCH_FLEET_WORK_PROBE bash fuzz/build_fuzzer.sh "$out/fuzz_frame" fuzz/fuzz_frame.cpp include lib \
  lib/fleet/encode.cpp lib/fleet/decode.cpp lib/checkpoint.cpp

# 3. Fuzz. New inputs go to the build corpus; the committed seeds are read only.
status=0
"$out/fuzz_frame" -max_total_time="$seconds" -max_len=1024 -print_final_stats=1 -timeout=10 -rss_limit_mb=1024 \
  -artifact_prefix="$out/artifacts/" "$out/corpus" fuzz/corpus-frame >"$out/fuzz.log" 2>&1 || status=$?
tail -n 25 "$out/fuzz.log"
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/fuzz.log" | tail -n 1)
crashes=$(find "$out/artifacts" -type f | wc -l)
echo "fuzz_frame: ${runs:-0} executions in ${seconds} s, ${crashes} crashes, exit ${status}," \
  "corpus $(ls "$out/corpus" | wc -l) inputs"
[ "$status" -eq 0 ] && [ "$crashes" -eq 0 ] && [ -n "$runs" ]
