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
#                the user's code): exit 0, no finding; its flash, RAM and
#                accuracy are docs/footprint.md's rows (tools/import-footprint)
#   the gates    the library's gates on the M4 and M0 firmwares' unit that
#                includes the generated header (tools/gates/unit_gates.py:
#                no recursion, no unbounded frame, no heap/exception/I/O
#                symbol, main's worst stack within the board's stack), and
#                planted violations in the same build are reported (~5 s)
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
(cd "$work/cmake" && ./import_consumer) | tee "$work/cmake.out"
grep -q "^imported: 16 inputs, 4 outputs, trained 132 of 676 parameters" "$work/cmake.out" || fail "the CMake consumer's output"
sleep 1
cp "$work/parity/kws1d.onnx" "$work/model.onnx"  # a changed model: the header is made again
cmake --build "$work/cmake" >"$work/build2.log" 2>&1 || { cat "$work/build2.log"; fail "rebuild after the model changed"; }
(cd "$work/cmake" && ./import_consumer) >"$work/cmake2.out" || { cat "$work/cmake2.out"; fail "the consumer on kws1d"; }
grep -q "^imported: 48 inputs, 5 outputs" "$work/cmake2.out" || fail "the header was not regenerated"
echo "== the way back: the trained head from the consumer's checkpoint into the ONNX file"
"$importer" export "$work/model.onnx" --train last:1 --checkpoint "$work/cmake/trained.btck" -o "$work/tuned.onnx" \
  --npz "$work/tuned.npz" || fail "export"
"$importer" "$work/tuned.onnx" -o "$work/tuned.hpp" --train last:1 --namespace tuned || fail "import the tuned model"
/usr/bin/python3 - "$work" <<'PY' || fail "the round trip checkpoint -> ONNX -> header"
import re, sys
import numpy as np
import onnx
from onnx import numpy_helper
work = sys.argv[1]
data = open(work + "/cmake/trained.btck", "rb").read()
trained = np.frombuffer(data[12 + 12:-4], dtype="<f4")  # one VALU section of float32
text = open(work + "/tuned.hpp").read()
body = text.split("k_head_init = {", 1)[1].split("};", 1)[0]
header = np.array([float(v.rstrip("F")) for v in re.findall(r"[-0-9.eE+]+F", body)], dtype=np.float32)
assert header.size == trained.size, (header.size, trained.size)
assert np.array_equal(header, trained), "the re-imported head differs from the checkpoint"
old = {t.name: numpy_helper.to_array(t) for t in onnx.load(work + "/model.onnx").graph.initializer}
new = {t.name: numpy_helper.to_array(t) for t in onnx.load(work + "/tuned.onnx").graph.initializer}
assert all(np.array_equal(old[k], new[k]) for k in old if not k.startswith("head.")), "a frozen tensor changed"
assert not np.array_equal(old["head.weight"], new["head.weight"]), "the head did not change"
sd = np.load(work + "/tuned.npz")
assert sorted(sd.files) == ["head.bias", "head.weight"] and np.array_equal(sd["head.weight"], new["head.weight"])
print("round trip: %d trained values, checkpoint -> ONNX (columns permuted back) -> header, bit for bit" % trained.size)
PY
cp "$work/parity/mlp.onnx" "$work/model.onnx"
make -s -C tests/import/consumer -f Makefile BURTORCH_PREFIX="$prefix" OUT="$work/make" MODEL="$work/model.onnx" \
  >"$work/make.log" 2>&1 || { cat "$work/make.log"; fail "the Make consumer"; }
(cd "$work/make" && ./import_consumer) | grep -q "^imported: 16 inputs, 4 outputs, trained 132 of 676 parameters" \
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
tools/import-footprint --dir "$work" || fail "the footprint rows"
tools/import-footprint --dir "$work" --rows | tools/docs-numbers --verify tools/import-footprint \
  || fail "docs/footprint.md's rows of the example differ from this run's (tools/import-footprint --write)"
(cd "$work/cortex-m4" && "$(preset_prefix cortex-m4)/bin/burtorch-compliance" -p . -j 1 --sarif kit.sarif) \
  >"$work/kit.log" 2>&1 || { tail -n 30 "$work/kit.log"; fail "the compliance kit on the imported firmware"; }
grep -q "unsuppressed findings: 0 " "$work/kit.log" || fail "the kit reported findings"
echo "== the library's gates on the imported firmware's unit (tools/gates/unit_gates.py)"
for cpu in cortex-m4 cortex-m0; do
  hex=$(arm-none-eabi-nm "$work/$cpu/import_finetune.elf" | awk '$3 == "__burtorch_stack_size" { print $1 }')
  [ -n "$hex" ] || fail "$cpu: no __burtorch_stack_size in the firmware"
  stack=$((0x$hex))
  python3 tools/gates/unit_gates.py --preset "$cpu" --build "$work/$cpu" --unit main.cpp --entry '^main$' \
    --budget "$stack" >"$work/$cpu-gates.log" 2>&1 || { cat "$work/$cpu-gates.log"; fail "$cpu: the gates on the imported firmware"; }
  sed -n '1,2p' "$work/$cpu-gates.log"
  # The gates can fail there: planted recursion, heap and unbounded frame, compiled with the same command.
  python3 tools/gates/unit_gates.py --preset "$cpu" --build "$work/$cpu" --unit main.cpp --also tests/import/planted_unit.cpp \
    --entry '^(main|planted_entry)$' >"$work/$cpu-planted.log" 2>&1 && fail "$cpu: the planted violations passed the gates"
  for want in "recursion: planted::tick" "unbounded dynamic stack frame: planted::unbounded_frame" "symbol operator new"; do
    grep -q "$want" "$work/$cpu-planted.log" || { cat "$work/$cpu-planted.log"; fail "$cpu: planted '$want' not reported"; }
  done
done
echo "ok: parity, conformance, refusals, CMake and Make, the example on the host, M4 and M0, the kit, the gates"
