# SPDX-License-Identifier: Apache-2.0
# Benchmark smoke test: builds the benchmark programs of bench/
# (host preset, incremental after 10-host) and runs each one, and each
# PyTorch script of bench/torch/ when /usr/bin/python3 can import torch, for
# a tiny iteration count: they must run, agree with the known gradients
# (the programs check them) and print well-formed JSON. No timing
# assertions; the benchmarks themselves are tools/bench (not part of
# tools/check). Also runs tools/bench's check of PyTorch's BLAS: every record
# names it, the two detections agree, OPENBLAS_CORETYPE/L2_SIZE are unset
# for PyTorch, and the reference BLAS is refused. About 40 s after 10-host
# (plus the build when run alone).
# suite: bench
# after: 10-host
# jobs: 1
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
. tools/check.d/lib/trees.sh
preset_targets host bench_graphs bench_io bench_mlp bench_gpt bench_cnn bench_gru bench_lanes
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
"$bin/bench_cnn" --write-data "$tmp/cnn_data.txt"
"$bin/bench_cnn" --hidden 8 --batch 2 --steps 2 --warmup 0 --data "$tmp/cnn_data.txt" | json
"$bin/bench_gru" --hidden 8 --batch 1 --seq 4 --steps 2 --warmup 0 | json
"$bin/bench_gru" --hidden 8 --batch 5 --seq 4 --steps 2 --warmup 0 | json
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
"$py" cnn.py --hidden 8 --batch 2 --steps 2 --warmup 0 --data "$tmp/cnn_data.txt" | json
"$py" gru.py --hidden 8 --batch 2 --seq 4 --steps 2 --warmup 0 | json

echo "== PyTorch's BLAS, as tools/bench checks it (no speed asserted)"
# Each script's record names the BLAS its process runs on.
"$py" mlp.py --hidden 4 --batch 2 --steps 1 --warmup 0 | python3 -c '
import json, sys
r = [json.loads(l) for l in sys.stdin if l.startswith("{")][-1]
b = r.get("blas") or {}
assert b.get("name") and b.get("source"), r
assert b.get("torch_threads") == 1 and b.get("threads") in (None, 1), b
print("  mlp.py record: blas", b["name"], b.get("version"), b.get("kernel"), "threads", b.get("threads"))
'
# threadpoolctl and the /proc/self/maps fallback agree.
a=$("$py" blas.py | python3 -c 'import json,sys; print(json.loads(sys.stdin.read())["blas"]["name"])')
b=$(BURTORCH_BENCH_NO_THREADPOOLCTL=1 "$py" blas.py | python3 -c '
import json, sys
b = json.loads(sys.stdin.read())["blas"]
assert b["source"] in ("/proc/self/maps", "dladdr of sgemm_"), b
print(b["name"])')
echo "  threadpoolctl: $a; /proc/self/maps: $b"
[ "$a" = "$b" ] || { echo "the two BLAS detections disagree"; exit 1; }
cd "$root"
# OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE are unset for PyTorch, and said so;
# exit 0 (fit for docs/benchmarks.md) or 3 (not fit) are both answers.
set +e
OPENBLAS_CORETYPE=Prescott OPENBLAS_L2_SIZE=4096 "$py" tools/bench --blas >"$tmp/blas.txt" 2>&1
rc=$?
set -e
cat "$tmp/blas.txt"
[ "$rc" = 0 ] || [ "$rc" = 3 ] || { echo "tools/bench --blas failed ($rc)"; exit 1; }
grep -q "OPENBLAS_CORETYPE=Prescott is set in this environment; unset for the PyTorch" "$tmp/blas.txt"
grep -q "OPENBLAS_L2_SIZE=4096 is set in this environment; unset for the PyTorch" "$tmp/blas.txt"
if grep -q "kernel Prescott" "$tmp/blas.txt"; then
  echo "OPENBLAS_CORETYPE reached the PyTorch process"
  exit 1
fi
# Negative control: with the reference BLAS first on the library path,
# tools/bench must see it and refuse (exit 3).
ref=$(ls -d /usr/lib/*/blas 2>/dev/null | head -1)
if [ -n "$ref" ] && [ -e "$ref/libblas.so.3" ]; then
  set +e
  LD_LIBRARY_PATH="$ref" "$py" tools/bench --blas >"$tmp/ref.txt" 2>&1
  rc=$?
  set -e
  grep "^fit for" "$tmp/ref.txt"
  [ "$rc" = 3 ] && grep -q "^BLAS: reference BLAS" "$tmp/ref.txt" || {
    echo "tools/bench did not refuse the reference BLAS ($rc)"; cat "$tmp/ref.txt"; exit 1; }
else
  echo "  (no reference BLAS installed: negative control skipped)"
fi
echo "60-bench-smoke: all benchmark programs and scripts ran"
