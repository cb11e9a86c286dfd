# SPDX-License-Identifier: Apache-2.0
# FP32 results agree across targets (docs/floating-point.md).
# tests/test_fp32_agreement checks FP32 values and gradients against an FP64
# oracle on each target, and prints their bits; tools/fp32-compare then
# compares the targets with x86-64 (scaled difference |a - b| / (1 + |a|)):
#   - compiler-default FMA contraction, all seven targets: within 1e-6;
#   - -ffp-contract=off (BURTORCH_FP_CONTRACT=off), x86-64, AArch64 and
#     Cortex-M4: graph A (+ - * / relu, reductions, inner products) must be
#     bit-identical; graphs B and C (tanh, exp, log, sigmoid, sqrt) within
#     1e-6 (libm: glibc vs newlib).
# Uses the preset build trees (incremental after stages 10 and 20-26) and
# three extra trees build/fp32-nocontract-<preset>. About 1-2 minutes.
# suite: targets
# after: 10-host 20-aarch64-linux 21-armv7-linux 22-cortex-m0 23-cortex-m4 24-cortex-m7 25-cortex-m33 26-cortex-m55
# trees: fp32-nocontract
set -euo pipefail
cd "$(dirname "$0")/../.."
logs=build/fp32-agreement
mkdir -p "$logs"

run() {  # preset dir [cmake options...]: build and run the test, keep its log
  local preset=$1 dir=$2
  shift 2
  # The preset trees are configured by their stages: not again here (other
  # stages may be reading them); the nocontract trees are this stage's own.
  if [ $# -gt 0 ] || [ ! -f "$dir/CMakeCache.txt" ]; then
    cmake --preset "$preset" -B "$dir" "$@" >/dev/null
  fi
  cmake --build "$dir" -j2 --target test_fp32_agreement >/dev/null
  local log="$logs/$(basename "$dir").log"
  if ! ctest --test-dir "$dir" -R '^fp32_agreement$' -V --timeout 300 >"$log" 2>&1; then
    tail -n 30 "$log"
    echo "fp32_agreement failed on $preset ($dir)"
    return 1
  fi
  grep -E 'graph|C\.|passed' "$log" | sed "s/^[0-9]*: /  [$preset] /" | grep -v '^.*fp32 ' || true
}

targets="host aarch64-linux armv7-linux cortex-m0 cortex-m4 cortex-m7 cortex-m33 cortex-m55"
default_logs=()
for p in $targets; do
  run "$p" "build/$p"
  default_logs+=("$p=$logs/$p.log")
done
strict_logs=()
for p in host aarch64-linux cortex-m4; do
  run "$p" "build/fp32-nocontract-$p" -DBURTORCH_FP_CONTRACT=off
  strict_logs+=("$p=$logs/fp32-nocontract-$p.log")
done

echo "== compiler-default contraction (FMA where the target has it)"
tools/fp32-compare --tolerance 1e-6 "${default_logs[@]}"
echo "== -ffp-contract=off"
tools/fp32-compare --tolerance 1e-6 --identical A "${strict_logs[@]}"
