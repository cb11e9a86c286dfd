// SPDX-License-Identifier: Apache-2.0
#include "burtorch/graphviz.hpp"

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
    out.edge(list ? tape.slot(where + k) : (where + k), to);
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
    const Op op = tape.op(i);
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
    out.text(op_name(op));
    if (op_kind(op) == OpKind::kConstant) {
      out.text(" ");
      out.number(static_cast<double>(tape.constant(i)));
    }
    out.text("\\nvalue ");
    out.number(static_cast<double>(tape.value(i)));
    out.text("\\ngrad ");
    out.number(static_cast<double>(tape.grad(i)));
    out.text("\"];\n");
    const Index a = tape.arg_a(i);
    const Index b = tape.arg_b(i);
    const OpKind kind = op_kind(op);
    if (kind == OpKind::kBinary) {
      out.edge(a, i);
      out.edge(b, i);
    } else if ((kind == OpKind::kUnary) || (kind == OpKind::kConstant)) {
      out.edge(a, i);
    } else if ((kind == OpKind::kRangeReduce) || (kind == OpKind::kListReduce)) {
      operand_edges(out, tape, i, a, kind == OpKind::kListReduce, b);
    } else if ((op == Op::kDotRR) || (op == Op::kDotRL) || (op == Op::kDotLL)) {
      operand_edges(out, tape, i, tape.slot(a), op == Op::kDotLL, b);
      operand_edges(out, tape, i, tape.slot(a + 1U), op != Op::kDotRR, b);
      if (tape.slot(a + 2U) != kNoIndex) {
        out.edge(tape.slot(a + 2U), i);
      }
    } else if (op == Op::kDotRV) {
      operand_edges(out, tape, i, tape.slot(a), false, b);
      const Index list = tape.slot(a + 1U);
      const Index runs = (tape.slot(list) == kNoIndex) ? kNoIndex : (tape.slot(list) & ~detail::kListOfInputs);
      for (Index r = 0U; (runs != kNoIndex) && (r < runs); ++r) {
        operand_edges(out, tape, i, tape.slot(list + 1U + (2U * r)), false, tape.slot(list + 2U + (2U * r)));
      }
      if (tape.slot(a + 2U) != kNoIndex) {
        out.edge(tape.slot(a + 2U), i);
      }
    } else if ((op == Op::kMatRow) || (op == Op::kMatRowRelu) || (op == Op::kMatRowTanh) ||
               (op == Op::kMatRowSigmoid)) {
      const Index length = tape.slot(a + 3U);
      operand_edges(out, tape, i, tape.slot(a) + (b * length), false, length);
      const Index list = tape.slot(a + 1U);
      const Index runs = (tape.slot(list) == kNoIndex) ? kNoIndex : (tape.slot(list) & ~detail::kListOfInputs);
      for (Index r = 0U; (runs != kNoIndex) && (r < runs); ++r) {
        operand_edges(out, tape, i, tape.slot(list + 1U + (2U * r)), false, tape.slot(list + 2U + (2U * r)));
      }
      if (tape.slot(a + 2U) != kNoIndex) {
        out.edge(tape.slot(a + 2U) + b, i);
      }
    } else if (op == Op::kScaleShift) {
      out.edge(tape.slot(a) + b, i);
      out.edge(tape.slot(a + 1U) + b, i);
      out.edge(tape.slot(a + 2U) + b, i);
    } else if (op == Op::kMatRowFrozen) {
      // The weights are not on the tape: edges from the input's runs only.
      const Index list = tape.slot(a);
      const Index runs = (tape.slot(list) == kNoIndex) ? kNoIndex : (tape.slot(list) & ~detail::kListOfInputs);
      for (Index r = 0U; (runs != kNoIndex) && (r < runs); ++r) {
        operand_edges(out, tape, i, tape.slot(list + 1U + (2U * r)), false, tape.slot(list + 2U + (2U * r)));
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
