// SPDX-License-Identifier: Apache-2.0
// The emitter of compiled training steps (burtorch/compile/emit.hpp), for
// float and double tapes: checks the recording, then writes the header or
// the source through the caller's sink, node by node (no heap, no stdio).
#include "burtorch/compile/emit.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "burtorch/core/detail/step.hpp"
#include "burtorch/core/op.hpp"
#include "burtorch/core/op_wide.hpp"
#include "burtorch/core/record.hpp"
#include "burtorch/ext/functions.hpp"
#include "burtorch/ext/fused.hpp"

namespace burtorch {
namespace compile {
namespace {

// The enumerators of the core ops, in code order (generated code names them).
constexpr const char* kOpNames[] = {
    "kLeaf",      "kInput",     "kAdd",         "kSub",         "kMul",       "kDiv",       "kMean2",
    "kAddSquares2", "kMeanSquares2", "kNegMean2", "kNeg",       "kAddConst",  "kConstSub",  "kConstDiv",
    "kRelu",      "kTanh",      "kExp",         "kLog",         "kNegLog",    "kSigmoid",   "kInv",
    "kSqr",       "kPow3",      "kSqrt",        "kInvSqrt",     "kMulConst",  "kDivConst",  "kSumR",
    "kSumL",      "kSubR",      "kSubL",        "kProdR",       "kProdL",     "kMeanR",     "kMeanL",
    "kSumSqR",    "kSumSqL",    "kMeanSqR",     "kMeanSqL",     "kNegMeanR",  "kNegMeanL",  "kVarR",
    "kVarL",      "kVarBiasedR", "kVarBiasedL", "kDotRR",       "kDotRL",     "kDotLL",     "kDotRV",
    "kLogSumExpR", "kLogSumExpL", "kMatRow",    "kScaleShift"};
static_assert(sizeof(kOpNames) / sizeof(kOpNames[0]) == static_cast<std::size_t>(Op::kCount),
              "a name for every core op");

// Text through the sink; the first error stays and stops the writing.
class Writer {
 public:
  explicit Writer(ByteSink sink) noexcept : sink_(sink) {}
  Status status() const noexcept { return status_; }
  Writer& put(const char* text) noexcept {
    if (status_ == Status::kOk) {
      status_ = write_text(sink_, text);
    }
    return *this;
  }
  Writer& num(std::uint64_t value) noexcept {
    char digits[24];
    const std::size_t n = format_unsigned(value, digits, sizeof(digits));
    if (status_ == Status::kOk) {
      status_ = write_bytes(sink_, digits, n);
    }
    return *this;
  }
  // An Index literal of the generated code.
  Writer& index(Index value) noexcept { return num(value).put("U"); }
  Writer& hex(std::uint64_t value) noexcept {
    char digits[20];
    std::size_t n = 0U;
    digits[n++] = '0';
    digits[n++] = 'x';
    for (int shift = 60; shift >= 0; shift -= 4) {
      const auto nibble = static_cast<unsigned>((value >> static_cast<unsigned>(shift)) & 0xFU);
      if ((nibble != 0U) || (n > 2U) || (shift == 0)) {
        digits[n++] = "0123456789abcdef"[nibble];
      }
    }
    if (status_ == Status::kOk) {
      status_ = write_bytes(sink_, digits, n);
    }
    return *this;
  }

 private:
  ByteSink sink_;
  Status status_ = Status::kOk;
};

// How the step treats a node after the mark.
enum class Kind : std::uint8_t { kInputNode, kConstant, kNode, kTarget, kClass };
struct Node {
  Kind kind;
  Op op;
  Index a;
  Index b;  // kTarget: the target's index; kClass: the logits' first node
};
// A run of alike nodes: node i0 + k has operands a + k * da, b + k * db.
struct Run {
  Index first;
  Index count;
  Node node;
  Index da;
  Index db;
};

bool in_view(View v, Index i) noexcept { return (v.count != 0U) && (i >= v.first) && ((i - v.first) < v.count); }

bool is_source(Op k) noexcept { return (k == Op::kLeaf) || (k == Op::kInput); }

bool identifier(const char* name) noexcept {
  bool ok = (name != nullptr) && (name[0] != '\0');
  for (std::size_t i = 0U; ok && (name[i] != '\0'); ++i) {
    const char c = name[i];
    const bool letter = ((c >= 'a') && (c <= 'z')) || ((c >= 'A') && (c <= 'Z')) || (c == '_');
    const bool digit = (c >= '0') && (c <= '9');
    ok = (i < 64U) && (letter || (digit && (i != 0U)));
  }
  return ok;
}

template <class T>
class Emitter {
 public:
  using R = Recorder<T>;
  Emitter(const Tape<T>& tape, Mark from, Value<T> root, const StepSpec& spec) noexcept
      : tape_(tape), from_(from), root_(root.index()), spec_(spec), end_(R::size(tape)) {
    refusal_ = check(root);
  }
  const Refusal& refusal() const noexcept { return refusal_; }

  Node node(Index i) const noexcept {
    const Op k = R::op(tape_, i);
    const Operands o = R::operands(tape_, i);
    Node n{Kind::kNode, k, o.a, o.b};
    if (in_view(spec_.inputs, i)) {
      n.kind = Kind::kInputNode;
    } else if (is_source(k)) {
      n.kind = Kind::kConstant;
    } else if (in_view(spec_.targets, i)) {
      n.kind = Kind::kTarget;
      n.b = i - spec_.targets.first;
    } else if (i == spec_.class_loss) {
      n.kind = Kind::kClass;
      n.b = R::operands(tape_, o.a).a;
    } else {
      // an interior node as recorded
    }
    return n;
  }

  // The run of alike nodes from i (at most up to `limit`); one node if
  // shorter than spec.min_run.
  Run run_at(Index i, Index limit) const noexcept {
    Run r{i, 1U, node(i), 0U, 0U};
    const bool loopable = (r.node.kind == Kind::kNode) || (r.node.kind == Kind::kTarget);
    if (!loopable || (spec_.min_run < 2U) || ((i + 1U) >= limit)) {
      return r;
    }
    const Node next = node(i + 1U);
    const Index da = next.a - r.node.a;
    const Index db = next.b - r.node.b;
    if ((next.kind != r.node.kind) || (next.op != r.node.op) || (da > 1U) || (db > 1U)) {
      return r;
    }
    Index n = 2U;
    while ((i + n) < limit) {
      const Node m = node(i + n);
      if ((m.kind != r.node.kind) || (m.op != r.node.op) || (m.a != (r.node.a + (n * da))) ||
          (m.b != (r.node.b + (n * db)))) {
        break;
      }
      ++n;
    }
    if (n >= spec_.min_run) {
      r.count = n;
      r.da = da;
      r.db = db;
    }
    return r;
  }

  std::uint32_t digest() const noexcept {
    std::uint32_t h = 2166136261U;
    const auto mix = [&h](std::uint64_t word) noexcept {
      for (unsigned k = 0U; k < 8U; ++k) {
        h = (h ^ static_cast<std::uint32_t>((word >> (8U * k)) & 0xFFU)) * 16777619U;
      }
    };
    mix(from_.nodes);
    mix(end_);
    mix(root_);
    mix(R::slots_used(tape_));
    for (Index i = from_.nodes; i < end_; ++i) {
      const Node n = node(i);
      mix((static_cast<std::uint64_t>(n.kind) << 8U) | static_cast<std::uint64_t>(n.op));
      mix(n.a);
      mix((n.kind == Kind::kConstant) ? bits(tape_.value(i)) : n.b);
    }
    const Index* const slots = R::slots(tape_);
    for (Index k = 0U; k < R::slots_used(tape_); ++k) {
      mix(slots[k]);
    }
    mix(spec_.params.first);
    mix(spec_.params.count);
    mix(spec_.inputs.count);
    mix(spec_.targets.count);
    return h;
  }

  Status header(Writer& w) const noexcept {
    w.put("// SPDX-License-Identifier: Apache-2.0\n");
    w.put("// Generated by burtorch::compile::emit_step: a recorded training step as C++.\n");
    w.put("// Do not edit: regenerate it from the model's code.\n");
    w.put("#ifndef BURTORCH_COMPILED_").put(spec_.name).put("_HPP\n");
    w.put("#define BURTORCH_COMPILED_").put(spec_.name).put("_HPP\n\n");
    w.put("#include <cstdint>\n\n#include <burtorch/compile/step.hpp>\n\n");
    w.put("namespace ").put(spec_.name).put(" {\n\n");
    w.put("using Scalar = ").put(std::is_same<T, float>::value ? "float" : "double").put(";\n");
    const View params = (spec_.params.count != 0U) ? spec_.params : View{0U, 0U};
    const View inputs = (spec_.inputs.count != 0U) ? spec_.inputs : View{0U, 0U};
    constant(w, "kNodes", end_, "values v[] and gradients g[] (indexed as the tape's nodes)");
    constant(w, "kFirst", from_.nodes, "the sample's first node (the mark)");
    constant(w, "kLoss", root_, "the loss: v[kLoss] after step()");
    constant(w, "kParamFirst", params.first, "the trainable parameters: v[kParamFirst, + kParams)");
    constant(w, "kParams", params.count, "");
    constant(w, "kInputFirst", inputs.first, "the inputs x[0, kInputs) go to v[kInputFirst, + kInputs)");
    constant(w, "kInputs", inputs.count, "");
    constant(w, "kTargets", spec_.targets.count, "regression targets y[0, kTargets)");
    constant(w, "kClasses", classes(), "cross-entropy: label < kClasses (0: no label)");
    w.put("constexpr std::uint32_t kDigest = ").hex(digest()).put("U;  // compile::structure_digest\n\n");
    w.put("/// Forward and backward of one sample; the parameters' gradients accumulate in g.\n");
    w.put("/// kInvalidArgument (nothing computed) for a null x or y that is read, or a label >= kClasses.\n");
    w.put("burtorch::Status step(Scalar* v, Scalar* g, const Scalar* x, const Scalar* y, burtorch::Index label) "
          "noexcept;\n");
    w.put("/// SGD: v -= lr * (g * scale) over the parameters, then their gradients cleared.\n");
    w.put("void sgd(Scalar* v, Scalar* g, Scalar lr, Scalar scale) noexcept;\n\n");
    w.put("}  // namespace ").put(spec_.name).put("\n\n#endif\n");
    return w.status();
  }

  Status source(Writer& w) const noexcept {
    w.put("// SPDX-License-Identifier: Apache-2.0\n");
    w.put("// Generated by burtorch::compile::emit_step: a recorded training step as C++.\n");
    w.put("// Do not edit: regenerate it from the model's code.\n");
    w.put("#include \"");
    if (spec_.header != nullptr) {
      w.put(spec_.header);
    } else {
      w.put(spec_.name).put(".hpp");
    }
    w.put("\"\n\nnamespace ").put(spec_.name).put(" {\n\nnamespace {\n");
    w.put("namespace rt = burtorch::compile::rt;\nusing burtorch::Index;\nusing burtorch::Op;\n");
    w.put("// The recording's argument slots (descriptors, view lists, stored constants).\n");
    w.put("constexpr Index kSlots[] = {");
    const Index* const slots = R::slots(tape_);
    const Index used = R::slots_used(tape_);
    for (Index k = 0U; k < used; ++k) {
      w.put(((k % 12U) == 0U) ? "\n    " : " ").index(slots[k]).put(",");
    }
    w.put((used == 0U) ? "0U};\n}  // namespace\n\n" : "\n};\n}  // namespace\n\n");
    w.put("burtorch::Status step(Scalar* v, Scalar* g, const Scalar* x, const Scalar* y, Index label) noexcept {\n");
    w.put("  const bool bad_x = (kInputs != 0U) && (x == nullptr);\n");
    w.put("  const bool bad_y = (kTargets != 0U) && (y == nullptr);\n");
    w.put("  const bool bad_label = (kClasses != 0U) && (label >= kClasses);\n");
    w.put("  if (bad_x || bad_y || bad_label || (v == nullptr) || (g == nullptr)) {\n");
    w.put("    return burtorch::Status::kInvalidArgument;\n  }\n");
    w.put("  static_cast<void>(y);\n  static_cast<void>(label);\n");
    w.put("  const Index* const s = rt::slots(kSlots);\n  static_cast<void>(s);\n");
    w.put("  for (Index k = 0U; k < kInputs; ++k) {\n    v[kInputFirst + k] = x[k];\n  }\n");
    w.put("  // forward\n");
    Index i = from_.nodes;
    while ((i < end_) && (w.status() == Status::kOk)) {
      const Run r = run_at(i, end_);
      forward(w, r);
      i += r.count;
    }
    w.put("  // backward\n  rt::clear(g, kFirst, kNodes);\n  g[kLoss] = Scalar(1);\n");
    // The runs again, from the root down (clipped at the root).
    Index top = root_ + 1U;
    while ((top > from_.nodes) && (w.status() == Status::kOk)) {
      // The run that ends at `top`: scan from the mark (runs are found
      // forward), the last one starting below top.
      Index at = from_.nodes;
      Run last = run_at(at, top);
      while ((at + last.count) < top) {
        at += last.count;
        last = run_at(at, top);
      }
      backward(w, last);
      top = last.first;
    }
    w.put("  return burtorch::Status::kOk;\n}\n\n");
    w.put("void sgd(Scalar* v, Scalar* g, Scalar lr, Scalar scale) noexcept {\n");
    w.put("  rt::sgd(v + kParamFirst, g + kParamFirst, lr, scale, kParams);\n}\n\n");
    w.put("}  // namespace ").put(spec_.name).put("\n");
    return w.status();
  }

 private:
  static std::uint64_t bits(T x) noexcept {
    std::uint64_t b = 0U;
    if constexpr (sizeof(T) == sizeof(std::uint32_t)) {
      std::uint32_t narrow = 0U;
      std::memcpy(&narrow, &x, sizeof(narrow));  // BT-DEV-010
      b = narrow;
    } else {
      std::memcpy(&b, &x, sizeof(b));  // BT-DEV-010
    }
    return b;
  }
  Index classes() const noexcept {
    return (spec_.class_loss != kNoIndex) ? R::operands(tape_, R::operands(tape_, spec_.class_loss).a).b : 0U;
  }
  static void constant(Writer& w, const char* name, Index value, const char* comment) noexcept {
    w.put("constexpr burtorch::Index ").put(name).put(" = ").index(value).put(";");
    if (comment[0] != '\0') {
      w.put("  // ").put(comment);
    }
    w.put("\n");
  }
  // "i0 + k * d" (or the constant when the run is one node or d is 0).
  static void term(Writer& w, Index base, Index d, bool loop) noexcept {
    w.index(base);
    if (loop && (d != 0U)) {
      w.put(" + k");
    }
  }
  // The operand fields of a call: node, a, b.
  void fields(Writer& w, const Run& r, bool loop) const noexcept {
    w.put("s, ");
    term(w, r.first, 1U, loop);
    w.put(", ");
    term(w, r.node.a, r.da, loop);
    w.put(", ");
    if (r.node.kind == Kind::kTarget) {
      w.put("0U");  // the constant is the argument (the backward does not read it)
    } else if (r.node.kind == Kind::kClass) {
      w.index(r.node.b).put(" + label");
    } else if (repeats(r)) {
      // x op x: read as replay reads it (rt::repeated), so that the
      // compiler does not know the operands are one.
      w.put("rt::repeated(");
      term(w, r.node.b, r.db, loop);
      w.put(")");
    } else {
      term(w, r.node.b, r.db, loop);
    }
  }
  // True if the run's nodes take one node as both operands.
  bool repeats(const Run& r) const noexcept {
    bool binary = false;
    if (is_extension(r.node.op)) {
      binary = (PiecewiseOps::kind(r.node.op) == OpKind::kBinary) || (SmoothOps::kind(r.node.op) == OpKind::kBinary);
    } else {
      binary = op_kind(r.node.op) == OpKind::kBinary;
    }
    return binary && (r.node.kind == Kind::kNode) && (r.node.a == r.node.b) && (r.da == r.db);
  }
  void open_loop(Writer& w, const Run& r, bool down) const noexcept {
    if (r.count > 1U) {
      w.put(down ? "  for (Index k = " : "  for (Index k = 0U; k < ").index(r.count);
      w.put(down ? "; k-- > 0U;) {\n  " : "; ++k) {\n  ");
    }
  }
  void close_loop(Writer& w, const Run& r) const noexcept { w.put((r.count > 1U) ? "  }\n" : ""); }
  Op call_op(const Run& r) const noexcept { return (r.node.kind == Kind::kClass) ? Op::kSub : r.node.op; }
  // "Op::kTanh", or "rt::op(97U)" for a family's code.
  static void op_name(Writer& w, Op k) noexcept {
    if (is_extension(k)) {
      w.put("rt::op(").index(static_cast<Index>(k)).put(")");
    } else {
      w.put("Op::").put(kOpNames[static_cast<std::size_t>(k)]);
    }
  }

  void forward(Writer& w, const Run& r) const noexcept {
    const bool loop = r.count > 1U;
    if (r.node.kind == Kind::kInputNode) {
      return;  // set from x
    }
    if (r.node.kind == Kind::kConstant) {
      w.put("  v[").index(r.first).put("] = rt::from_bits<Scalar>(").hex(bits(tape_.value(r.first))).put("U);\n");
      return;
    }
    open_loop(w, r, false);
    if (r.node.kind == Kind::kTarget) {
      w.put("  rt::fwd_target(v, ");
      term(w, r.first, 1U, loop);
      w.put(", ");
      term(w, r.node.a, r.da, loop);
      w.put(", y[");
      term(w, r.node.b, 1U, loop);
      w.put("]);\n");
    } else {
      w.put("  rt::fwd<");
      op_name(w, call_op(r));
      w.put(">(v, ");
      fields(w, r, loop);
      w.put(");\n");
    }
    close_loop(w, r);
  }
  void backward(Writer& w, const Run& r) const noexcept {
    if ((r.node.kind == Kind::kInputNode) || (r.node.kind == Kind::kConstant) || is_source(r.node.op)) {
      return;
    }
    open_loop(w, r, true);
    w.put("  rt::bwd<");
    op_name(w, call_op(r));
    w.put(">(v, g, ");
    fields(w, r, r.count > 1U);
    w.put(");\n");
    close_loop(w, r);
  }

  static Refusal refuse(Index node, const char* reason) noexcept {
    Refusal r;
    r.status = Status::kInvalidArgument;
    r.node = node;
    r.reason = reason;
    return r;
  }
  // Everything the step needs, or why not.
  Refusal check(Value<T> root) const noexcept {
    if (tape_.status() != Status::kOk) {
      return refuse(kNoIndex, "the tape holds an error");
    }
    if (!identifier(spec_.name)) {
      return refuse(kNoIndex, "the name is not a C++ identifier (letters, digits, _; at most 64)");
    }
    if (!R::mark_valid(tape_, from_) || (root.tape() != &tape_) || (root_ >= end_) || (root_ < from_.nodes)) {
      return refuse(root_, "the mark is not valid or the loss was not recorded after it");
    }
    if (is_source(R::op(tape_, root_))) {
      return refuse(root_, "the loss is a leaf or input, not a computed node");
    }
    if (R::stop(tape_) > from_.nodes) {
      return refuse(R::stop(tape_), "stop_gradient() after the mark: the sweep stops inside the step");
    }
    for (Index i = 0U; i < from_.nodes; ++i) {
      if (!is_source(R::op(tape_, i))) {
        return refuse(i, "an interior node before the mark: the step starts at the mark");
      }
    }
    const View p = spec_.params;
    if ((p.count != 0U) && ((p.first >= from_.nodes) || (p.count > (from_.nodes - p.first)))) {
      return refuse(p.first, "the parameters are not leaves recorded before the mark");
    }
    for (Index i = 0U; i < p.count; ++i) {
      if (R::op(tape_, p.first + i) != Op::kLeaf) {
        return refuse(p.first + i, "a parameter is not a leaf");
      }
    }
    const View x = spec_.inputs;
    if ((x.count != 0U) && ((x.first < from_.nodes) || (x.first >= end_) || (x.count > (end_ - x.first)))) {
      return refuse(x.first, "the inputs are not sources recorded after the mark");
    }
    for (Index i = 0U; i < x.count; ++i) {
      if (!is_source(R::op(tape_, x.first + i))) {
        return refuse(x.first + i, "an input is not a leaf or input node");
      }
    }
    const View y = spec_.targets;
    if ((y.count != 0U) && ((y.first < from_.nodes) || (y.first >= end_) || (y.count > (end_ - y.first)))) {
      return refuse(y.first, "the targets are not nodes recorded after the mark");
    }
    for (Index i = 0U; i < y.count; ++i) {
      if (R::op(tape_, y.first + i) != Op::kAddConst) {
        return refuse(y.first + i, "a target node is not a difference x - c (nn::mse's)");
      }
    }
    const Refusal c = check_class();
    if (c.status != Status::kOk) {
      return c;
    }
    for (Index i = from_.nodes; i < end_; ++i) {
      const Refusal n = check_node(i);
      if (n.status != Status::kOk) {
        return n;
      }
    }
    return Refusal{};
  }
  Refusal check_class() const noexcept {
    const Index c = spec_.class_loss;
    if (c == kNoIndex) {
      return Refusal{};
    }
    if ((c < from_.nodes) || (c >= end_) || (R::op(tape_, c) != Op::kSub) || in_view(spec_.targets, c)) {
      return refuse(c, "the class loss is not a cross-entropy node recorded after the mark");
    }
    const Operands sub = R::operands(tape_, c);
    if ((sub.a < from_.nodes) || (R::op(tape_, sub.a) != Op::kLogSumExpR)) {
      return refuse(c, "the class loss is not a log-sum-exp minus a logit (nn::cross_entropy)");
    }
    const Operands logits = R::operands(tape_, sub.a);
    if ((sub.b < logits.a) || ((sub.b - logits.a) >= logits.b)) {
      return refuse(c, "the class loss picks a node outside its logits");
    }
    return Refusal{};
  }
  Refusal check_node(Index i) const noexcept {
    const Op k = R::op(tape_, i);
    const Index b = R::operands(tape_, i).b;
    if (is_extension(k)) {
      // The library's families that replay evaluates (fused layer rows,
      // the piecewise and smooth functions); frozen layers, lanes and a
      // program's own families are not compiled.
      const bool ok = PiecewiseOps::replayable(k, b) || SmoothOps::replayable(k, b) || FusedOps::replayable(k, b);
      return ok ? Refusal{}
                : refuse(i, "an op of a family that is not compiled (frozen layer, lanes, a program's own op)");
    }
    if (static_cast<std::uint32_t>(k) >= static_cast<std::uint32_t>(Op::kCount)) {
      return refuse(i, "not an op code");
    }
    bool ok = true;
    const bool target = in_view(spec_.targets, i);
    visit_op(k, [&](auto tag) noexcept {
      using D = typename decltype(tag)::Def;
      ok = detail::replayable<D>();
      if constexpr (detail::FoldedOf<D>::value) {
        ok = target || (b != kNoIndex);  // the constant was kept (a target's is an argument)
      }
    });
    return ok ? Refusal{} : refuse(i, "a folded constant that was not kept (not exactly a float)");
  }

  const Tape<T>& tape_;
  Mark from_;
  Index root_;
  const StepSpec& spec_;
  Index end_;
  Refusal refusal_;
};

}  // namespace

template <class T>
Refusal emit_step(const Tape<T>& tape, Mark from, Value<T> root, const StepSpec& spec, Part part,
                  ByteSink sink) noexcept {
  const Emitter<T> e(tape, from, root, spec);
  Refusal r = e.refusal();
  if (r.status != Status::kOk) {
    return r;
  }
  if (sink.write == nullptr) {
    r.status = Status::kInvalidArgument;
    r.reason = "no sink";
    return r;
  }
  Writer w(sink);
  r.status = (part == Part::kHeader) ? e.header(w) : e.source(w);
  r.reason = (r.status == Status::kOk) ? "" : "the sink refused the text (full, or an i/o error)";
  return r;
}

template <class T>
std::uint32_t structure_digest(const Tape<T>& tape, Mark from, Value<T> root, const StepSpec& spec) noexcept {
  const Emitter<T> e(tape, from, root, spec);
  return (e.refusal().status == Status::kOk) ? e.digest() : 0U;
}

template Refusal emit_step<float>(const Tape<float>&, Mark, Value<float>, const StepSpec&, Part, ByteSink) noexcept;
template Refusal emit_step<double>(const Tape<double>&, Mark, Value<double>, const StepSpec&, Part,
                                   ByteSink) noexcept;
template std::uint32_t structure_digest<float>(const Tape<float>&, Mark, Value<float>, const StepSpec&) noexcept;
template std::uint32_t structure_digest<double>(const Tape<double>&, Mark, Value<double>, const StepSpec&) noexcept;

}  // namespace compile
}  // namespace burtorch
