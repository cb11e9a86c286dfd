#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Proof that the tape fuzzer (stage 47) finds the defects it was written
# for: fuzz/prove_tape_fuzzer.sh puts a stale-mark acceptance and the
# zero-gradient NaN leak back into a temporary copy of the library and
# requires the fuzzer to report each within BURTORCH_PROOF_SECONDS (default
# 60) with a fixed seed. About 30 s to build plus the time to find them.
# suite: fuzz
# jobs: 1
# trees: fuzz-tape-proof
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
bash fuzz/prove_tape_fuzzer.sh build/fuzz-tape-proof
