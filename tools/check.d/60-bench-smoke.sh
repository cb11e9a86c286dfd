# SPDX-License-Identifier: Apache-2.0
# Benchmark smoke test (issue 6): builds the benchmark programs of bench/
# (host preset, incremental after 10-host) and runs each one, and each
# PyTorch script of bench/torch/ when /usr/bin/python3 can import torch, for
# a tiny iteration count: they must run, agree with the known gradients
# (the programs check them) and print well-formed JSON. No timing
# assertions; the benchmarks themselves are tools/bench (not part of
# tools/check). About 15 s after 10-host (plus the build when run alone).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
cmake --preset host >/dev/null
cmake --build --preset host --target bench_graphs bench_io bench_mlp bench_gpt bench_lanes
bin=build/host/bench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

json() {  # every line starting with { must parse; at least one must exist
  python3 -c '
import json, sys
lines = [l for l in sys.stdin.read().splitlines() if l.startswith("{")]
assert lines, "no JSON line"
for l in lines:
    r = json.loads(l)
    assert "bench" in r, l
print("  ok:", ", ".join(sorted({json.loads(l)["bench"] for l in lines})))
'
}

echo "== C++ benchmark programs"
"$bin/bench_graphs" --json --runs 2 --iterations 200 | json
"$bin/bench_graphs" --count --graph small --iterations 50
"$bin/bench_io" --file "$tmp/io.btck" --iterations 20 --runs 1 | json
"$bin/bench_mlp" --hidden 4 --batch 2 --steps 2 --warmup 0 | json
"$bin/bench_gpt" --batch 1 --steps 1 --warmup 0 | json
"$bin/bench_lanes" --iterations 200 --runs 1 --json | json
"$bin/bench_lanes" --isa
if "$bin/bench_mlp" --no-such-flag 1 2>/dev/null; then
  echo "bench_mlp accepted an unknown flag"
  exit 1
fi
python3 -m py_compile tools/bench

py=/usr/bin/python3
if ! "$py" -c 'import torch' >/dev/null 2>&1; then
  echo "60-bench-smoke: $py cannot import torch (Debian python3-torch); PyTorch scripts skipped"
  exit 0
fi
echo "== PyTorch scripts (bench/torch)"
cd bench/torch
"$py" graphs.py --graph tiny --iterations 20 --runs 1 | json
"$py" graphs.py --graph small --iterations 20 --runs 1 | json
"$py" io.py --file "$tmp/io.pt" --iterations 5 --runs 1 | json
"$py" mlp.py --hidden 4 --batch 2 --steps 2 --warmup 0 | json
"$py" gpt.py --batch 1 --steps 1 --warmup 0 | json
echo "60-bench-smoke: all benchmark programs and scripts ran"
