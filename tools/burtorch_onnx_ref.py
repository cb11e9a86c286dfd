# SPDX-License-Identifier: Apache-2.0
"""A small ONNX evaluator in numpy, in ONNX's own layout (channels first,
the batch on the first axis), written from the operators' specification.

burtorch-import uses it twice: to fold the static subgraphs PyTorch writes
around a model (Shape, Constant, Unsqueeze, Concat, ... on constants), and
as the reference that `burtorch-import validate` compares the library's
outputs with. It shares no code with the importer's translation into the
library's layers, so the comparison is between two independent readings of
the same graph. Float64 throughout; integer tensors keep their type.
"""

import numpy as np

try:
    from onnx import numpy_helper
except ImportError:  # the caller reports the missing package
    numpy_helper = None


class RefError(Exception):
    """An operator or attribute this evaluator does not implement."""


def attrs_of(node):
    """The node's attributes as a dict of Python values."""
    out = {}
    for a in node.attribute:
        if a.type == 1:
            out[a.name] = a.f
        elif a.type == 2:
            out[a.name] = a.i
        elif a.type == 3:
            out[a.name] = a.s.decode()
        elif a.type == 4:
            out[a.name] = numpy_helper.to_array(a.t)
        elif a.type == 6:
            out[a.name] = list(a.floats)
        elif a.type == 7:
            out[a.name] = list(a.ints)
        elif a.type == 8:
            out[a.name] = [s.decode() for s in a.strings]
        else:
            out[a.name] = None
    return out


def _pads_split(pads, n):
    pads = list(pads) if pads else [0] * (2 * n)
    return pads[:n], pads[n:]


def _windows(x, kernel, strides, dilations, pads_begin, pads_end, fill):
    """x (N, C, *spatial) padded; yields (out_index, window (N, C, *kernel))."""
    n = len(kernel)
    pad = [(0, 0), (0, 0)] + [(pads_begin[i], pads_end[i]) for i in range(n)]
    xp = np.pad(x, pad, mode="constant", constant_values=fill)
    spatial = xp.shape[2:]
    out_shape = [(spatial[i] - dilations[i] * (kernel[i] - 1) - 1) // strides[i] + 1 for i in range(n)]
    if min(out_shape) <= 0:
        raise RefError("no window fits")
    return xp, out_shape


def conv(x, w, b, a):
    n = x.ndim - 2
    kernel = list(w.shape[2:])
    strides = a.get("strides", [1] * n)
    dil = a.get("dilations", [1] * n)
    group = a.get("group", 1)
    if a.get("auto_pad", "NOTSET") not in ("NOTSET", ""):
        raise RefError("Conv auto_pad")
    pb, pe = _pads_split(a.get("pads"), n)
    xp, out_shape = _windows(x, kernel, strides, dil, pb, pe, 0.0)
    cout = w.shape[0]
    cin_g = w.shape[1]
    out = np.zeros((x.shape[0], cout) + tuple(out_shape))
    cout_g = cout // group
    for idx in np.ndindex(*out_shape):
        sl = tuple(slice(idx[i] * strides[i], idx[i] * strides[i] + dil[i] * (kernel[i] - 1) + 1, dil[i]) for i in range(n))
        win = xp[(slice(None), slice(None)) + sl]  # N, C, *kernel
        for g in range(group):
            wg = w[g * cout_g:(g + 1) * cout_g]
            xg = win[:, g * cin_g:(g + 1) * cin_g]
            out[(slice(None), slice(g * cout_g, (g + 1) * cout_g)) + idx] = np.tensordot(xg, wg, axes=(list(range(1, n + 2)), list(range(1, n + 2))))
    if b is not None:
        out += b.reshape((1, cout) + (1,) * n)
    return out


def pool(x, a, kind):
    n = x.ndim - 2
    kernel = a["kernel_shape"]
    strides = a.get("strides", [1] * n)
    dil = a.get("dilations", [1] * n)
    if a.get("ceil_mode", 0) != 0 or a.get("auto_pad", "NOTSET") not in ("NOTSET", ""):
        raise RefError("pool ceil_mode/auto_pad")
    pb, pe = _pads_split(a.get("pads"), n)
    fill = -np.inf if kind == "max" else 0.0
    xp, out_shape = _windows(x, kernel, strides, dil, pb, pe, fill)
    ones = np.pad(np.ones(x.shape[2:]), [(pb[i], pe[i]) for i in range(n)])
    out = np.zeros(x.shape[:2] + tuple(out_shape))
    for idx in np.ndindex(*out_shape):
        sl = tuple(slice(idx[i] * strides[i], idx[i] * strides[i] + dil[i] * (kernel[i] - 1) + 1, dil[i]) for i in range(n))
        win = xp[(slice(None), slice(None)) + sl].reshape(x.shape[0], x.shape[1], -1)
        if kind == "max":
            out[(slice(None), slice(None)) + idx] = win.max(axis=2)
        elif a.get("count_include_pad", 0):
            out[(slice(None), slice(None)) + idx] = win.mean(axis=2)
        else:
            count = ones[sl].sum()
            out[(slice(None), slice(None)) + idx] = win.sum(axis=2) / count
    return out


def _axes(a, inputs, k, name="axes"):
    if len(inputs) > k and inputs[k] is not None:
        return [int(v) for v in inputs[k]]
    return a.get(name)


def _softmax(x, axis):
    z = x - x.max(axis=axis, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


def erf(x):
    import math
    return np.vectorize(math.erf)(x)


def gru(inputs, a):
    """ONNX GRU, one direction, activations sigmoid and tanh (the spec's
    equations, gate rows z, r, h)."""
    if a.get("direction", "forward") != "forward" or "clip" in a:
        raise RefError("GRU direction/clip")
    X, W, R = inputs[0], inputs[1][0], inputs[2][0]
    if a.get("layout", 0):
        X = np.swapaxes(X, 0, 1)
    hsize = R.shape[-1]
    B = inputs[3][0] if len(inputs) > 3 and inputs[3] is not None else np.zeros(6 * hsize)
    h = inputs[5][0] if len(inputs) > 5 and inputs[5] is not None else np.zeros((X.shape[1], hsize))
    sig = lambda v: 1.0 / (1.0 + np.exp(-v))
    Wz, Wr, Wh = W[:hsize], W[hsize:2 * hsize], W[2 * hsize:]
    Rz, Rr, Rh = R[:hsize], R[hsize:2 * hsize], R[2 * hsize:]
    wbz, wbr, wbh, rbz, rbr, rbh = (B[k * hsize:(k + 1) * hsize] for k in range(6))
    ys = []
    for t in range(X.shape[0]):
        x = X[t]
        z = sig(x @ Wz.T + h @ Rz.T + wbz + rbz)
        r = sig(x @ Wr.T + h @ Rr.T + wbr + rbr)
        if a.get("linear_before_reset", 0):
            n = np.tanh(x @ Wh.T + r * (h @ Rh.T + rbh) + wbh)
        else:
            n = np.tanh(x @ Wh.T + (r * h) @ Rh.T + rbh + wbh)
        h = (1.0 - z) * n + z * h
        ys.append(h)
    Y = np.stack(ys)[:, None]  # T, 1, N, H
    Yh = h[None]
    if a.get("layout", 0):
        Y = np.transpose(Y, (2, 0, 1, 3))
        Yh = np.swapaxes(Yh, 0, 1)
    return [Y, Yh]


def run_node(op, inputs, a):
    """The node's outputs (a list) for numpy inputs (None for an absent one)."""
    x = inputs[0] if inputs else None
    if op in ("Identity", "Dropout"):
        return [x]
    if op == "Relu":
        return [np.maximum(x, 0.0)]
    if op == "LeakyRelu":
        alpha = a.get("alpha", 0.01)
        return [np.where(x > 0, x, alpha * x)]
    if op == "Tanh":
        return [np.tanh(x)]
    if op == "Sigmoid":
        return [1.0 / (1.0 + np.exp(-x))]
    if op == "Erf":
        return [erf(x)]
    if op in ("Softmax", "LogSoftmax"):
        axis = a.get("axis", -1)
        s = _softmax(x, axis)
        return [s if op == "Softmax" else np.log(s)]
    if op == "Gemm":
        A, B = inputs[0], inputs[1]
        C = inputs[2] if len(inputs) > 2 else None
        A = A.T if a.get("transA", 0) else A
        B = B.T if a.get("transB", 0) else B
        y = a.get("alpha", 1.0) * (A @ B)
        if C is not None:
            y = y + a.get("beta", 1.0) * C
        return [y]
    if op == "MatMul":
        return [np.matmul(inputs[0], inputs[1])]
    if op in ("Add", "Sub", "Mul", "Div", "Pow"):
        f = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide, "Pow": np.power}[op]
        if op == "Div" and np.issubdtype(inputs[0].dtype, np.integer):
            return [(inputs[0] // inputs[1]).astype(inputs[0].dtype)]
        return [f(inputs[0], inputs[1])]
    if op == "Sqrt":
        return [np.sqrt(x)]
    if op == "GRU":
        return gru(inputs, a)
    if op == "LayerNormalization":
        axis = a.get("axis", -1)
        axis = axis + x.ndim if axis < 0 else axis
        axes = tuple(range(axis, x.ndim))
        mean = x.mean(axis=axes, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
        y = (x - mean) / np.sqrt(var + a.get("epsilon", 1e-5)) * inputs[1]
        if len(inputs) > 2 and inputs[2] is not None:
            y = y + inputs[2]
        return [y]
    if op == "Conv":
        return [conv(inputs[0], inputs[1], inputs[2] if len(inputs) > 2 else None, a)]
    if op == "MaxPool":
        return [pool(x, a, "max")]
    if op == "AveragePool":
        return [pool(x, a, "avg")]
    if op == "GlobalAveragePool":
        return [x.mean(axis=tuple(range(2, x.ndim)), keepdims=True)]
    if op == "GlobalMaxPool":
        return [x.max(axis=tuple(range(2, x.ndim)), keepdims=True)]
    if op == "ReduceMean":
        axes = _axes(a, inputs, 1)
        axes = tuple(axes) if axes else None
        return [x.mean(axis=axes, keepdims=bool(a.get("keepdims", 1)))]
    if op == "BatchNormalization":
        scale, bias, mean, var = inputs[1:5]
        eps = a.get("epsilon", 1e-5)
        shape = (1, -1) + (1,) * (x.ndim - 2)
        return [(x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps) * scale.reshape(shape) + bias.reshape(shape)]
    if op == "Flatten":
        axis = a.get("axis", 1)
        axis = axis + x.ndim if axis < 0 else axis
        return [x.reshape(int(np.prod(x.shape[:axis])), -1)]
    if op == "Reshape":
        shape = [int(v) for v in inputs[1]]
        if not a.get("allowzero", 0):
            shape = [x.shape[i] if v == 0 else v for i, v in enumerate(shape)]
        return [x.reshape(shape)]
    if op == "Shape":
        return [np.array(x.shape, dtype=np.int64)]
    if op == "Constant":
        if "value" in a:
            return [a["value"]]
        for k in ("value_float", "value_int"):
            if k in a:
                return [np.array(a[k])]
        for k in ("value_floats", "value_ints"):
            if k in a:
                return [np.array(a[k])]
        raise RefError("Constant without a value")
    if op == "ConstantOfShape":
        value = a.get("value")
        fill = np.asarray(value).reshape(-1)[0] if value is not None else np.float32(0)
        return [np.full([int(v) for v in x], fill, dtype=np.asarray(fill).dtype)]
    if op == "Unsqueeze":
        axes = _axes(a, inputs, 1)
        y = x
        r = x.ndim + len(axes)
        for ax in sorted(v + r if v < 0 else v for v in axes):
            y = np.expand_dims(y, ax)
        return [y]
    if op == "Squeeze":
        axes = _axes(a, inputs, 1)
        return [np.squeeze(x, axis=tuple(axes)) if axes else np.squeeze(x)]
    if op == "Concat":
        return [np.concatenate([v for v in inputs if v is not None], axis=a["axis"])]
    if op == "Gather":
        return [np.take(x, inputs[1].astype(np.int64), axis=a.get("axis", 0))]
    if op == "Cast":
        to = a["to"]
        dt = {1: np.float32, 6: np.int32, 7: np.int64, 9: np.bool_, 11: np.float64}.get(to)
        if dt is None:
            raise RefError("Cast to type %d" % to)
        return [x.astype(dt)]
    if op == "Transpose":
        return [np.transpose(x, a.get("perm"))]
    if op == "Expand":
        shape = [int(v) for v in inputs[1]]
        return [x * np.ones(shape, dtype=x.dtype)]
    if op == "Slice" and "starts" in a:  # opset 1 to 9: attributes
        inputs = [x, np.array(a["starts"]), np.array(a["ends"])] + ([np.array(a["axes"])] if "axes" in a else [])
    if op == "Slice":
        starts, ends = inputs[1], inputs[2]
        axes = inputs[3] if len(inputs) > 3 and inputs[3] is not None else range(len(starts))
        steps = inputs[4] if len(inputs) > 4 and inputs[4] is not None else [1] * len(starts)
        sl = [slice(None)] * x.ndim
        for s, e, ax, st in zip(starts, ends, axes, steps):
            sl[int(ax)] = slice(int(s), int(e), int(st))
        return [x[tuple(sl)]]
    if op == "Pad":
        mode = a.get("mode", "constant")
        pads = [int(v) for v in inputs[1]]
        value = float(inputs[2]) if len(inputs) > 2 and inputs[2] is not None and inputs[2].size else 0.0
        if mode != "constant":
            raise RefError("Pad mode " + mode)
        n = x.ndim
        return [np.pad(x, [(pads[i], pads[i + n]) for i in range(n)], constant_values=value)]
    raise RefError("operator " + op)


def evaluate(graph, feeds, initializers=None):
    """Runs a GraphProto on feeds (name -> array); returns name -> array for
    every tensor it computed (float64 for floating tensors)."""
    env = {}
    for t in graph.initializer:
        env[t.name] = numpy_helper.to_array(t)
    if initializers:
        env.update(initializers)
    env.update(feeds)
    for k, v in list(env.items()):
        if np.issubdtype(np.asarray(v).dtype, np.floating):
            env[k] = np.asarray(v, dtype=np.float64)
    for node in graph.node:
        ins = [env[n] if n else None for n in node.input]
        outs = run_node(node.op_type, ins, attrs_of(node))
        for name, val in zip(node.output, outs):
            if name:
                val = np.asarray(val)
                env[name] = val.astype(np.float64) if np.issubdtype(val.dtype, np.floating) else val
    return env
