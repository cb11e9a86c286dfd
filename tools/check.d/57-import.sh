# SPDX-License-Identifier: Apache-2.0
# burtorch-import as a user runs it, from the host preset's install
# (build/prefix/host: bin/burtorch-import, its module, the library):
#   parity       models written here in PyTorch and exported with
#                torch.onnx.export (an MLP, a Conv1d keyword spotter, a
#                Conv2d with BatchNorm folded by the export and kept as a
#                node, an MSE regressor, frozen int8/FP16/BF16 backbones),
#                imported and run by `burtorch-import validate`: outputs,
#                loss and the trainable parameters' gradients against
#                PyTorch's autograd (tests/import/parity.py)
#   conformance  ONNX's own backend tests (libonnx-testdata) of every
#                supported operator: each passed or refused with its
#                reason, none failed; docs/import.md's table is this run's
#                (tests/import/onnx_conformance.py)
#   refusals     a model the importer does not support exits 2 with one
#                line naming the node and operator, and writes nothing;
#                bad flags and files exit 2 (tests/import/refusals.sh)
#   the build    burtorch_import_model() in a CMake project against the
#                install (the header regenerated when the model changes),
#                and the same model from a Makefile with $(BURTORCH_IMPORT)
# suite: import
# jobs: 1
# after: 10-host
# trees: import
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
work="$root/build/import"
rm -rf "$work"
mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
. tools/check.d/lib/trees.sh
prefix=$(preset_prefix host) || fail "no host install"
importer="$prefix/bin/burtorch-import"
[ -x "$importer" ] || fail "bin/burtorch-import is not installed"
[ -f "$prefix/share/burtorch/python/burtorch_onnx_ref.py" ] || fail "the importer's module is not installed"
[ -f "$prefix/lib/cmake/burtorch/BurtorchImportModel.cmake" ] || fail "BurtorchImportModel.cmake is not installed"

echo "== parity with PyTorch"
/usr/bin/python3 tests/import/parity.py "$importer" "$prefix" "$work/parity" 2>&1 | grep -v "Warning\|warnings.warn" \
  || fail "parity"

echo "== ONNX backend tests"
/usr/bin/python3 tests/import/onnx_conformance.py "$importer" "$prefix" "$work/conformance" \
  --jobs 1 --table "$work/conformance-table.md" --check-doc docs/import.md | tail -n 3 || fail "conformance"

echo "== refusals"
BURTORCH_PREFIX="$prefix" bash tests/import/refusals.sh "$importer" "$work/refusals" || fail "refusals"

echo "== burtorch_import_model() and \$(BURTORCH_IMPORT)"
cp "$work/parity/mlp.onnx" "$work/model.onnx"
cmake -S tests/import/consumer -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" -DMODEL="$work/model.onnx" \
  >"$work/cmake.log" || { cat "$work/cmake.log"; fail "configure the CMake consumer"; }
cmake --build "$work/cmake" >"$work/build.log" 2>&1 || { cat "$work/build.log"; fail "build the CMake consumer"; }
"$work/cmake/import_consumer" | tee "$work/cmake.out"
grep -q "^imported: 16 inputs, 4 outputs, trained 132 of 676 parameters" "$work/cmake.out" || fail "the CMake consumer's output"
sleep 1
cp "$work/parity/kws1d.onnx" "$work/model.onnx"  # a changed model: the header is made again
cmake --build "$work/cmake" >"$work/build2.log" 2>&1 || { cat "$work/build2.log"; fail "rebuild after the model changed"; }
"$work/cmake/import_consumer" | grep -q "^imported: 48 inputs, 5 outputs" || fail "the header was not regenerated"
cp "$work/parity/mlp.onnx" "$work/model.onnx"
make -s -C tests/import/consumer -f Makefile BURTORCH_PREFIX="$prefix" OUT="$work/make" MODEL="$work/model.onnx" \
  >"$work/make.log" 2>&1 || { cat "$work/make.log"; fail "the Make consumer"; }
"$work/make/import_consumer" | grep -q "^imported: 16 inputs, 4 outputs, trained 132 of 676 parameters" \
  || fail "the Make consumer's output"
echo "ok: parity, conformance, refusals, CMake and Make"
