#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Shows that fuzz/fuzz_tape.cpp finds two library defects when they come
# back: each is put back into a temporary COPY of include/ and lib/ (the
# tree is never touched), the target is built against the copy and fuzzed
# from the committed seeds with a fixed seed for at most
# BURTORCH_PROOF_SECONDS (default 60) each. Fails unless each run ends in
# the expected invariant break.
#   stale-mark: rewind() no longer rejects a mark whose position an earlier
#               rewind discarded (only its tape and generation are checked);
#   gradient:   backward() no longer skips nodes whose gradient is zero, so
#               0 * (infinite local derivative) = NaN flows from nodes the
#               root does not reach.
# Usage: fuzz/prove_tape_fuzzer.sh [OUTPUT_DIR]
set -euo pipefail
source "$(dirname "$0")/../tools/usage.sh" "$0" "$@"  # --help: the comment above
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=${1:-build/fuzz-tape-proof}
seconds=${BURTORCH_PROOF_SECONDS:-60}
rm -rf "$out"
mkdir -p "$out"

# Replaces exactly one line matching `pattern` in FILE (a fixed string) by
# `replacement`, or fails loudly.
put_back() {
  local file=$1 pattern=$2 replacement=$3
  local count
  count=$(grep -cF -- "$pattern" "$file" || true)
  if [ "$count" != 1 ]; then
    echo "prove_tape_fuzzer: '$pattern' occurs $count times in $file (expected once): update this script" >&2
    exit 1
  fi
  local before
  before=$(md5sum "$file")
  PATTERN=$pattern REPLACEMENT=$replacement perl -0pi -e 's/\Q$ENV{PATTERN}\E/$ENV{REPLACEMENT}/' "$file"
  if [ "$(md5sum "$file")" = "$before" ] || grep -qF -- "$pattern" "$file"; then
    echo "prove_tape_fuzzer: could not replace '$pattern' in $file" >&2
    exit 1
  fi
}

failures=0
# prove NAME TAG FILE PATTERN REPLACEMENT: TAG is the invariant that must break.
prove() {
  local name=$1 tag=$2 file=$3 pattern=$4 replacement=$5
  local dir="$out/$name"
  mkdir -p "$dir/corpus" "$dir/artifacts"
  cp -r include lib "$dir/"
  put_back "$dir/$file" "$pattern" "$replacement"
  # Built from inside the copy with the paths the tape fuzzer's stage uses
  # (include, lib), so that under tools/check the sources left as they are
  # come from the compiler cache (their debug information then names the
  # first build's directory) and only the changed one is compiled.
  local abs
  abs=$(cd "$dir" && pwd)
  (cd "$abs" && bash "$root/fuzz/build_fuzzer.sh" "$abs/fuzz_tape" "$root/fuzz/fuzz_tape.cpp" include lib)
  local start end status=0
  start=$(date +%s%N)
  # Checks that would report other (known) defects first stay off, as in
  # the fuzzing stage; reset-stale marks are a second way to the same
  # defect and stay off so that the run shows the rewind case.
  FUZZ_TAPE_SKIP=interior-name,zero-run,reset-mark "$dir/fuzz_tape" -seed=1 -max_total_time="$seconds" \
    -max_len=1024 -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$dir/artifacts/" \
    "$dir/corpus" fuzz/corpus-tape >"$dir/fuzz.log" 2>&1 || status=$?
  end=$(date +%s%N)
  local found runs
  found=$(grep -m1 'invariant broken' "$dir/fuzz.log" || true)
  runs=$(grep -E '^#[0-9]+' "$dir/fuzz.log" | tail -n 1 | sed -E 's/^#([0-9]+).*/\1/')
  local tenths=$(( (end - start) / 100000000 ))
  printf '%s: %s\n  after about %s executions, %d.%d s (exit %s)\n' "$name" "${found:-nothing found}" \
    "${runs:-0}" $((tenths / 10)) $((tenths % 10)) "$status"
  if [ "$status" -eq 0 ] || ! grep -qF "invariant broken [$tag]" <<<"$found"; then
    echo "  FAILED: expected the fuzzer to report [$tag] within $seconds s"
    failures=$((failures + 1))
  fi
}

prove defect-stale-mark stale-mark include/burtorch/core/detail/state.hpp \
  'if (generation_at(key) > m.generation) {' 'if (false) {'
prove defect-zero-gradient gradient include/burtorch/core/detail/sweep.hpp \
  'if (ScalarOps<T>::is_zero(g)) {' 'if (false) {'

[ "$failures" -eq 0 ]
