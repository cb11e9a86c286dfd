// SPDX-License-Identifier: Apache-2.0
#include "burtorch/tools/graphviz.hpp"

#include "burtorch/frozen/ops.hpp"
#include "burtorch/ext/fused.hpp"
#include "burtorch/tools/inspect.hpp"

namespace burtorch {
namespace {

// Writes pieces in order, remembering the first error so callers check once.
class Writer {
 public:
  explicit Writer(ByteSink sink) noexcept : sink_(sink) {}
  void text(const char* s) noexcept {
    if (status_ == Status::kOk) {
      status_ = write_text(sink_, s);
    }
  }
  void number(double v) noexcept {
    char buffer[32];
    static_cast<void>(format_double(v, buffer, sizeof(buffer), kGraphvizDigits));
    text(buffer);
  }
  void index(Index i) noexcept {
    char buffer[24];
    static_cast<void>(format_unsigned(i, buffer, sizeof(buffer)));
    text(buffer);
  }
  void edge(Index from, Index to) noexcept {
    text("  n");
    index(from);
    text(" -> n");
    index(to);
    text(";\n");
  }
  Status status() const noexcept { return status_; }

 private:
  ByteSink sink_;
  Status status_ = Status::kOk;
};

template <class T>
void operand_edges(Writer& out, const Tape<T>& tape, Index to, Index where, bool list, Index n) noexcept {
  for (Index k = 0U; k < n; ++k) {
    out.edge(list ? slot_at(tape, where + k) : (where + k), to);
  }
}

}  // namespace

template <class T>
// NOLINTNEXTLINE(readability-function-cognitive-complexity): one flat branch per kind of node
Status write_graphviz(const Tape<T>& tape, Value<T> root, ByteSink sink) noexcept {
  if (root.tape() != &tape) {
    return Status::kForeignValue;
  }
  if (root.index() >= tape.size()) {
    return Status::kInvalidHandle;
  }
  Writer out(sink);
  out.text("digraph burtorch {\n  rankdir=LR;\n  node [fontname=\"monospace\" fontsize=10];\n");
  const Index last = root.index();
  for (Index i = 0U; i <= last; ++i) {
    const Op op = node_op(tape, i);
    out.text("  n");
    out.index(i);
    out.text(" [shape=");
    out.text(((op == Op::kLeaf) || (op == Op::kInput)) ? "ellipse" : "box");
    if (i == last) {
      out.text(" peripheries=2 style=bold");
    }
    out.text(" label=\"#");
    out.index(i);
    out.text(" ");
    const OpKind kind = node_kind(tape, i);
    out.text(node_name(tape, i));
    if (kind == OpKind::kConstant) {
      out.text(" ");
      out.number(static_cast<double>(node_constant(tape, i)));
    }
    out.text("\\nvalue ");
    out.number(static_cast<double>(tape.value(i)));
    out.text("\\ngrad ");
    out.number(static_cast<double>(tape.grad(i)));
    out.text("\"];\n");
    const Operands operands = node_operands(tape, i);
    const Index a = operands.a;
    const Index b = operands.b;
    if (kind == OpKind::kBinary) {
      out.edge(a, i);
      out.edge(b, i);
    } else if ((kind == OpKind::kUnary) || (kind == OpKind::kConstant)) {
      out.edge(a, i);
    } else if ((kind == OpKind::kViewReduce) || (kind == OpKind::kListReduce)) {
      operand_edges(out, tape, i, a, kind == OpKind::kListReduce, b);
    } else if ((op == Op::kDotRR) || (op == Op::kDotRL) || (op == Op::kDotLL)) {
      operand_edges(out, tape, i, slot_at(tape, a), op == Op::kDotLL, b);
      operand_edges(out, tape, i, slot_at(tape, a + 1U), op != Op::kDotRR, b);
      if (slot_at(tape, a + 2U) != kNoIndex) {
        out.edge(slot_at(tape, a + 2U), i);
      }
    } else if (op == Op::kDotRV) {
      operand_edges(out, tape, i, slot_at(tape, a), false, b);
      const Index list = slot_at(tape, a + 1U);
      const Index runs = (slot_at(tape, list) == kNoIndex) ? kNoIndex : (slot_at(tape, list) & ~detail::kListOfInputs);
      for (Index r = 0U; (runs != kNoIndex) && (r < runs); ++r) {
        operand_edges(out, tape, i, slot_at(tape, list + 1U + (2U * r)), false, slot_at(tape, list + 2U + (2U * r)));
      }
      if (slot_at(tape, a + 2U) != kNoIndex) {
        out.edge(slot_at(tape, a + 2U), i);
      }
    } else if ((op == Op::kMatRow) || (op == FusedOps::op<rows::MatRowRelu>()) ||
               (op == FusedOps::op<rows::MatRowTanh>()) || (op == FusedOps::op<rows::MatRowSigmoid>())) {
      const Index length = slot_at(tape, a + 3U);
      operand_edges(out, tape, i, slot_at(tape, a) + (b * length), false, length);
      const Index list = slot_at(tape, a + 1U);
      const Index runs = (slot_at(tape, list) == kNoIndex) ? kNoIndex : (slot_at(tape, list) & ~detail::kListOfInputs);
      for (Index r = 0U; (runs != kNoIndex) && (r < runs); ++r) {
        operand_edges(out, tape, i, slot_at(tape, list + 1U + (2U * r)), false, slot_at(tape, list + 2U + (2U * r)));
      }
      if (slot_at(tape, a + 2U) != kNoIndex) {
        out.edge(slot_at(tape, a + 2U) + b, i);
      }
    } else if (op == Op::kScaleShift) {
      out.edge(slot_at(tape, a) + b, i);
      out.edge(slot_at(tape, a + 1U) + b, i);
      out.edge(slot_at(tape, a + 2U) + b, i);
    } else if (op == FrozenOps::op<rows::MatRowFrozen>()) {
      // The weights are not on the tape: edges from the input's runs only.
      const Index list = slot_at(tape, a);
      const Index runs = (slot_at(tape, list) == kNoIndex) ? kNoIndex : (slot_at(tape, list) & ~detail::kListOfInputs);
      for (Index r = 0U; (runs != kNoIndex) && (r < runs); ++r) {
        operand_edges(out, tape, i, slot_at(tape, list + 1U + (2U * r)), false, slot_at(tape, list + 2U + (2U * r)));
      }
    } else {
      // leaf: no incoming edges
    }
  }
  out.text("}\n");
  return out.status();
}

template Status write_graphviz<float>(const Tape<float>&, Value<float>, ByteSink) noexcept;
template Status write_graphviz<double>(const Tape<double>&, Value<double>, ByteSink) noexcept;

}  // namespace burtorch
