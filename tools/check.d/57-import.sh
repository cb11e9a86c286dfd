# SPDX-License-Identifier: Apache-2.0
# burtorch-import as a user runs it, from the host preset's install
# (build/prefix/host: bin/burtorch-import, its module, the library):
#   parity       models written here in PyTorch and exported with
#                torch.onnx.export (an MLP, a Conv1d keyword spotter, a
#                Conv2d with BatchNorm folded by the export and kept as a
#                node, an MSE regressor, GRU sequence classifiers, frozen
#                int8/FP16/BF16 backbones),
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
#   the example  examples/import_finetune: train_and_export.py's Conv1d
#                fine-tuned on the host (all of it), and on a Cortex-M4 and a
#                Cortex-M0 in 16 KB of RAM under QEMU (the convolution frozen
#                in flash as int8, the head trained): accuracy on the
#                device's shifted data from below 0.5 to at least 0.9; the
#                compliance kit on the M4 firmware (the generated header is
#                the user's code): exit 0, no finding
# suite: import
# jobs: 1
# after: 10-host 22-cortex-m0 23-cortex-m4
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
echo "== examples/import_finetune: host, Cortex-M4, Cortex-M0"
/usr/bin/python3 examples/import_finetune/train_and_export.py "$work/kws.onnx" 2>&1 | grep -v "Warning\|warnings.warn"
finetune() {  # finetune NAME PREFIX [cmake args]: builds and runs it, checks its accuracy line
  local name=$1 pre=$2
  shift 2
  cmake -S examples/import_finetune -B "$work/$name" -DMODEL="$work/kws.onnx" -DCMAKE_PREFIX_PATH="$pre" "$@" \
    >"$work/$name.log" 2>&1 || { cat "$work/$name.log"; fail "$name: configure"; }
  cmake --build "$work/$name" >>"$work/$name.log" 2>&1 || { cat "$work/$name.log"; fail "$name: build"; }
  ctest --test-dir "$work/$name" -V >"$work/$name.out" 2>&1 || { cat "$work/$name.out"; fail "$name: the fine-tuning"; }
  local line
  line=$(grep -o 'accuracy before [0-9.]* after [0-9.]*' "$work/$name.out") || fail "$name: no accuracy line"
  echo "$name: $line; $(grep -o 'plan .*' "$work/$name.out")"
  echo "$line" | awk '{ if (!($3 < 0.5 && $5 >= 0.9)) exit 1 }' || fail "$name: $line"
}
finetune host "$prefix"
for cpu in cortex-m4 cortex-m0; do
  pre=$(preset_prefix "$cpu") || fail "no $cpu install"
  finetune "$cpu" "$pre" -DCMAKE_TOOLCHAIN_FILE="$pre/share/burtorch/toolchains/$cpu.cmake" \
    -DCMAKE_BUILD_TYPE=MinSizeRel -DCMAKE_EXPORT_COMPILE_COMMANDS=ON
  arm-none-eabi-size "$work/$cpu/import_finetune.elf" | tail -n 1 | awk -v c="$cpu" '{ print c ": flash " $1 + $2 " B, RAM " $2 + $3 " B" }'
  grep -q "frozen_i8" "$work/$cpu/kws_model.hpp" || fail "$cpu: the convolution is not frozen as int8"
done
(cd "$work/cortex-m4" && "$(preset_prefix cortex-m4)/bin/burtorch-compliance" -p . -j 1 --sarif kit.sarif) \
  >"$work/kit.log" 2>&1 || { tail -n 30 "$work/kit.log"; fail "the compliance kit on the imported firmware"; }
grep -q "unsuppressed findings: 0 " "$work/kit.log" || fail "the kit reported findings"
echo "ok: parity, conformance, refusals, CMake and Make, the example on the host, M4 and M0, the kit"
