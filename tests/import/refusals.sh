#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# burtorch-import refuses what it does not support: exit 2, one line on
# stderr naming the node, the operator and the attribute, and nothing
# written (an existing output file is left as it was). Bad flags, files and
# npz arrays exit 2; validate past its tolerance exits 1.
# Usage: refusals.sh IMPORTER WORKDIR
set -u
source "$(dirname "$0")/../../tools/usage.sh" "$0" "$@"  # --help: the comment above
importer=$1
work=$2
rm -rf "$work"
mkdir -p "$work"
failures=0
/usr/bin/python3 - "$work" <<'PY'
import sys
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto
work = sys.argv[1]
def save(name, nodes, inits, in_shape, out_shape, opset=13, inputs=None):
    g = helper.make_graph(nodes, name, inputs or [helper.make_tensor_value_info("x", TensorProto.FLOAT, in_shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)],
                          [numpy_helper.from_array(v, k) for k, v in inits.items()])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]), "%s/%s.onnx" % (work, name))
w = np.ones((4, 3), dtype=np.float32)
save("good", [helper.make_node("Gemm", ["x", "w"], ["y"], name="fc", transB=1)], {"w": w}, ["n", 3], ["n", 4])
save("transposed_conv", [helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="up")],
     {"w": np.ones((2, 2, 3), dtype=np.float32)}, ["n", 2, 5], ["n", 2, 7])
save("grouped_conv", [helper.make_node("Conv", ["x", "w"], ["y"], name="dw", group=2)],
     {"w": np.ones((2, 1, 3), dtype=np.float32)}, ["n", 2, 5], ["n", 2, 3])
save("asymmetric_pad", [helper.make_node("Conv", ["x", "w"], ["y"], name="c", pads=[0, 1])],
     {"w": np.ones((2, 2, 3), dtype=np.float32)}, ["n", 2, 5], ["n", 2, 4])
save("residual", [helper.make_node("Gemm", ["x", "w"], ["h"], name="fc", transB=1),
                  helper.make_node("Add", ["h", "h"], ["y"], name="sum")], {"w": np.ones((3, 3), dtype=np.float32)},
     ["n", 3], ["n", 3])
save("weights_as_input", [helper.make_node("MatMul", ["x", "b"], ["y"], name="mm")], {}, ["n", 3], ["n", 4],
     inputs=[helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3]),
             helper.make_tensor_value_info("b", TensorProto.FLOAT, [3, 4])])
save("old_opset", [helper.make_node("Relu", ["x"], ["y"], name="r")], {}, ["n", 3], ["n", 3], opset=5)
save("softmax_axis", [helper.make_node("Softmax", ["x"], ["y"], name="sm", axis=1)], {}, ["n", 3, 4], ["n", 3, 4])
save("ceil_pool", [helper.make_node("MaxPool", ["x"], ["y"], name="mp", kernel_shape=[2], ceil_mode=1)], {},
     ["n", 2, 5], ["n", 2, 3])
save("batch_reshape", [helper.make_node("Reshape", ["x", "s"], ["y"], name="rs")], {"s": np.array([-1], dtype=np.int64)},
     ["n", 3], [-1])
save("training_dropout", [helper.make_node("Dropout", ["x", "r", "t"], ["y"], name="dr")],
     {"r": np.array(0.5, dtype=np.float32), "t": np.array(True)}, ["n", 3], ["n", 3])
nan_w = np.ones((4, 3), dtype=np.float32)
nan_w[1, 2] = np.nan
save("nan_weight", [helper.make_node("Gemm", ["x", "w"], ["y"], name="fc", transB=1)], {"w": nan_w}, ["n", 3], ["n", 4])
inf_b = np.array([0, np.inf, 0, 0], dtype=np.float32)
save("inf_bias", [helper.make_node("Gemm", ["x", "w", "b"], ["y"], name="fc", transB=1)], {"w": w, "b": inf_b},
     ["n", 3], ["n", 4])
# a layer whose PyTorch module path is a C++ keyword: renamed, still a model
save("keyword_layer", [helper.make_node("Gemm", ["x", "new.weight"], ["y"], name="/new/Gemm", transB=1)],
     {"new.weight": w}, ["n", 3], ["n", 4])
# token ids: an embedding table read by a Gather, then the head
tok = [helper.make_tensor_value_info("x", TensorProto.INT64, ["n", 2])]
table = np.random.default_rng(2).standard_normal((5, 3)).astype(np.float32)
flat = [helper.make_node("Gather", ["table", "x"], ["e"], name="emb"),
        helper.make_node("Flatten", ["e"], ["f"], name="flat")]
save("embedding", flat + [helper.make_node("Gemm", ["f", "w6"], ["y"], name="fc", transB=1)],
     {"table": table, "w6": np.ones((4, 6), dtype=np.float32)}, None, ["n", 4], inputs=tok)
save("embedding_relu", [flat[0], helper.make_node("Relu", ["e"], ["r"], name="act"),
                        helper.make_node("Flatten", ["r"], ["f"], name="flat"),
                        helper.make_node("Gemm", ["f", "w6"], ["y"], name="fc", transB=1)],
     {"table": table, "w6": np.ones((4, 6), dtype=np.float32)}, None, ["n", 4], inputs=tok)
save("embedding_axis", [helper.make_node("Gather", ["table", "x"], ["e"], name="emb", axis=1),
                        helper.make_node("Flatten", ["e"], ["f"], name="flat"),
                        helper.make_node("Gemm", ["f", "w10"], ["y"], name="fc", transB=1)],
     {"table": table, "w10": np.ones((4, 10), dtype=np.float32)}, None, ["n", 4], inputs=tok)
save("int_input", [helper.make_node("Cast", ["x"], ["c"], name="cast", to=1),
                   helper.make_node("Gemm", ["c", "w2"], ["y"], name="fc", transB=1)],
     {"w2": np.ones((4, 2), dtype=np.float32)}, None, ["n", 4], inputs=tok)
np.savez("%s/bad_tokens.npz" % work, x=np.array([[0, 5], [1, 2]], dtype=np.int64))
# LayerNorm as opsets < 17 write it, without its scale and bias
ln = [helper.make_node("ReduceMean", ["x"], ["m"], name="mean", axes=[-1]),
      helper.make_node("Sub", ["x", "m"], ["d"], name="sub"),
      helper.make_node("Pow", ["d", "two"], ["p"], name="pow"),
      helper.make_node("ReduceMean", ["p"], ["v"], name="var", axes=[-1]),
      helper.make_node("Add", ["v", "eps"], ["ve"], name="addeps"),
      helper.make_node("Sqrt", ["ve"], ["s"], name="sqrt"),
      helper.make_node("Div", ["d", "s"], ["y"], name="div")]
save("layernorm_no_affine", ln, {"two": np.array(2.0, dtype=np.float32), "eps": np.array(1e-5, dtype=np.float32)},
     ["n", 3], ["n", 3], opset=14)
np.savez("%s/wrong_key.npz" % work, z=np.ones((2, 3)))
np.savez("%s/wrong_shape.npz" % work, x=np.ones((2, 4)))
np.savez("%s/bad_targets.npz" % work, target=np.array([0, 9]))
np.savez("%s/inputs.npz" % work, x=np.ones((2, 3), dtype=np.float32))
PY
printf 'not a model' >"$work/garbage.onnx"

expect() {  # expect CODE PATTERN -- COMMAND...: exit status and stderr line
  local code=$1 pattern=$2
  shift 3
  local err
  err=$("$@" 2>&1 >/dev/null)
  local rc=$?
  if [ "$rc" -ne "$code" ] || ! printf '%s\n' "$err" | grep -q -- "$pattern"; then
    echo "FAIL: $* -> exit $rc, '$err' (wanted exit $code and /$pattern/)"
    failures=$((failures + 1))
  elif [ "$code" -eq 2 ] && [ "$(printf '%s\n' "$err" | wc -l)" -ne 1 ]; then
    echo "FAIL: $* -> more than one line: $err"
    failures=$((failures + 1))
  else
    printf 'ok: exit %s: %.160s\n' "$code" "$err"
  fi
}
refused() {  # refused MODEL PATTERN: exit 2, one line, the output file untouched
  printf 'keep me\n' >"$work/out.hpp"
  expect 2 "$2" -- "$importer" "$work/$1.onnx" -o "$work/out.hpp"
  if [ "$(cat "$work/out.hpp")" != "keep me" ] || [ -e "$work/out.hpp.tmp" ]; then
    echo "FAIL: $1: the output file was written"
    failures=$((failures + 1))
  fi
}
refused transposed_conv "node 'up' (ConvTranspose): operator not supported"
refused grouped_conv "node 'dw' (Conv): attribute group=2"
refused asymmetric_pad "node 'c' (Conv): attribute pads \[0, 1\]: asymmetric padding"
refused residual "node 'sum' (Add)"
refused weights_as_input "2 graph inputs"
refused old_opset "opset 5"
refused softmax_axis "node 'sm' (Softmax): attribute axis=1 on a 3-D tensor"
refused ceil_pool "node 'mp' (MaxPool): attribute ceil_mode=1"
refused batch_reshape "node 'rs' (Reshape)"
refused training_dropout "node 'dr' (Dropout): training_mode=true"
refused nan_weight "node 'fc' (Gemm): a weight that is NaN or infinite"
refused inf_bias "node 'fc' (Gemm): a bias that is NaN or infinite"
expect 0 "" -- "$importer" validate "$work/keyword_layer.onnx" --weights int8 --train none
expect 0 "" -- "$importer" validate "$work/embedding.onnx"
expect 0 "" -- "$importer" validate "$work/embedding_relu.onnx" --train fc --weights int8
refused embedding_relu "node 'act' (Relu): a trained embedding's rows read by Relu"
refused embedding_axis "node 'emb' (Gather): attribute axis=1"
refused int_input "input 'x': element type 7 (float or double supported; int32 or int64 token ids"
refused layernorm_no_affine "node 'div' (Div): a LayerNorm without its scale and bias"
expect 2 "token ids in \[0, 5)" -- "$importer" validate "$work/embedding.onnx" --inputs "$work/bad_tokens.npz"
refused garbage "not an ONNX model"
refused missing "not an ONNX model"
expect 2 "no layer named conv9" -- "$importer" "$work/good.onnx" -o "$work/x.hpp" --train conv9
expect 2 "last:N needs a number" -- "$importer" "$work/good.onnx" -o "$work/x.hpp" --train last:x
expect 2 "the model has 1 layers" -- "$importer" "$work/good.onnx" -o "$work/x.hpp" --train last:2
expect 2 "\-\-weights int4" -- "$importer" "$work/good.onnx" -o "$work/x.hpp" --weights int4
expect 2 "not LAYER=FORMAT" -- "$importer" "$work/good.onnx" -o "$work/x.hpp" --weights int8,fc
expect 2 "not a C++ namespace" -- "$importer" "$work/good.onnx" -o "$work/x.hpp" --namespace "9lives"
expect 2 "cannot write" -- "$importer" "$work/good.onnx" -o "$work/no/such/dir/x.hpp"
expect 2 "no array named 'x'" -- "$importer" validate "$work/good.onnx" --inputs "$work/wrong_key.npz"
expect 2 "has shape \[2, 4\]" -- "$importer" validate "$work/good.onnx" --inputs "$work/wrong_shape.npz"
expect 2 "class indices in \[0, 4)" -- "$importer" validate "$work/good.onnx" --inputs "$work/inputs.npz" \
  --targets "$work/bad_targets.npz"
expect 2 "batch 0: must be positive" -- "$importer" validate "$work/good.onnx" --batch 0
# past the tolerance: int8 frozen weights against the FP32 reference with tolerance 0
/usr/bin/python3 - "$work" <<'PY'
import sys
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto
work = sys.argv[1]
w = np.random.default_rng(1).standard_normal((4, 3)).astype(np.float32)
g = helper.make_graph([helper.make_node("Gemm", ["x", "w"], ["y"], name="fc", transB=1)], "q",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 4])], [numpy_helper.from_array(w, "w")])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), work + "/quantised.onnx")
PY
expect 1 "" -- "$importer" validate "$work/quantised.onnx" --train none --weights int8 --tolerance 0
expect 0 "" -- "$importer" validate "$work/quantised.onnx" --train none --weights int8
# the way back: a damaged or foreign checkpoint, the wrong count, neither or both inputs
/usr/bin/python3 - "$work" <<'PY'
import struct, sys, zlib
import numpy as np
work = sys.argv[1]
def checkpoint(values, tag=b"VALU"):
    payload = np.asarray(values, dtype="<f4").tobytes()
    body = b"BTCK" + bytes([1, 1, 4, 1]) + struct.pack("<I", 1) + struct.pack("<IQ", struct.unpack("<I", tag)[0], len(payload)) + payload
    return body + struct.pack("<I", zlib.crc32(body) & 0xFFFFFFFF)
good = checkpoint(np.arange(12))
open(work + "/good.btck", "wb").write(good)
open(work + "/damaged.btck", "wb").write(good[:20] + bytes([good[20] ^ 1]) + good[21:])
open(work + "/short.btck", "wb").write(checkpoint(np.arange(5)))
open(work + "/grad.btck", "wb").write(checkpoint(np.arange(12), b"GRAD"))
np.savez(work + "/params.npz", params=np.arange(12.0))
PY
expect 0 "" -- "$importer" export "$work/good.onnx" --checkpoint "$work/good.btck" -o "$work/back.onnx"
expect 2 "CRC-32 does not match" -- "$importer" export "$work/good.onnx" --checkpoint "$work/damaged.btck" -o "$work/x.onnx"
expect 2 "5 values, the trainable layers hold 12" -- "$importer" export "$work/good.onnx" --checkpoint "$work/short.btck" -o "$work/x.onnx"
expect 2 "no VALU section" -- "$importer" export "$work/good.onnx" --checkpoint "$work/grad.btck" -o "$work/x.onnx"
expect 2 "not a libburtorch checkpoint" -- "$importer" export "$work/good.onnx" --checkpoint "$work/garbage.onnx" -o "$work/x.onnx"
expect 2 "one of --params" -- "$importer" export "$work/good.onnx" -o "$work/x.onnx"
expect 2 "one of --params" -- "$importer" export "$work/good.onnx" --params "$work/params.npz" --checkpoint "$work/good.btck" -o "$work/x.onnx"
[ -e "$work/x.onnx" ] && { echo "FAIL: x.onnx was written by a refused export"; failures=$((failures + 1)); }
[ -e "$work/x.hpp" ] && { echo "FAIL: x.hpp was written by a refused run"; failures=$((failures + 1)); }
echo "refusals: $failures failed"
[ "$failures" -eq 0 ]
