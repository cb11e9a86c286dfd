# SPDX-License-Identifier: Apache-2.0
"""burtorch-import's reading of an ONNX graph: the static subgraphs folded,
every computed tensor followed as the library's nodes (its per-sample
shape, where the batch and a GRU's time axis are, which ONNX element each
node holds), each operator translated into a layer of the library or
refused with one line. The header is written by burtorch_onnx_emit.py."""

import re

import numpy as np
from onnx import numpy_helper

import burtorch_onnx_ref as ref

OPSETS = (6, 17)  # 13 to 17 is what PyTorch 1.13 writes; 6 to 12 read with their own semantics
FORMATS = ("fp32", "fp16", "bf16", "int8")
MAX_POOL_WINDOW = 32  # nn::kMaxPoolWindow
ACTS = {"Relu": "kRelu", "Tanh": "kTanh", "Sigmoid": "kSigmoid"}
RESERVED = {"create", "params", "forward", "loss", "outputs", "plan", "Model", "Real", "bt", "nn",
            "kParameters", "kSampleNodes", "kSampleSlots", "kCrossEntropyNodes", "kMseNodes", "input", "tape",
            "h", "k", "o", "v", "ok", "rng", "first", "target", "ordered", "out", "y"}
# C++ keywords a PyTorch module path may spell (a layer named "new" or "delete").
RESERVED |= {"alignas", "alignof", "and", "asm", "auto", "bool", "break", "case", "catch", "char", "class", "const",
             "constexpr", "continue", "default", "delete", "do", "double", "else", "enum", "explicit", "export",
             "extern", "false", "float", "for", "friend", "goto", "if", "inline", "int", "long", "mutable",
             "namespace", "new", "noexcept", "not", "nullptr", "operator", "or", "private", "protected", "public",
             "register", "return", "short", "signed", "sizeof", "static", "struct", "switch", "template", "this",
             "throw", "true", "try", "typedef", "typename", "union", "unsigned", "using", "virtual", "void",
             "volatile", "while", "xor", "std"}
SHAPE_ONLY = ("Flatten", "Reshape", "Squeeze", "Unsqueeze")


class Refused(Exception):
    """A model the importer will not translate: one line, exit status 2."""


def refuse(node, what):
    name = node.name or (node.output[0] if node.output else "?")
    raise Refused("node '%s' (%s): %s" % (name, node.op_type, what))


def channels_last(shape):
    """Library order of a per-sample (C, *spatial) tensor: node k holds the
    ONNX (C-order) flat index order[k]; channels vary fastest."""
    idx = np.arange(int(np.prod(shape))).reshape(shape)
    return np.moveaxis(idx, 0, -1).reshape(-1)


class Dyn:
    """A tensor computed per sample on the tape: its per-sample ONNX shape
    (no batch axis) and which ONNX flat index each of its nodes holds."""

    def __init__(self, shape, order, producer=None, pad=None, batch_axis=0, seq_axis=None):
        self.shape = tuple(int(v) for v in shape)
        self.order = np.asarray(order, dtype=np.int64)
        self.producer = producer  # index of the layer that made it
        self.pad = pad  # a pending zero Pad (per spatial axis), for the next conv
        self.batch_axis = batch_axis  # where the batch is in the ONNX tensor
        # A GRU's output sequence: only its last step is on the tape as one
        # run of nodes; seq_axis is its time axis (per sample).
        self.seq_axis = seq_axis
        self.tokens = False  # the graph's input of token ids (an integer tensor)
        self.rows = None  # an embedding's rows: the index of the embedding layer

    def full_shape(self, batch):
        s = list(self.shape)
        s.insert(self.batch_axis, batch)
        return tuple(s)

    def is_channels_last(self):
        return len(self.shape) >= 2 and np.array_equal(self.order, channels_last(self.shape))


def layer_name(weight, node):
    """A layer's name: its weight's module path (fc1.weight -> fc1), else the
    node's (/conv/Conv -> conv, as PyTorch names the nodes of a module)."""
    if "." in weight and not weight.startswith("onnx::"):
        return ident(weight.rsplit(".", 1)[0])
    parts = [p for p in (node.name or "").split("/") if p]
    if len(parts) > 1:
        return ident("_".join(parts[:-1]))
    return ident(node.name or weight)


def ident(name):
    s = re.sub(r"[^0-9A-Za-z]+", "_", name).strip("_")
    return ("l_" + s) if (not s or s[0].isdigit()) else s


def nparams(l):
    """Scalars of a layer with parameters: its weights and biases."""
    return l.W.size + (l.b.size if l.b is not None else 0)


def on_tape(l):
    """Its parameters live on the tape: trained, or a GRU or LayerNorm (no frozen form)."""
    return l.trainable or l.kind in ("gru", "layernorm")


class Layer:
    def __init__(self, kind, name, node, **kw):
        self.kind = kind  # linear conv1d conv2d act leaky maxpool1d ... 
        self.name = name
        self.node = node
        self.act = "kIdentity"
        self.trainable = False
        self.fmt = "fp32"
        self.onnx_weight = None  # initializer names (for grad/ and export)
        self.onnx_bias = None
        self.bn = None  # folded BatchNormalization: (scale per channel, names, mean, beta)
        self.rows = None  # reads an embedding's rows in place: that layer's index
        self.__dict__.update(kw)


class Importer:
    def __init__(self, model):
        self.model = model
        self.graph = model.graph
        self.consts = {}
        self.dyns = {}
        self.layers = []
        self.softmax = None  # "Softmax" / "LogSoftmax" applied to the last layer's nodes
        self.input_name = None
        self.input_shape = None
        self.output_name = None
        self.output_dyn = None
        self.opset = 13

    # --- reading -----------------------------------------------------------
    def check_opset(self):
        for o in self.model.opset_import:
            if o.domain in ("", "ai.onnx"):
                if not (OPSETS[0] <= o.version <= OPSETS[1]):
                    raise Refused("model: opset %d (supported: %d to %d)" % (o.version, OPSETS[0], OPSETS[1]))
                self.opset = o.version
            elif o.domain:
                raise Refused("model: operator set '%s' (only the default ONNX domain)" % o.domain)

    def load(self):
        self.check_opset()
        for t in self.graph.initializer:
            self.consts[t.name] = numpy_helper.to_array(t)
        inputs = [i for i in self.graph.input if i.name not in self.consts]
        if len(inputs) != 1:
            raise Refused("model: %d graph inputs (one is supported, the batch on its first axis)" % len(inputs))
        vi = inputs[0]
        tt = vi.type.tensor_type
        # token ids (int32/int64) are read by a Gather of an embedding table
        self.tokens = tt.elem_type in (6, 7) and any(
            n.op_type == "Gather" and len(n.input) == 2 and n.input[1] == vi.name and n.input[0] in self.consts
            for n in self.graph.node)
        if tt.elem_type not in (1, 11) and not self.tokens:
            raise Refused("input '%s': element type %d (float or double supported; int32 or int64 token ids "
                          "when a Gather of an embedding table reads them)" % (vi.name, tt.elem_type))
        dims = [d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim]
        if len(dims) < 2 or any(v is None or v <= 0 for v in dims[1:]):
            raise Refused("input '%s': shape %s (a batch axis and static sizes are needed)" % (vi.name, dims))
        self.input_name = vi.name
        self.input_shape = tuple(dims[1:])
        # The batch the shape subgraphs are folded with: the input's own if it
        # is static, else 2 (so that a literal 1 is not taken for the batch).
        self.batch = dims[0] if dims[0] else 2
        if len(self.graph.output) != 1:
            raise Refused("model: %d graph outputs (one is supported)" % len(self.graph.output))
        self.output_name = self.graph.output[0].name

    def input_order(self, shape):
        """Channels-last when the input feeds a convolution or a pool (through
        shape operators only); else ONNX's own order (a GRU's steps, features)."""
        spatial = self.input_consumer in ("Conv", "MaxPool", "AveragePool", "GlobalAveragePool", "Pad",
                                          "BatchNormalization", "ReduceMean")
        return channels_last(shape) if (len(shape) in (2, 3) and spatial) else np.arange(int(np.prod(shape)))

    def first_consumer(self, name):
        """The first operator after `name` that is not a shape operator."""
        passing = ("Identity", "Dropout", "Transpose", "Squeeze", "Unsqueeze", "Reshape", "Flatten")
        for _ in range(len(self.graph.node) + 1):
            users = [n for n in self.graph.node if name in n.input and n.op_type != "Shape"]
            if len(users) != 1:
                return None
            if users[0].op_type not in passing:
                return users[0].op_type
            name = users[0].output[0]
        return None

    def uses(self):
        count = {}
        for n in self.graph.node:
            if n.op_type == "Shape":
                continue
            for i in n.input:
                count[i] = count.get(i, 0) + 1
        return count

    # --- translating -------------------------------------------------------
    def static_value(self, name):
        """An initializer's or a Constant node's value (None if computed)."""
        if name in self.consts:
            return np.asarray(self.consts[name], dtype=np.float64)
        for n in self.graph.node:
            if n.op_type == "Constant" and n.output[0] == name:
                v = ref.attrs_of(n).get("value")
                return None if v is None else np.asarray(v, dtype=np.float64)
        return None

    def collapse_gelu(self):
        """PyTorch's exact GELU, x * 0.5 * (1 + erf(x / sqrt 2)), as it exports
        it before opset 20 (Div, Erf, Add, Mul, Mul), made one Gelu node."""
        from onnx import helper
        nodes = list(self.graph.node)
        by_output = {o: n for n in nodes for o in n.output}
        users = {}
        for n in nodes:
            for i in n.input:
                users.setdefault(i, []).append(n)

        def other(n, name):
            rest = [i for i in n.input if i != name]
            return rest[0] if len(rest) == 1 else None

        def is_value(name, want):
            v = self.static_value(name) if name else None
            return v is not None and v.size == 1 and abs(float(v.reshape(-1)[0]) - want) <= 1e-6 * abs(want)

        drop = set()
        for erf in [n for n in nodes if n.op_type == "Erf"]:
            div = by_output.get(erf.input[0])
            if div is None or div.op_type != "Div" or not is_value(div.input[1], 2.0 ** 0.5):
                continue
            x = div.input[0]
            adds = users.get(erf.output[0], [])
            if len(adds) != 1 or adds[0].op_type != "Add" or not is_value(other(adds[0], erf.output[0]), 1.0):
                continue
            muls = users.get(adds[0].output[0], [])
            if len(muls) != 1 or muls[0].op_type != "Mul" or other(muls[0], adds[0].output[0]) != x:
                continue
            halves = users.get(muls[0].output[0], [])
            if len(halves) != 1 or halves[0].op_type != "Mul" or not is_value(other(halves[0], muls[0].output[0]), 0.5):
                continue
            if sorted(id(u) for u in users.get(x, [])) != sorted((id(div), id(muls[0]))):
                continue  # x used elsewhere too: a real branch
            gelu = helper.make_node("Gelu", [x], [halves[0].output[0]], name=halves[0].name or erf.name)
            drop.update(id(n) for n in (div, erf, adds[0], muls[0]))
            halves[0].CopyFrom(gelu)
        kept = [n for n in nodes if id(n) not in drop]
        del self.graph.node[:]
        self.graph.node.extend(kept)

    def collapse_layernorm(self):
        """PyTorch's LayerNorm as it exports it before opset 17: ReduceMean over
        the last axis, Sub, Pow 2, ReduceMean, Add eps, Sqrt, Div, then Mul by
        the scale and Add of the bias, made one LayerNormalization node."""
        from onnx import helper
        nodes = list(self.graph.node)
        by_output = {o: n for n in nodes for o in n.output}
        users = {}
        for n in nodes:
            for i in n.input:
                users.setdefault(i, []).append(n)

        def only_user(name, op):
            u = users.get(name, [])
            return u[0] if (len(u) == 1 and u[0].op_type == op) else None

        def other(n, name):
            rest = [i for i in n.input if i != name]
            return rest[0] if len(rest) == 1 else None

        def last_axis(n):
            axes = ref.attrs_of(n).get("axes")
            return axes is not None and list(axes) == [-1] and ref.attrs_of(n).get("keepdims", 1) == 1

        drop = set()
        for mean in [n for n in nodes if n.op_type == "ReduceMean" and last_axis(n)]:
            x = mean.input[0]
            xu = users.get(x, [])
            subs = [u for u in xu if u.op_type == "Sub" and list(u.input) == [x, mean.output[0]]]
            if len(xu) != 2 or len(subs) != 1 or len(users.get(mean.output[0], [])) != 1:
                continue
            sub = subs[0]
            du = users.get(sub.output[0], [])
            pw = [u for u in du if u.op_type == "Pow" and u.input[0] == sub.output[0]]
            dv = [u for u in du if u.op_type == "Div" and u.input[0] == sub.output[0]]
            if len(du) != 2 or len(pw) != 1 or len(dv) != 1:
                continue
            two = self.static_value(pw[0].input[1])
            if two is None or two.size != 1 or float(two.reshape(-1)[0]) != 2.0:
                continue
            var = only_user(pw[0].output[0], "ReduceMean")
            if var is None or not last_axis(var):
                continue
            add = only_user(var.output[0], "Add")
            eps = self.static_value(other(add, var.output[0])) if add is not None else None
            if eps is None or eps.size != 1:
                continue
            sqrt = only_user(add.output[0], "Sqrt")
            if sqrt is None or dv[0].input[1] != sqrt.output[0] or len(users.get(sqrt.output[0], [])) != 1:
                continue
            mul = only_user(dv[0].output[0], "Mul")
            scale = other(mul, dv[0].output[0]) if mul is not None else None
            known = lambda name: name is not None and self.static_value(name) is not None
            shift = only_user(mul.output[0], "Add") if known(scale) else None
            bias = other(shift, mul.output[0]) if shift is not None else None
            if not known(bias):
                refuse(dv[0], "a LayerNorm without its scale and bias (elementwise_affine=False) is not supported")
            ln = helper.make_node("LayerNormalization", [x, scale, bias], [shift.output[0]],
                                  name=shift.name or mean.name, axis=-1, epsilon=float(eps.reshape(-1)[0]))
            drop.update(id(n) for n in (mean, sub, pw[0], var, add, sqrt, dv[0], mul))
            shift.CopyFrom(ln)
        kept = [n for n in nodes if id(n) not in drop]
        del self.graph.node[:]
        self.graph.node.extend(kept)

    def translate(self):
        self.collapse_gelu()
        self.collapse_layernorm()
        uses = self.uses()
        last = [self.input_name]
        self.input_consumer = self.first_consumer(self.input_name)
        self.dyns[self.input_name] = Dyn(self.input_shape, self.input_order(self.input_shape))
        self.dyns[self.input_name].tokens = self.tokens
        for node in self.graph.node:
            ins = list(node.input)
            a = ref.attrs_of(node)
            dyn_in = [i for i in ins if i in self.dyns]
            if node.op_type == "Shape" and dyn_in:
                self.consts[node.output[0]] = np.array(self.dyns[dyn_in[0]].full_shape(self.batch), dtype=np.int64)
                continue
            if not dyn_in:
                missing = [i for i in ins if i and i not in self.consts]
                if missing:
                    refuse(node, "input '%s' is neither computed nor constant" % missing[0])
                try:
                    outs = ref.run_node(node.op_type, [self.consts[i] if i else None for i in ins], a)
                except ref.RefError as e:
                    refuse(node, "cannot fold a constant subgraph: %s" % e)
                except Exception as e:  # numpy's own errors on bad shapes
                    refuse(node, "cannot fold a constant subgraph: %s" % e)
                for name, v in zip(node.output, outs):
                    self.consts[name] = np.asarray(v)
                continue
            if len(dyn_in) != 1 or dyn_in[0] not in last:
                refuse(node, "a graph that branches (more than one computed input, or a computed tensor "
                       "used twice) is not supported")
            src = dyn_in[0]
            if uses.get(src, 0) > 1 and src != self.input_name:
                refuse(node, "tensor '%s' is used by %d nodes (a branch); not supported" % (src, uses[src]))
            x = self.dyns[src]
            out = self.op(node, a, x, ins)
            if x.rows is not None:
                self.follow_rows(node, x, out)
            if isinstance(out, list):  # a GRU: Y and Y_h
                last = []
                for name, d in zip(node.output, out):
                    if name:
                        self.dyns[name] = d
                        last.append(name)
                continue
            self.dyns[node.output[0]] = out
            last = [node.output[0]]
        if self.output_name not in last:
            raise Refused("model: graph output '%s' is not the last computed tensor" % self.output_name)
        self.output_dyn = self.dyns[self.output_name]
        if self.output_dyn.seq_axis is not None or self.output_dyn.batch_axis != 0:
            raise Refused("model: the graph's output is a GRU's whole sequence or has its batch off the first axis")
        if self.output_dyn.pad is not None:
            raise Refused("model: a Pad at the end of the graph (only before a Conv)")
        seen = set()
        for l in self.layers:  # C++ member names: unique, none of the model's own
            base = l.name if l.name not in RESERVED else l.name + "_layer"
            name, k = base, 2
            while name in seen:
                name, k = "%s_%d" % (base, k), k + 1
            seen.add(name)
            l.name = name

    def follow_rows(self, node, x, out):
        """An embedding's rows: shape operators keep them rows (the data does
        not move), a Gemm/MatMul or a GRU reads them in place when the table is
        trained; any other operator reads them as nodes, which only a frozen
        table records (the table's values as leaves)."""
        emb = self.layers[x.rows]
        if node.op_type in ("Identity", "Dropout") + SHAPE_ONLY + ("Transpose",):
            if not np.array_equal(out.order, np.arange(len(out.order))):
                refuse(node, "a transposition that reorders an embedding's rows")
            out.rows = x.rows
        elif node.op_type in ("Gemm", "MatMul", "GRU"):
            self.layers[-1].rows = x.rows
        else:
            emb.feeds.append(node)

    def embedding(self, node, a, x, ins):
        """Gather(table, token ids) of the graph's input: an embedding."""
        if a.get("axis", 0) != 0:
            refuse(node, "attribute axis=%d (an embedding gathers rows of its table: axis 0)" % a["axis"])
        W = self.const(node, ins[0], "the embedding table")
        if W.ndim != 2 or W.shape[0] < 1 or W.shape[1] < 1:
            refuse(node, "a table of shape %s (rows, width needed)" % list(W.shape))
        rows, width = W.shape
        count = int(np.prod(x.shape))
        self.layers.append(Layer("embedding", layer_name(ins[0], node), node, W=W, b=None, in_=rows, out=width,
                                 tokens=count, onnx_weight=ins[0], feeds=[]))
        d = Dyn(x.shape + (width,), np.arange(count * width), len(self.layers) - 1)
        d.rows = len(self.layers) - 1
        return d

    def const(self, node, name, what):
        if name not in self.consts:
            refuse(node, "%s '%s' must be a constant (an initializer)" % (what, name))
        return np.asarray(self.consts[name], dtype=np.float64)

    def producer_open(self, x):
        """The layer that made x if an activation or bias may be fused into it."""
        if x.producer is None or x.producer != len(self.layers) - 1:
            return None
        layer = self.layers[x.producer]
        return layer if layer.kind in ("linear", "conv1d", "conv2d") and layer.act == "kIdentity" else None

    def legacy(self, node, a, ins):
        """Opsets 6 to 12: the attributes that later became inputs, and the
        semantics that differ, read as that opset defines them."""
        op = node.op_type
        if op == "Pad" and self.opset < 11:
            if "pads" not in a:
                refuse(node, "no pads")
            name = node.output[0] + "__pads"
            self.consts[name] = np.array(a["pads"], dtype=np.int64)
            ins = [ins[0], name]
            if a.get("value", 0.0) != 0.0:
                refuse(node, "a non-zero value")
        if op == "BatchNormalization" and self.opset < 9 and a.get("spatial", 1) != 1:
            refuse(node, "attribute spatial=0")
        if op in ("Add", "Sub", "Mul", "Div") and self.opset < 7 and a.get("broadcast", 0):
            a["legacy_axis"] = a.get("axis", None)
        if op == "Reshape" and self.opset < 5:
            refuse(node, "Reshape before opset 5 (shape as an attribute)")
        return a, ins

    def op(self, node, a, x, ins):
        op = node.op_type
        a, ins = self.legacy(node, a, ins)
        if self.softmax is not None:
            refuse(node, "an operator after %s (supported only at the end)" % self.softmax)
        if x.tokens:
            if op == "Gather" and len(ins) == 2 and ins[1] == self.input_name and ins[0] in self.consts:
                return self.embedding(node, a, x, ins)
            refuse(node, "token ids (the integer input) read by anything but a Gather of an embedding table")
        if x.pad is not None and op not in ("Conv", "Pad"):
            refuse(node, "a Pad that is not right before a Conv")
        if op in ("Identity", "Dropout"):
            used = {i for n in self.graph.node for i in n.input} | {o.name for o in self.graph.output}
            if op == "Dropout" and len(node.output) > 1 and node.output[1] in used:
                refuse(node, "the mask output used (training-mode Dropout)")
            if op == "Dropout" and len(ins) > 2 and ins[2] and bool(np.asarray(self.consts.get(ins[2], 1)).reshape(-1)[0]):
                refuse(node, "training_mode=true (a training-mode Dropout is random)")
            return x
        if op in ("Squeeze", "Unsqueeze") and (x.batch_axis != 0 or x.seq_axis is not None):
            return self.squeeze_axes(node, a, x, ins)
        if x.seq_axis is not None and op not in ("Transpose", "Gather", "Slice"):
            refuse(node, "a GRU's output sequence used beyond its last step (only the last step is kept)")
        if x.batch_axis != 0 and op not in ("Transpose", "GRU", "Gather"):
            refuse(node, "a tensor whose batch is not on its first axis")
        if op in SHAPE_ONLY:
            return self.reshape(node, a, x, ins)
        if op == "Transpose":
            return self.transpose(node, a, x)
        if op in ("Gather", "Slice"):
            return self.select(node, a, x, ins)
        if op == "GRU":
            return self.gru(node, a, x, ins)
        if op == "LayerNormalization":
            return self.layernorm(node, a, x, ins)
        if op in ("Gemm", "MatMul"):
            return self.linear(node, a, x, ins)
        if op == "Add":
            return self.add_bias(node, a, x, ins)
        if op == "Conv":
            return self.conv(node, a, x, ins)
        if op == "BatchNormalization":
            return self.batchnorm(node, a, x, ins)
        if op in ACTS:
            layer = self.producer_open(x)
            if layer is not None:
                layer.act = ACTS[op]
                return x
            self.layers.append(Layer("act", ident(node.output[0]), node, act=ACTS[op], n=len(x.order)))
            return Dyn(x.shape, x.order, len(self.layers) - 1)
        if op == "Gelu":
            self.layers.append(Layer("gelu", ident(node.output[0]), node, n=len(x.order)))
            return Dyn(x.shape, x.order, len(self.layers) - 1)
        if op == "LeakyRelu":
            self.layers.append(Layer("leaky", ident(node.output[0]), node, slope=a.get("alpha", 0.01), n=len(x.order)))
            return Dyn(x.shape, x.order, len(self.layers) - 1)
        if op in ("MaxPool", "AveragePool"):
            return self.pool(node, a, x, "max" if op == "MaxPool" else "avg")
        if op in ("GlobalAveragePool", "ReduceMean"):
            return self.global_avg(node, a, x, ins)
        if op == "Pad":
            return self.pad(node, a, x, ins)
        if op in ("Softmax", "LogSoftmax"):
            axis = a.get("axis", -1)
            if len(x.shape) != 1 or axis not in (1, -1):
                refuse(node, "attribute axis=%d on a %d-D tensor (only over the features of (N, F))" % (axis, len(x.shape) + 1))
            self.softmax = op
            return x
        refuse(node, "operator not supported")

    def reshape(self, node, a, x, ins):
        extra = [self.consts.get(i) if i else None for i in ins[1:]]
        if any(v is None for v, i in zip(extra, ins[1:]) if i):
            refuse(node, "a shape that is not constant")
        try:
            y = ref.run_node(node.op_type, [np.zeros((self.batch,) + x.shape)] + extra, a)[0]
        except Exception:
            refuse(node, "a reshape across the batch axis (one sample of shape %s)" % list(x.shape))
        if y.ndim < 2 or y.shape[0] != self.batch:
            refuse(node, "the result's first axis is not the batch (shape %s for one sample)" % list(y.shape))
        return Dyn(y.shape[1:], x.order, x.producer)

    def transpose(self, node, a, x):
        rank = len(x.shape) + 1
        perm = list(a.get("perm") or reversed(range(rank)))
        b = x.batch_axis
        nb = perm.index(b)
        per = [p - (1 if p > b else 0) for p in perm if p != b]  # the per-sample permutation
        n = int(np.prod(x.shape))
        seq = None if x.seq_axis is None else per.index(x.seq_axis)
        shape = tuple(x.shape[p] for p in per)
        if x.seq_axis is not None:
            return Dyn(shape, x.order, x.producer, batch_axis=nb, seq_axis=seq)
        moved = np.arange(n).reshape(x.shape).transpose(per)
        new_of_old = np.empty(n, dtype=np.int64)
        new_of_old[moved.reshape(-1)] = np.arange(n)
        return Dyn(shape, new_of_old[x.order], x.producer, batch_axis=nb)

    def squeeze_axes(self, node, a, x, ins):
        """Squeeze/Unsqueeze of a tensor whose batch is not first or of a GRU's
        sequence: only axes of size 1 come and go; the data does not move."""
        axes = ref._axes(a, [None] + [self.consts.get(i) for i in ins[1:]], 1)
        full = list(x.full_shape(-1))  # -1 marks the batch
        seq_full = None
        if x.seq_axis is not None:
            seq_full = x.seq_axis + (1 if x.seq_axis >= x.batch_axis else 0)
        if node.op_type == "Squeeze":
            if not axes:
                refuse(node, "a Squeeze without axes of a computed tensor")
            axes = sorted(v + len(full) if v < 0 else v for v in axes)
            if any(full[v] != 1 for v in axes):
                refuse(node, "attribute axes=%s: an axis that is not of size 1" % axes)
            keep = [i for i in range(len(full)) if i not in axes]
        else:
            r = len(full) + len(axes)
            axes = sorted(v + r if v < 0 else v for v in axes)
            keep = []
            src = iter(range(len(full)))
            for i in range(r):
                keep.append(None if i in axes else next(src))
        new_full = [1 if k is None else full[k] for k in keep]
        nb = new_full.index(-1)
        new_seq = None
        if seq_full is not None:
            new_seq = keep.index(seq_full)
            new_seq -= 1 if new_seq > nb else 0
        shape = [v for i, v in enumerate(new_full) if i != nb]
        return Dyn(shape, x.order, x.producer, batch_axis=nb, seq_axis=new_seq)

    def select(self, node, a, x, ins):
        """Gather or Slice of a computed tensor: the last step of a GRU's
        sequence, or an axis of size 1; nothing else (that would move data)."""
        rank = len(x.shape) + 1
        if node.op_type == "Gather":
            axis = a.get("axis", 0)
            idx = self.consts.get(ins[1])
            if idx is None or np.asarray(idx).ndim != 0:
                refuse(node, "indices that are not one constant (an embedding of a computed tensor)")
            idx = int(idx)
            drop = True
        else:
            starts, ends = self.consts.get(ins[1]), self.consts.get(ins[2])
            axes = self.consts.get(ins[3]) if len(ins) > 3 and ins[3] else None
            steps = self.consts.get(ins[4]) if len(ins) > 4 and ins[4] else None
            if starts is None or ends is None or len(starts) != 1 or (steps is not None and int(steps[0]) != 1):
                refuse(node, "a slice of more than one axis, or with a step")
            axis = int(axes[0]) if axes is not None else 0
            idx = int(starts[0])
            drop = False
        axis = axis + rank if axis < 0 else axis
        if axis == x.batch_axis:
            refuse(node, "a selection along the batch axis")
        pa = axis - (1 if axis > x.batch_axis else 0)  # per-sample axis
        size = x.shape[pa]
        idx = idx + size if idx < 0 else idx
        if node.op_type == "Slice":
            end = int(ends[0])
            end = min(end + size if end < 0 else end, size)
            if end - idx != 1:
                refuse(node, "a slice of %d elements (only one step)" % (end - idx))
        if x.seq_axis is not None and pa == x.seq_axis:
            if idx != size - 1:
                refuse(node, "step %d of a GRU's output sequence (only its last step is kept)" % idx)
            seq = None
        elif size == 1:
            seq = x.seq_axis
        else:
            refuse(node, "a selection from a computed tensor (only a GRU's last step or an axis of size 1)")
        shape = list(x.shape)
        if drop:
            del shape[pa]
            if seq is not None and seq > pa:
                seq -= 1
        else:
            shape[pa] = 1
        nb = x.batch_axis - (1 if (drop and axis < x.batch_axis) else 0)
        return Dyn(shape, x.order, x.producer, batch_axis=nb, seq_axis=seq)

    def gru(self, node, a, x, ins):
        layout = a.get("layout", 0)
        if x.batch_axis != (1 if layout == 0 else 0) or len(x.shape) != 2:
            refuse(node, "input X of shape %s with the batch on axis %d (layout=%d)" % (
                list(x.full_shape(1)), x.batch_axis, layout))
        if not np.array_equal(x.order, np.arange(len(x.order))):
            refuse(node, "an input sequence that is not in its own order (steps, then features)")
        if a.get("direction", "forward") != "forward":
            refuse(node, "attribute direction=%s (one direction)" % a["direction"])
        if a.get("linear_before_reset", 0) != 1:
            refuse(node, "attribute linear_before_reset=0 (PyTorch's GRU, the library's, applies the reset after)")
        if "clip" in a:
            refuse(node, "attribute clip")
        acts = [v.lower() for v in a.get("activations", ["Sigmoid", "Tanh"])]
        if acts != ["sigmoid", "tanh"]:
            refuse(node, "attribute activations=%s" % a["activations"])
        T, I = x.shape
        W = self.const(node, ins[1], "weight W")
        R = self.const(node, ins[2], "recurrence weight R")
        H = int(a.get("hidden_size", R.shape[-1]))
        if W.shape != (1, 3 * H, I) or R.shape != (1, 3 * H, H):
            refuse(node, "W %s and R %s for hidden_size %d and %d inputs" % (list(W.shape), list(R.shape), H, I))
        B = self.const(node, ins[3], "bias B") if len(ins) > 3 and ins[3] else None
        if len(ins) > 4 and ins[4]:
            lens = self.consts.get(ins[4])
            if lens is None or np.any(np.asarray(lens) != T):
                refuse(node, "input sequence_lens (sequences of different lengths)")
        if len(ins) > 5 and ins[5]:
            h0 = self.consts.get(ins[5])
            if h0 is None or np.any(np.asarray(h0) != 0):
                refuse(node, "an initial_h that is not zeros")
        # ONNX's gate rows z, r, h -> the library's (PyTorch's) r, z, n
        rz = lambda M: np.concatenate([M[H:2 * H], M[0:H], M[2 * H:3 * H]])
        Wl, Rl = rz(W[0]), rz(R[0])
        b = None if B is None else np.concatenate([rz(B[0][:3 * H]), rz(B[0][3 * H:])])
        name = layer_name(ins[1], node)
        layer = Layer("gru", name, node, W=np.concatenate([Wl.reshape(-1), Rl.reshape(-1)]), b=b, in_=I, out=H,
                      steps=T, onnx_weight=ins[1], onnx_r=ins[2], onnx_bias=(ins[3] if B is not None else None))
        self.layers.append(layer)
        k = len(self.layers) - 1
        # Y: (T, num_directions, N, H) or layout 1 (N, T, 1, H); Y_h: (1, N, H) or (N, 1, H)
        if layout == 0:
            y = Dyn((T, 1, H), np.arange(H), k, batch_axis=2, seq_axis=0)
            yh = Dyn((1, H), np.arange(H), k, batch_axis=1)
        else:
            y = Dyn((T, 1, H), np.arange(H), k, batch_axis=0, seq_axis=0)
            yh = Dyn((1, H), np.arange(H), k, batch_axis=0)
        return [y, yh]

    def layernorm(self, node, a, x, ins):
        if len(x.shape) != 1:
            refuse(node, "input of shape %s (over the features of a (N, F) tensor only)" % list((1,) + x.shape))
        if a.get("axis", -1) not in (-1, 1):
            refuse(node, "attribute axis=%d" % a["axis"])
        used = {i for n in self.graph.node for i in n.input} | {o.name for o in self.graph.output}
        if any(o and o in used for o in node.output[1:]):
            refuse(node, "the Mean or InvStdDev output used")
        width = x.shape[0]
        gamma = self.const(node, ins[1], "scale").reshape(-1)
        beta = self.const(node, ins[2], "bias").reshape(-1) if len(ins) > 2 and ins[2] else np.zeros(width)
        if gamma.size != width or beta.size != width:
            refuse(node, "scale and bias of %d and %d values for %d features" % (gamma.size, beta.size, width))
        # gains and biases as one run, in the input's node order
        name = layer_name(ins[1], node)
        self.layers.append(Layer("layernorm", name, node, W=gamma[x.order], b=beta[x.order], in_=width, out=width,
                                 order=x.order, eps=float(a.get("epsilon", 1e-5)), onnx_weight=ins[1],
                                 onnx_bias=(ins[2] if len(ins) > 2 and ins[2] else None)))
        return Dyn(x.shape, x.order, len(self.layers) - 1)

    def linear(self, node, a, x, ins):
        if len(x.shape) != 1:
            refuse(node, "input of shape %s: a 2-D (N, F) input is needed" % list((1,) + x.shape))
        if node.op_type == "Gemm":
            if a.get("transA", 0):
                refuse(node, "attribute transA=1")
            if ins[0] != [i for i in ins if i in self.dyns][0]:
                refuse(node, "the computed tensor must be input A")
            B = self.const(node, ins[1], "weight")
            W = B if a.get("transB", 0) else B.T  # [out][in]
            W = W * a.get("alpha", 1.0)
            b = None
            if len(ins) > 2 and ins[2]:
                C = self.const(node, ins[2], "bias") * a.get("beta", 1.0)
                if C.size not in (1, W.shape[0]):
                    refuse(node, "bias C of shape %s" % list(C.shape))
                b = np.broadcast_to(C.reshape(-1), (W.shape[0],)).copy()
            wname = ins[1]
            bname = ins[2] if len(ins) > 2 and ins[2] else None
            wlayout = "t" if not a.get("transB", 0) else "n"
        else:
            if ins[0] not in self.dyns:
                refuse(node, "the computed tensor must be the first operand")
            B = self.const(node, ins[1], "weight")
            if B.ndim != 2:
                refuse(node, "a weight of %d dimensions" % B.ndim)
            W, b, wname, bname, wlayout = B.T, None, ins[1], None, "t"
            a = {"alpha": 1.0}
        if W.shape[1] != len(x.order):
            refuse(node, "weight of shape %s for %d inputs" % (list(W.shape), len(x.order)))
        # The library's nodes hold ONNX flat indices x.order: columns follow them.
        Wl = W[:, x.order]
        name = layer_name(wname, node)
        layer = Layer("linear", name, node, W=Wl, b=b, in_=W.shape[1], out=W.shape[0],
                      onnx_weight=wname, onnx_bias=bname, wlayout=wlayout, order=x.order,
                      alpha=a.get("alpha", 1.0), beta=a.get("beta", 1.0))
        self.layers.append(layer)
        return Dyn((W.shape[0],), np.arange(W.shape[0]), len(self.layers) - 1)

    def add_bias(self, node, a, x, ins):
        other = [i for i in ins if i not in self.dyns]
        if len(other) != 1:
            refuse(node, "an Add of two computed tensors (a residual) is not supported")
        layer = self.producer_open(x)
        c = self.const(node, other[0], "addend")
        if layer is None:
            refuse(node, "an Add that is not the bias of the Gemm, MatMul or Conv before it")
        nch = layer.out
        full = (1,) + x.shape
        if a.get("legacy_axis") is not None:  # opset 6: c aligned at `axis`
            ax = a["legacy_axis"] + len(full) if a["legacy_axis"] < 0 else a["legacy_axis"]
            c = c.reshape(c.shape + (1,) * max(0, len(full) - ax - c.ndim))
        try:
            B = np.broadcast_to(c, full)
        except ValueError:
            refuse(node, "addend of shape %s does not broadcast to %s" % (list(c.shape), list(full)))
        if c.ndim > len(full):
            refuse(node, "addend of shape %s has more axes than %s" % (list(c.shape), list(full)))
        per = B.reshape(nch, -1) if len(full) > 2 else B.reshape(1, nch).T
        if not np.all(per == per[:, :1]):
            refuse(node, "addend of shape %s is not one value per channel" % list(c.shape))
        v = per[:, 0]
        if layer.b is not None:
            # Its gradient and the way back would have to be split between two tensors.
            refuse(node, "a second bias after the %s's own" % layer.node.op_type)
        layer.b = v.copy()
        layer.onnx_bias = other[0]
        layer.bias_from_add = True
        return x

    def conv(self, node, a, x, ins):
        dims = len(x.shape) - 1
        if dims not in (1, 2):
            refuse(node, "a %d-D convolution (1-D and 2-D are supported)" % dims)
        if a.get("group", 1) != 1:
            refuse(node, "attribute group=%d (grouped convolution)" % a["group"])
        if a.get("auto_pad", "NOTSET") not in ("NOTSET", ""):
            refuse(node, "attribute auto_pad=%s" % a["auto_pad"])
        if not x.is_channels_last():
            refuse(node, "an input that is not a (N, C, ...) activation (reshaped or transposed into it)")
        W = self.const(node, ins[1], "weight")
        if W.ndim != dims + 2 or W.shape[1] != x.shape[0]:
            refuse(node, "weight of shape %s for %d input channels" % (list(W.shape), x.shape[0]))
        b = self.const(node, ins[2], "bias") if len(ins) > 2 and ins[2] else None
        kernel = list(W.shape[2:])
        if "kernel_shape" in a and list(a["kernel_shape"]) != kernel:
            refuse(node, "attribute kernel_shape %s differs from the weight's" % a["kernel_shape"])
        strides = list(a.get("strides", [1] * dims))
        dil = list(a.get("dilations", [1] * dims))
        pads = list(a.get("pads", [0] * (2 * dims)))
        pre = x.pad or [0] * (2 * dims)
        pads = [pads[i] + pre[i] for i in range(2 * dims)]
        if pads[:dims] != pads[dims:]:
            refuse(node, "attribute pads %s: asymmetric padding" % pads)
        shape = x.shape
        out_sp = [(shape[1 + i] + 2 * pads[i] - dil[i] * (kernel[i] - 1) - 1) // strides[i] + 1 for i in range(dims)]
        if min(out_sp) <= 0:
            refuse(node, "no window fits the input of shape %s" % list(shape))
        Wl = np.moveaxis(W, 1, -1)  # [Cout][k...][Cin]
        name = layer_name(ins[1], node)
        layer = Layer("conv%dd" % dims, name, node, W=Wl, b=b, cin=shape[0], out=W.shape[0], kernel=kernel,
                      strides=strides, dil=dil, pads=pads[:dims], spatial=list(shape[1:]),
                      onnx_weight=ins[1], onnx_bias=(ins[2] if b is not None else None))
        self.layers.append(layer)
        oshape = (W.shape[0],) + tuple(out_sp)
        return Dyn(oshape, channels_last(oshape), len(self.layers) - 1)

    def batchnorm(self, node, a, x, ins):
        layer = self.producer_open(x)
        if layer is None:
            refuse(node, "a BatchNormalization not right after a Conv, Gemm or MatMul (nothing to fold it into)")
        if a.get("training_mode", 0):
            refuse(node, "attribute training_mode=1")
        gamma, beta, mean, var = (self.const(node, i, "statistic") for i in ins[1:5])
        s = gamma / np.sqrt(var + a.get("epsilon", 1e-5))
        if s.size != layer.out:
            refuse(node, "%d channels after a layer of %d" % (s.size, layer.out))
        layer.W = layer.W * s.reshape((-1,) + (1,) * (layer.W.ndim - 1))
        b = layer.b if layer.b is not None else np.zeros(layer.out)
        layer.b = (b - mean) * s + beta
        layer.bn = {"scale": s, "mean": mean, "beta": beta, "beta_name": ins[2], "had_bias": layer.onnx_bias is not None}
        return x

    def pool(self, node, a, x, kind):
        dims = len(x.shape) - 1
        if dims not in (1, 2) or not x.is_channels_last():
            refuse(node, "input of shape %s (a (N, C, L) or (N, C, H, W) activation is needed)" % list((1,) + x.shape))
        kernel = list(a["kernel_shape"])
        strides = list(a.get("strides", [1] * dims))
        for key, bad in (("pads", [0] * (2 * dims)), ("dilations", [1] * dims)):
            if key in a and list(a[key]) != bad:
                refuse(node, "attribute %s=%s (not supported by the library's pools)" % (key, a[key]))
        if a.get("ceil_mode", 0):
            refuse(node, "attribute ceil_mode=1")
        if a.get("auto_pad", "NOTSET") not in ("NOTSET", ""):
            refuse(node, "attribute auto_pad=%s" % a["auto_pad"])
        if x.pad is not None:
            refuse(node, "a Pad before a pool")
        if int(np.prod(kernel)) > MAX_POOL_WINDOW:
            refuse(node, "attribute kernel_shape %s: more than %d taps" % (kernel, MAX_POOL_WINDOW))
        if a.get("storage_order", 0):
            refuse(node, "attribute storage_order=1")
        if len(node.output) > 1 and node.output[1]:
            refuse(node, "the Indices output")
        sp = x.shape[1:]
        out_sp = [(sp[i] - kernel[i]) // strides[i] + 1 for i in range(dims)]
        if min(out_sp) <= 0:
            refuse(node, "no window fits the input of shape %s" % list(x.shape))
        self.layers.append(Layer("%spool%dd" % (kind, dims), ident(node.name or node.output[0]), node, channels=x.shape[0],
                                 kernel=kernel, strides=strides, spatial=list(sp)))
        oshape = (x.shape[0],) + tuple(out_sp)
        return Dyn(oshape, channels_last(oshape), len(self.layers) - 1)

    def global_avg(self, node, a, x, ins):
        dims = len(x.shape) - 1
        if dims not in (1, 2) or not x.is_channels_last():
            refuse(node, "input of shape %s (a (N, C, L) or (N, C, H, W) activation is needed)" % list((1,) + x.shape))
        keep = True
        if node.op_type == "ReduceMean":
            axes = ref._axes(a, [None] + [self.consts.get(i) for i in ins[1:]], 1)
            rank = dims + 2
            axes = sorted(v + rank if v < 0 else v for v in (axes or []))
            if axes != list(range(2, rank)):
                refuse(node, "attribute axes=%s (only over the spatial axes, a global average pool)" % axes)
            keep = bool(a.get("keepdims", 1))
        sp = list(x.shape[1:])
        if int(np.prod(sp)) > MAX_POOL_WINDOW:
            refuse(node, "a global average over %d positions (more than %d taps)" % (int(np.prod(sp)), MAX_POOL_WINDOW))
        self.layers.append(Layer("avgpool%dd" % dims, ident(node.name or node.output[0]), node, channels=x.shape[0],
                                 kernel=sp, strides=sp, spatial=sp))
        oshape = (x.shape[0],) + ((1,) * dims if keep else ())
        return Dyn(oshape, np.arange(x.shape[0]), len(self.layers) - 1)

    def pad(self, node, a, x, ins):
        mode = a.get("mode", "constant")
        if mode != "constant":
            refuse(node, "attribute mode=%s (zero padding only)" % mode)
        pads = [int(v) for v in self.const(node, ins[1], "pads")]
        if len(ins) > 2 and ins[2] and float(self.const(node, ins[2], "value").reshape(-1)[0]) != 0.0:
            refuse(node, "a non-zero constant_value")
        r = len(x.shape) + 1
        if any(pads[i] or pads[i + r] for i in (0, 1)) or any(p < 0 for p in pads):
            refuse(node, "padding of the batch or channel axis, or negative pads %s" % pads)
        if not x.is_channels_last():
            refuse(node, "input of shape %s" % list((1,) + x.shape))
        spatial = pads[2:r] + pads[r + 2:]  # begins, then ends, as a Conv's pads
        if not any(spatial):
            return x  # PyTorch writes a Pad of zeros before its average pools
        prev = x.pad or [0] * len(spatial)
        # The tape's tensor stays unpadded: the next Conv pads it (its zero leaves).
        return Dyn(x.shape, x.order, None, [prev[i] + spatial[i] for i in range(len(spatial))])

    # --- choosing ----------------------------------------------------------
    def params_layers(self):
        return [l for l in self.layers if l.kind in ("embedding", "linear", "conv1d", "conv2d", "gru", "layernorm")]

    def choose(self, train, weights):
        pl = self.params_layers()
        names = [l.name for l in pl]
        if train == "all":
            chosen = set(names)
        elif train == "none":
            chosen = set()
        elif train.startswith("last:"):
            try:
                n = int(train[5:])
            except ValueError:
                raise Refused("--train %s: last:N needs a number" % train)
            if n < 0 or n > len(pl):
                raise Refused("--train %s: the model has %d layers with parameters" % (train, len(pl)))
            chosen = set(names[len(names) - n:]) if n else set()
        else:
            chosen = set(v for v in train.split(",") if v)
            unknown = chosen - set(names)
            if unknown:
                raise Refused("--train: no layer named %s (layers: %s)" % (sorted(unknown)[0], ", ".join(names)))
        for l in pl:
            l.trainable = l.name in chosen
            if l.kind == "embedding" and l.trainable and l.feeds:
                refuse(l.feeds[0], "a trained embedding's rows read by %s (a trained table feeds a Gemm/MatMul or a "
                       "GRU; a frozen one feeds any operator: leave '%s' out of --train)" % (l.feeds[0].op_type, l.name))
        parts = weights.split(",")
        default = parts[0]
        if default not in FORMATS:
            raise Refused("--weights %s: one of %s" % (default, "|".join(FORMATS)))
        per = {}
        for p in parts[1:]:
            if "=" not in p:
                raise Refused("--weights: '%s' is not LAYER=FORMAT" % p)
            k, v = p.split("=", 1)
            if k not in names or v not in FORMATS:
                raise Refused("--weights: '%s' (layers: %s; formats %s)" % (p, ", ".join(names), "|".join(FORMATS)))
            per[k] = v
        for l in pl:
            l.fmt = per.get(l.name, default)
            if nparams(l) >= 2 ** 31:
                refuse(l.node, "%d parameters: past the library's 32-bit node indices" % nparams(l))
            for what, v in (("weight", l.W), ("bias", l.b)):
                if v is not None and not np.all(np.isfinite(v)):
                    refuse(l.node, "a %s that is NaN or infinite (after folding)" % what)
                if v is not None and np.any(np.abs(v) > float(np.finfo(np.float32).max)):
                    refuse(l.node, "a %s beyond the largest float" % what)


# --- quantization, as burtorch/frozen/weights.hpp documents it ---------------
def quantize(w, fmt):
    w = np.asarray(w, dtype=np.float64).reshape(-1)
    if fmt == "fp32":
        return w.astype(np.float32), None
    if fmt == "fp16":
        return w.astype(np.float16).view(np.uint16), None
    if fmt == "bf16":
        f = w.astype(np.float32).view(np.uint32).astype(np.uint64)
        rounded = (f + 0x7FFF + ((f >> 16) & 1)) >> 16
        return rounded.astype(np.uint16), None
    top = float(np.max(np.abs(w))) if w.size else 0.0
    s = np.float32(1.0)
    if top > 0.0:
        s = np.float32(top / 127.0)
        s = max(s, np.float32(2.0 ** -126))
        if float(s) * 127.0 > float(np.finfo(np.float32).max):
            s = np.nextafter(s, np.float32(0))
    q = np.clip(np.rint(w / float(s)), -127, 127).astype(np.int8)
    return q, float(s)


def dequantize(q, fmt, scale):
    if fmt == "fp32":
        return q.astype(np.float64)
    if fmt == "fp16":
        return q.view(np.float16).astype(np.float64)
    if fmt == "bf16":
        return (q.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return (np.float32(scale) * q.astype(np.float32)).astype(np.float64)


