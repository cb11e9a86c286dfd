# SPDX-License-Identifier: Apache-2.0
"""burtorch-import's writer: the translated model (burtorch_onnx_graph.py) as
one C++ header of the library's public layers."""

import os
import re

import numpy as np

from burtorch_onnx_graph import Refused, nparams, on_tape, quantize

# --- writing the header ----------------------------------------------------
def fmt_real(v, precision):
    if precision == "float":
        f = float(np.float32(v))
        s = repr(f) if np.isfinite(f) else None
        if s is None:
            raise Refused("a weight that is not finite in float")
        s = "%.9g" % f
        if "e" not in s and "." not in s:
            s += ".0"
        return s + "F"
    s = repr(float(v))
    if not np.isfinite(float(v)):
        raise Refused("a weight that is not finite")
    return s


def array_text(values, fmt_one, per_line=8):
    items = [fmt_one(v) for v in values]
    lines = []
    for i in range(0, len(items), per_line):
        lines.append("    " + ", ".join(items[i:i + per_line]) + ",")
    return "\n".join(lines)


class Writer:
    def __init__(self, imp, ns, precision):
        self.imp = imp
        self.ns = ns
        self.precision = precision
        self.real = precision
        self.out = []

    def w(self, s=""):
        self.out.append(s)

    def real_array(self, name, values):
        self.w("constexpr std::array<Real, %dU> %s = {" % (len(values), name))
        self.w(array_text(values, lambda v: fmt_real(v, self.precision)))
        self.w("};")

    def frozen_array(self, name, values, fmt):
        q, scale = quantize(values, fmt)
        if fmt == "fp32":
            self.w("constexpr std::array<float, %dU> %s = {" % (q.size, name))
            self.w(array_text(q, lambda v: fmt_real(v, "float")))
        elif fmt in ("fp16", "bf16"):
            self.w("constexpr std::array<std::uint16_t, %dU> %s = {" % (q.size, name))
            self.w(array_text(q, lambda v: "0x%04XU" % int(v), 12))
        else:
            self.w("constexpr std::array<std::int8_t, %dU> %s = {" % (q.size, name))
            self.w(array_text(q, lambda v: str(int(v)), 16))
        self.w("};")
        call = {"fp32": "frozen_f32(%s)", "fp16": "frozen_f16(%s)", "bf16": "frozen_bf16(%s)"}.get(fmt)
        if call is not None:
            return "bt::" + call % (name + ".data()")
        return "bt::frozen_i8(%s.data(), %sF)" % (name, "%.9g" % scale)

    def options(self, l):
        n = l.name
        if l.kind == "linear":
            self.w("constexpr nn::LinearOptions %s_options() noexcept {" % n)
            self.w("  nn::LinearOptions o{};")
            self.w("  o.in = %dU;" % l.in_)
            self.w("  o.out = %dU;" % l.out)
            self.w("  o.act = nn::Activation::%s;" % l.act)
            self.w("  o.bias = %s;" % ("true" if l.b is not None else "false"))
            self.w("  o.weight_init = nn::Init::zeros();")
            self.w("  o.bias_init = nn::Init::zeros();")
        elif l.kind == "conv1d":
            self.w("constexpr nn::Conv1dOptions %s_options() noexcept {" % n)
            self.w("  nn::Conv1dOptions o{};")
            self.w("  o.in_channels = %dU;" % l.cin)
            self.w("  o.out_channels = %dU;" % l.out)
            self.w("  o.kernel = %dU;" % l.kernel[0])
            self.w("  o.stride = %dU;" % l.strides[0])
            self.w("  o.padding = %dU;" % l.pads[0])
            self.w("  o.dilation = %dU;" % l.dil[0])
            self.w("  o.act = nn::Activation::%s;" % l.act)
            self.w("  o.bias = %s;" % ("true" if l.b is not None else "false"))
            self.w("  o.weight_init = nn::Init::zeros();")
            self.w("  o.bias_init = nn::Init::zeros();")
        elif l.kind == "conv2d":
            self.w("constexpr nn::Conv2dOptions %s_options() noexcept {" % n)
            self.w("  nn::Conv2dOptions o{};")
            self.w("  o.in_channels = %dU;" % l.cin)
            self.w("  o.out_channels = %dU;" % l.out)
            for key, vals in (("kernel", l.kernel), ("stride", l.strides), ("padding", l.pads), ("dilation", l.dil)):
                self.w("  o.%s_h = %dU;" % (key, vals[0]))
                self.w("  o.%s_w = %dU;" % (key, vals[1]))
            self.w("  o.act = nn::Activation::%s;" % l.act)
            self.w("  o.bias = %s;" % ("true" if l.b is not None else "false"))
            self.w("  o.weight_init = nn::Init::zeros();")
            self.w("  o.bias_init = nn::Init::zeros();")
        elif l.kind == "embedding":
            self.w("constexpr nn::EmbeddingOptions %s_options() noexcept {" % n)
            self.w("  nn::EmbeddingOptions o{};")
            self.w("  o.rows = %dU;" % l.in_)
            self.w("  o.dim = %dU;" % l.out)
            self.w("  o.init = nn::Init::zeros();")
        elif l.kind == "layernorm":
            self.w("constexpr nn::LayerNormOptions %s_options() noexcept {" % n)
            self.w("  nn::LayerNormOptions o{};")
            self.w("  o.width = %dU;" % l.in_)
            self.w("  o.eps = %s;" % repr(l.eps))
        elif l.kind == "gru":
            self.w("constexpr nn::GruOptions %s_options() noexcept {" % n)
            self.w("  nn::GruOptions o{};")
            self.w("  o.input = %dU;" % l.in_)
            self.w("  o.hidden = %dU;" % l.out)
            self.w("  o.bias = %s;" % ("true" if l.b is not None else "false"))
            self.w("  o.init = nn::Init::zeros();")
        else:
            return
        self.w("  return o;")
        self.w("}")

    def layer_type(self, l):
        if l.kind == "embedding":
            return "nn::Embedding<Real>" if l.trainable else None
        if l.kind == "gru":
            return "nn::Gru<Real>"
        if l.kind == "layernorm":
            return "nn::LayerNorm<Real>"
        if l.kind == "linear":
            return "nn::FrozenLinear<Real>" if not l.trainable else "nn::Linear<Real>"
        if l.kind in ("conv1d", "conv2d"):
            base = "Conv1d" if l.kind == "conv1d" else "Conv2d"
            return ("nn::Frozen%s<Real>" % base) if not l.trainable else ("nn::%s<Real>" % base)
        return None

    def pool_decl(self, l):
        kinds = {"maxpool1d": "MaxPool1d", "avgpool1d": "AvgPool1d", "maxpool2d": "MaxPool2d", "avgpool2d": "AvgPool2d"}
        t = "nn::%s<Real>" % kinds[l.kind]
        if l.kind.endswith("1d"):
            init = "{{%dU, %dU, %dU}}" % (l.channels, l.kernel[0], l.strides[0])
        else:
            init = "{{%dU, %dU, %dU, %dU, %dU}}" % (l.channels, l.kernel[0], l.kernel[1], l.strides[0], l.strides[1])
        return t, init

    @staticmethod
    def extent(l):
        """The C++ argument a layer's sizing and forward take for its input."""
        if l.kind.endswith("1d"):
            return "%dU" % l.spatial[0]
        if l.kind.endswith("2d"):
            return "nn::Size2d{%dU, %dU}" % (l.spatial[0], l.spatial[1])
        return None

    def reads_rows(self, l):
        """The trained embedding whose rows layer l reads in place (None: it
        reads nodes; a frozen table's rows are recorded as leaves)."""
        emb = self.imp.layers[l.rows] if l.rows is not None else None
        return emb if (emb is not None and emb.trainable) else None

    def sizing(self, l):
        n = l.name
        if l.kind == "embedding":  # a trained table is read in place; a frozen one's rows become leaves
            return ("0U", "0U") if l.trainable else ("%dU" % (l.tokens * l.out), "0U")
        emb = self.reads_rows(l)
        if l.kind == "linear" and emb is not None:  # a view list of one run per token
            slots = ("nn::Linear<Real>::slots(%s_options())" % n) if l.trainable else "nn::FrozenLinear<Real>::slots()"
            return (self.sizing_nodes_linear(l), "%s + %dU" % (slots, 1 + 2 * emb.tokens))
        if l.kind == "layernorm":
            return ("nn::LayerNorm<Real>::nodes(%s_options())" % n, "nn::LayerNorm<Real>::slots(%s_options())" % n)
        if l.kind == "gru":  # the zero initial state's H leaves, then T steps
            return ("%dU + nn::Gru<Real>::nodes(%s_options(), %dU)" % (l.out, n, l.steps),
                    "nn::Gru<Real>::slots(%s_options(), %dU)" % (n, l.steps))
        if l.kind == "linear":
            if l.trainable:
                return (self.sizing_nodes_linear(l), "nn::Linear<Real>::view_slots(%s_options())" % n)
            return (self.sizing_nodes_linear(l), "nn::FrozenLinear<Real>::view_slots()")
        if l.kind in ("conv1d", "conv2d"):
            t = self.layer_type(l)
            return ("%s::nodes(%s_options(), %s)" % (t, n, self.extent(l)), "%s::slots(%s_options(), %s)" % (t, n, self.extent(l)))
        if l.kind == "act":
            return ("%dU" % l.n, "0U")
        if l.kind == "leaky":
            return ("%dU" % l.n, "%dU * nn::constant_slots<Real>()" % l.n)
        if l.kind == "gelu":
            return ("%dU" % l.n, "0U")
        t, init = self.pool_decl(l)
        return ("%s::nodes(%s.options, %s)" % (t, "k_" + n, self.extent(l)), "%s::slots(%s.options, %s)" % (t, "k_" + n, self.extent(l)))

    def sizing_nodes_linear(self, l):
        if l.trainable:
            return "nn::Linear<Real>::nodes(%s_options())" % l.name
        return "nn::FrozenLinear<Real>::nodes(%dU, nn::Activation::%s)" % (l.out, l.act)

    def write(self, source):
        imp = self.imp
        ns = self.ns
        real = "float" if self.precision == "float" else "double"
        guard = ("BURTORCH_IMPORTED_" + re.sub(r"[^0-9A-Za-z]", "_", ns).upper() + "_HPP")
        pl = imp.params_layers()
        trainable = [l for l in pl if l.trainable]
        n_in = int(np.prod(imp.input_shape))
        n_out = len(imp.output_dyn.order)
        self.w("// SPDX-License-Identifier: Apache-2.0")
        self.w("// Generated by burtorch-import from %s; do not edit." % os.path.basename(source))
        self.w("// Input '%s' (%s per sample, ONNX layout), output '%s' (%d values%s)." % (
            imp.input_name, "x".join(str(v) for v in imp.input_shape), imp.output_name, n_out,
            (", " + imp.softmax + " of the logits") if imp.softmax else ""))
        self.w("// Layers: " + ", ".join("%s (%s%s)" % (l.name, l.kind, ", trained" if l.trainable else (", frozen " + l.fmt)) for l in pl))
        self.w("#ifndef " + guard)
        self.w("#define " + guard)
        self.w()
        self.w("#include <burtorch/burtorch.hpp>")
        self.w("#include <burtorch/nn/nn.hpp>")
        self.w()
        self.w("#include <array>")
        if any(l.kind == "gelu" for l in imp.layers):
            self.w("#include <cmath>")
        self.w("#include <cstddef>")
        self.w("#include <cstdint>")
        self.w()
        self.w("namespace %s {" % ns)
        self.w()
        self.w("namespace bt = burtorch;")
        self.w("namespace nn = burtorch::nn;")
        self.w("using Real = %s;" % real)
        self.w()
        if imp.tokens:
            emb0 = [l for l in imp.layers if l.kind == "embedding"][0]
            self.w("/// The input is token ids, kInputSize per sample, each below kTokens (the")
            self.w("/// embedding table's rows); the output kOutputSize values per sample.")
            self.w("using Input = bt::Index;")
            self.w("constexpr bt::Index kTokens = %dU;" % emb0.in_)
        else:
            self.w("/// Values per sample of the input (ONNX layout) and of the output.")
            self.w("using Input = Real;")
        self.w("constexpr bt::Index kInputSize = %dU;" % n_in)
        self.w("constexpr bt::Index kOutputSize = %dU;" % n_out)
        self.w("/// True if the graph ends in %s: outputs() applies it to the logits." % (imp.softmax or "a softmax"))
        self.w("constexpr bool kSoftmaxOutput = %s;" % ("true" if imp.softmax == "Softmax" else "false"))
        self.w("constexpr bool kLogSoftmaxOutput = %s;" % ("true" if imp.softmax == "LogSoftmax" else "false"))
        self.w()
        # the input and output orders: node k of the tape holds ONNX index order[k]
        in_order = imp.dyns[imp.input_name].order
        out_order = imp.output_dyn.order
        self.in_identity = bool(np.array_equal(in_order, np.arange(n_in)))
        self.out_identity = bool(np.array_equal(out_order, np.arange(n_out)))
        idx_t = "std::uint16_t" if max(n_in, n_out) < 65536 else "std::uint32_t"
        if not self.in_identity:
            self.w("/// Input node k holds input[kInputOrder[k]] (channels-last from ONNX's channels-first).")
            self.w("constexpr std::array<%s, kInputSize> kInputOrder = {" % idx_t)
            self.w(array_text(in_order, lambda v: "%dU" % v, 16))
            self.w("};")
        if not self.out_identity:
            self.w("/// Output node k is ONNX output index kOutputOrder[k].")
            self.w("constexpr std::array<%s, kOutputSize> kOutputOrder = {" % idx_t)
            self.w(array_text(out_order, lambda v: "%dU" % v, 16))
            self.w("};")
        self.w()
        if any(l.kind == "gelu" for l in imp.layers):
            self.w("/// GELU as torch.nn.GELU() computes it, 0.5 x (1 + erf(x / sqrt 2)): an op of")
            self.w("/// this model's own (burtorch/ext/extension.hpp), family id kOpFamily; a")
            self.w("/// program's own op families take the other ids for programs.")
            self.w("constexpr std::uint8_t kOpFamily = bt::family::kFirstUser + 2U;")
            self.w("struct GeluErf {")
            self.w("  static constexpr bt::OpKind kKind = bt::OpKind::kUnary;")
            self.w("  static constexpr const char* kName = \"gelu_erf\";")
            self.w("  template <class T>")
            self.w("  static T forward(T x) noexcept {")
            self.w("    return (T(0.5) * x) * (T(1) + std::erf(x * T(0.70710678118654752)));")
            self.w("  }")
            self.w("  template <class T>")
            self.w("  static void backward(T g, T x, T /*out*/, T& dx) noexcept {")
            self.w("    const T cdf = T(0.5) * (T(1) + std::erf(x * T(0.70710678118654752)));")
            self.w("    const T pdf = T(0.39894228040143268) * std::exp(T(-0.5) * x * x);  // 1 / sqrt(2 pi)")
            self.w("    dx += g * (cdf + (x * pdf));")
            self.w("  }")
            self.w("};")
            self.w("using Ops = bt::OpFamily<kOpFamily, GeluErf>;")
            self.w("inline bt::Value<Real> gelu_erf(bt::Value<Real> x) noexcept { return Ops::unary<GeluErf>(x); }")
            self.w()
        # weights and options
        frozen_desc = {}
        for l in imp.layers:
            if l.kind in ("embedding", "linear", "conv1d", "conv2d", "gru", "layernorm"):
                self.w("// %s: %s from '%s'%s, %s." % (l.name, imp_desc(l), l.onnx_weight,
                                                    (" and '%s'" % l.onnx_bias) if l.onnx_bias else "",
                                                    "trained" if l.trainable else (
                                                        "on the tape, not trained" if l.kind in ("gru", "layernorm") else
                                                        "frozen in flash, " + l.fmt)))
                self.options(l)
                W = l.W.reshape(l.out, -1) if l.kind not in ("gru", "layernorm", "embedding") else l.W
                if on_tape(l):
                    vals = np.concatenate([W.reshape(-1), l.b]) if l.b is not None else W.reshape(-1)
                    self.real_array("k_%s_init" % l.name, vals)
                else:
                    wcall = self.frozen_array("k_%s_weight" % l.name, W, l.fmt)
                    bcall = None
                    if l.b is not None:
                        self.w("constexpr std::array<float, %dU> k_%s_bias = {" % (l.out, l.name))
                        self.w(array_text(l.b, lambda v: fmt_real(v, "float")))
                        self.w("};")
                        bcall = "bt::frozen_f32(k_%s_bias.data())" % l.name
                    frozen_desc[l.name] = (wcall, bcall, W.shape)
                self.w()
        # the model
        self.w("/// The imported model: create() puts the trainable layers' parameters on the")
        self.w("/// tape (their ONNX values), forward() records one sample.")
        self.w("struct Model {")
        for l in imp.layers:
            t = self.layer_type(l)
            if t is None:
                if l.kind == "embedding":
                    self.w("  static constexpr bt::FrozenArray %s = %s;" % (l.name, frozen_desc[l.name][0]))
                if l.kind.startswith(("max", "avg")):
                    t, init = self.pool_decl(l)
                    self.w("  static constexpr %s k_%s%s;" % (t, l.name, init))
                continue
            if on_tape(l):
                self.w("  %s %s;" % (t, l.name))
            else:
                wcall, bcall, shape = frozen_desc[l.name]
                bias = "{%s, %dU}" % (bcall, l.out) if bcall else "{}"
                if l.kind == "linear":
                    self.w("  static constexpr %s %s{{%s, %dU, %dU}, %s, nn::Activation::%s};" % (
                        t, l.name, wcall, shape[0], shape[1], bias, l.act))
                else:
                    self.w("  static constexpr %s %s{{%s, %dU, %dU}, %s, %s_options()};" % (
                        t, l.name, wcall, shape[0], shape[1], bias, l.name))
        self.w()
        sizes = [self.sizing(l) for l in imp.layers]
        self.w("  /// Every parameter of the model's layers, trained or frozen.")
        self.w("  static constexpr std::size_t kModelParameters = %dU;" % sum(nparams(l) for l in pl))
        tape_layers = [l for l in pl if on_tape(l) and not l.trainable] + trainable  # creation order
        self.w("  /// Scalars on the tape (its parameter region): the trained ones, and a")
        self.w("  /// GRU's when it is not trained (there is no frozen GRU).")
        self.w("  static constexpr std::size_t kParameters = %s;" % (
            " + ".join("%s::parameters(%s_options())" % (self.layer_type(l), l.name) for l in tape_layers) or "0U"))
        self.w("  /// Trained scalars: params().count.")
        self.w("  static constexpr std::size_t kTrainedParameters = %s;" % (
            " + ".join("%s::parameters(%s_options())" % (self.layer_type(l), l.name) for l in trainable) or "0U"))
        self.w("  /// Nodes and slots one sample's forward() records (the input leaves included).")
        self.w("  static constexpr std::size_t kSampleNodes = %s%s;" % ("" if imp.tokens else "kInputSize + ",
                                                                      " + ".join(s[0] for s in sizes) or "0U"))
        self.w("  static constexpr std::size_t kSampleSlots = %s;" % (" + ".join(s[1] for s in sizes) or "0U"))
        self.w("  /// Nodes of the losses over the output.")
        self.w("  static constexpr std::size_t kCrossEntropyNodes = nn::kCrossEntropyNodes;")
        self.w("  static constexpr std::size_t kMseNodes = kOutputSize + 1U;")
        self.w("  /// The memory plan of training with `optimizer` and one of the losses.")
        self.w("  static constexpr nn::MemoryPlan plan(nn::OptimizerKind optimizer, bool mse_loss = false) noexcept {")
        self.w("    return nn::make_plan<Real>(kParameters, kSampleNodes + (mse_loss ? kMseNodes : kCrossEntropyNodes),")
        self.w("                               kSampleSlots, optimizer);")
        self.w("  }")
        self.w()
        self.w("  /// Puts the trainable parameters on the tape, in layer order (false: the")
        self.w("  /// tape's status says why).")
        self.w("  bool create(bt::Tape<Real>& tape) noexcept {")
        if any(l.kind.startswith("conv") or l.kind in ("gru", "layernorm", "embedding") for l in tape_layers):
            self.w("    nn::Rng rng(1U);  // zeros: no draw is used")
        self.w("    bool ok = true;")
        for l in tape_layers:
            if l.kind == "layernorm":
                self.w("    ok = ok && %s.create(tape, %s_options(), rng);" % (l.name, l.name))
                self.w("    if (ok) {  // the ONNX scale and bias over the ones and zeros")
                self.w("      Real* const v = tape.values();")
                self.w("      for (bt::Index k = 0U; k < %dU; ++k) {" % l.in_)
                self.w("        v[%s.gamma + k] = k_%s_init[k];" % (l.name, l.name))
                self.w("        v[%s.beta + k] = k_%s_init[%dU + k];" % (l.name, l.name, l.in_))
                self.w("      }")
                self.w("    }")
            elif l.kind == "gru":
                self.w("    ok = ok && %s.create(tape, %s_options(), rng);" % (l.name, l.name))
                self.w("    if (ok) {  // the ONNX values over the zeros (rows r, z, n)")
                self.w("      Real* const v = tape.values();")
                parts = [("weight_ih", 3 * l.out * l.in_), ("weight_hh", 3 * l.out * l.out)]
                if l.b is not None:
                    parts += [("bias_ih", 3 * l.out), ("bias_hh", 3 * l.out)]
                pos = 0
                for member, count in parts:
                    self.w("      for (bt::Index k = 0U; k < %dU; ++k) {" % count)
                    self.w("        v[%s.%s + k] = k_%s_init[%dU + k];" % (l.name, member, l.name, pos))
                    self.w("      }")
                    pos += count
                self.w("    }")
            elif l.kind == "linear":
                self.w("    ok = ok && %s.create(tape, %s_options(), k_%s_init.data());" % (l.name, l.name, l.name))
            elif l.kind == "embedding":
                self.w("    ok = ok && %s.create(tape, %s_options(), rng);" % (l.name, l.name))
                self.w("    if (ok) {  // the ONNX table over the zeros, row after row")
                self.w("      Real* const v = tape.values();")
                self.w("      for (bt::Index k = 0U; k < %dU; ++k) {" % l.W.size)
                self.w("        v[%s.table + k] = k_%s_init[k];" % (l.name, l.name))
                self.w("      }")
                self.w("    }")
            else:
                self.w("    ok = ok && %s.create(tape, %s_options(), rng);" % (l.name, l.name))
                nw = l.W.size
                self.w("    if (ok) {  // the ONNX values over the zeros")
                self.w("      Real* const v = tape.values();")
                self.w("      for (bt::Index k = 0U; k < %dU; ++k) {" % nw)
                self.w("        v[%s.weight + k] = k_%s_init[k];" % (l.name, l.name))
                self.w("      }")
                if l.b is not None:
                    self.w("      for (bt::Index k = 0U; k < %dU; ++k) {" % l.out)
                    self.w("        v[%s.bias + k] = k_%s_init[%dU + k];" % (l.name, l.name, nw))
                    self.w("      }")
                self.w("    }")
        self.w("    return ok && (tape.status() == bt::Status::kOk);")
        self.w("  }")
        self.w()
        self.w("  /// The trainable parameters on the tape (kNoView if none or before create()).")
        self.w("  bt::View params() const noexcept {")
        if trainable:
            self.w("    const bt::View first = %s.params();" % trainable[0].name)
            self.w("    return (first.count != 0U) ? bt::View{first.first, static_cast<bt::Index>(kTrainedParameters)} : bt::kNoView;")
        else:
            self.w("    return bt::kNoView;")
        self.w("  }")
        self.w()
        self.w("  /// Records one sample (input[0 .. kInputSize), ONNX layout); returns the")
        self.w("  /// last layer's kOutputSize nodes (the logits, before a final softmax).")
        if imp.tokens:
            self.w("  /// A token id >= kTokens (or a null input) is kInvalidArgument, nothing recorded.")
        self.w("  bt::View forward(bt::Tape<Real>& tape, const Input* input) const noexcept {")
        if imp.tokens:
            self.w("    bool valid = (input != nullptr);")
            self.w("    for (bt::Index k = 0U; valid && (k < kInputSize); ++k) {")
            self.w("      valid = (input[k] < kTokens);")
            self.w("    }")
            self.w("    if (!valid) {")
        else:
            self.w("    if (input == nullptr) {")
        self.w("      static_cast<void>(tape.report(bt::Status::kInvalidArgument));")
        self.w("      return bt::kNoView;")
        self.w("    }")
        if imp.tokens:
            self.w("    bt::View h = bt::kNoView;")
        else:
            src = "input[k]" if self.in_identity else "input[kInputOrder[k]]"
            self.w("    bt::View h = bt::record_view(tape, kInputSize, [&](bt::Index k) noexcept { return tape.leaf(%s); });" % src)
        for l in imp.layers:
            n = l.name
            emb = self.reads_rows(l)
            if l.kind == "embedding":
                if l.trainable:
                    self.w("    // %s: its rows are read in place by the next layer" % n)
                else:
                    self.w("    h = bt::record_view(tape, %dU, [&](bt::Index k) noexcept {  // %s's rows as leaves" % (
                        l.tokens * l.out, n))
                    self.w("      return tape.leaf(static_cast<Real>(bt::frozen_at(%s, (input[k / %dU] * %dU) + (k %% %dU))));" % (
                        n, l.out, l.out, l.out))
                    self.w("    });")
            elif l.kind == "linear" and emb is not None:
                self.w("    {  // %s reads %d rows of %s in place" % (n, emb.tokens, emb.name))
                self.w("      std::array<bt::View, %dU> rows{};" % emb.tokens)
                self.w("      for (bt::Index q = 0U; q < %dU; ++q) {" % emb.tokens)
                self.w("        rows[q] = %s.row(input[q]);" % emb.name)
                self.w("      }")
                self.w("      const bt::ViewList x = bt::view_list(tape, rows.data(), rows.size());")
                self.w("      h = %s.forward<nn::Activation::%s>(tape, x);" % (n, l.act))
                self.w("    }")
            elif l.kind == "gru" and emb is not None:
                self.w("    {  // %s: %d steps over the rows of %s from a zero state; h is the last state" % (
                    n, l.steps, emb.name))
                self.w("      h = bt::record_view(tape, %dU, [&](bt::Index) noexcept { return tape.leaf(Real(0)); });" % l.out)
                self.w("      for (bt::Index t = 0U; t < %dU; ++t) {" % l.steps)
                self.w("        h = %s.step(tape, %s.row(input[t]), h);" % (n, emb.name))
                self.w("      }")
                self.w("    }")
            elif l.kind == "linear":
                # The activation at compile time: only its code is linked.
                self.w("    h = %s.forward<nn::Activation::%s>(tape, h);" % (n, l.act))
            elif l.kind in ("conv1d", "conv2d"):
                self.w("    h = %s.forward<nn::Activation::%s>(tape, h, %s);" % (n, l.act, self.extent(l)))
            elif l.kind == "layernorm":
                self.w("    h = %s.forward(tape, h);" % n)
            elif l.kind == "gru":
                self.w("    {  // %s: %d steps of %d inputs from a zero state; h is the last state" % (n, l.steps, l.in_))
                self.w("      const bt::View steps = h;")
                self.w("      h = bt::record_view(tape, %dU, [&](bt::Index) noexcept { return tape.leaf(Real(0)); });" % l.out)
                self.w("      for (bt::Index t = 0U; t < %dU; ++t) {" % l.steps)
                self.w("        h = %s.step(tape, bt::View{steps.first + (t * %dU), %dU}, h);" % (n, l.in_, l.in_))
                self.w("      }")
                self.w("    }")
            elif l.kind == "act":
                fn = {"kRelu": "relu", "kTanh": "tanh", "kSigmoid": "sigmoid"}[l.act]
                self.w("    h = bt::record_view(tape, h.count, [&](bt::Index k) noexcept { return bt::%s(nn::node(tape, h.first + k)); });" % fn)
            elif l.kind == "gelu":
                self.w("    h = bt::record_view(tape, h.count, [&](bt::Index k) noexcept { return gelu_erf(nn::node(tape, h.first + k)); });")
            elif l.kind == "leaky":
                self.w("    h = bt::record_view(tape, h.count, [&](bt::Index k) noexcept {")
                self.w("      return bt::leaky_relu(nn::node(tape, h.first + k), %s);" % fmt_real(l.slope, self.precision))
                self.w("    });")
            else:
                self.w("    h = k_%s.forward(tape, h, %s);" % (n, self.extent(l)))
        self.w("    return h;")
        self.w("  }")
        self.w()
        self.w("  /// Cross-entropy of one sample's logits with class `target` (as")
        self.w("  /// torch.nn.functional.cross_entropy on the logits).")
        self.w("  bt::Value<Real> loss(bt::Tape<Real>& tape, const Input* input, bt::Index target) const noexcept {")
        self.w("    return nn::cross_entropy(tape, forward(tape, input), target);")
        self.w("  }")
        self.w("  /// Mean squared error of one sample's outputs with target[0 .. kOutputSize) (ONNX order).")
        self.w("  bt::Value<Real> loss(bt::Tape<Real>& tape, const Input* input, const Real* target) const noexcept {")
        if self.out_identity:
            self.w("    return nn::mse(tape, forward(tape, input), target);")
        else:
            self.w("    if (target == nullptr) {")
            self.w("      static_cast<void>(tape.report(bt::Status::kInvalidArgument));")
            self.w("      return bt::Value<Real>(&tape, bt::kNoIndex);")
            self.w("    }")
            self.w("    std::array<Real, kOutputSize> ordered{};")
            self.w("    for (bt::Index k = 0U; k < kOutputSize; ++k) {")
            self.w("      ordered[k] = target[kOutputOrder[k]];")
            self.w("    }")
            self.w("    return nn::mse(tape, forward(tape, input), ordered.data());")
        self.w("  }")
        self.w()
        self.w("  /// The ONNX output of a forward() result: out[0 .. kOutputSize) in ONNX")
        self.w("  /// order, the final softmax applied. False if `y` is not a forward() result.")
        self.w("  static bool outputs(const bt::Tape<Real>& tape, bt::View y, Real* out) noexcept {")
        self.w("    if ((out == nullptr) || (y.count != kOutputSize) || (y.first == bt::kNoIndex)) {")
        self.w("      return false;")
        self.w("    }")
        dst = "out[k]" if self.out_identity else "out[kOutputOrder[k]]"
        self.w("    for (bt::Index k = 0U; k < kOutputSize; ++k) {")
        self.w("      %s = tape.value(y.first + k);" % dst)
        self.w("    }")
        if imp.softmax:
            self.w("    Real top = out[0];")
            self.w("    for (bt::Index k = 1U; k < kOutputSize; ++k) {")
            self.w("      top = (out[k] > top) ? out[k] : top;")
            self.w("    }")
            self.w("    Real sum = Real(0);")
            self.w("    for (bt::Index k = 0U; k < kOutputSize; ++k) {")
            self.w("      out[k] = out[k] - top;  // shifted: the largest is 0")
            self.w("      sum += bt::ScalarOps<Real>::exp(out[k]);")
            self.w("    }")
            self.w("    const Real log_sum = bt::ScalarOps<Real>::log(sum);")
            self.w("    for (bt::Index k = 0U; k < kOutputSize; ++k) {")
            if imp.softmax == "Softmax":
                self.w("      out[k] = bt::ScalarOps<Real>::exp(out[k]) / sum;")
            else:
                self.w("      out[k] = out[k] - log_sum;")
            self.w("    }")
        self.w("    return true;")
        self.w("  }")
        self.w("};")
        self.w()
        self.w("}  // namespace %s" % ns)
        self.w()
        self.w("#endif  // " + guard)
        return "\n".join(self.out) + "\n"


def imp_desc(l):
    if l.kind == "layernorm":
        return "LayerNorm over %d features" % l.in_
    if l.kind == "embedding":
        return "Embedding of %d rows of %d, %d tokens per sample" % (l.in_, l.out, l.tokens)
    if l.kind == "gru":
        return "GRU %d -> %d over %d steps" % (l.in_, l.out, l.steps)
    if l.kind == "linear":
        return "Linear %d -> %d" % (l.in_, l.out)
    return "%s %d -> %d channels, kernel %s" % ("Conv1d" if l.kind == "conv1d" else "Conv2d", l.cin, l.out, "x".join(map(str, l.kernel)))


