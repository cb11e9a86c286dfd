// SPDX-License-Identifier: Apache-2.0
/// @file
/// A layer's rows with the activation fused in: matvec<Act> records
/// act(row o of W times x + bias) as one node per output instead of a row
/// and an activation node, with the same values and gradients, bit for
/// bit, half the nodes and no activation node to record or sweep. An op
/// family (ext/extension.hpp) whose backward is arithmetic on the output, so a
/// ReLU firmware links no tanhf or expf through it.
#ifndef BURTORCH_EXT_FUSED_HPP
#define BURTORCH_EXT_FUSED_HPP

#include "burtorch/ext/extension.hpp"
#include "burtorch/index.hpp"
#include "burtorch/core/op.hpp"
#include "burtorch/core/op_wide.hpp"
#include "burtorch/core/record.hpp"
#include "burtorch/core/tape.hpp"
#include "burtorch/core/views.hpp"

namespace burtorch {
namespace rows {
/// @cond OP_ROWS
// clang-format off
/// Row b of a layer with its activation Act fused (matvec<Op::kRelu>,
/// <Op::kTanh>, <Op::kSigmoid>): the rows share kMatRow's descriptor. The
/// value is the activation's row applied to the row's sum, the backward the
/// activation's row (its derivative from the output, as the activation node
/// computes it) followed by kMatRow's: the same bits as the two nodes. A
/// row whose activation has a zero derivative there (a ReLU that is off)
/// adds nothing.
template <Op Act>
struct FusedRow {
  static constexpr OpKind kKind = OpKind::kDescriptor;
  static constexpr bool kRows = true;
  static constexpr Op kActivation = Act;  ///< the activation's elementwise row
  template <class T> static T activate(T pre) noexcept { return OpDef<Act>::forward(pre); }
  template <class T> static T value(const T* v, const Index* slots, Index /*i*/, Index a, Index b) noexcept {
    return activate(detail::mat_row_value(v, slots, a, b));
  }
  template <class T> static void backward(const detail::Arrays<T>& s, Index i, Index a, Index b, T g) noexcept {
    // The activation's backward into a zero gradient, as its own node
    // would get it (ReLU, tanh and sigmoid need only the output: ReLU's
    // output is > 0 or NaN exactly where its input is).
    T d = T(0);
    OpDef<Act>::backward(g, s.v[i], s.v[i], d);
    if (!ScalarOps<T>::is_zero(d)) {  // BT-DEV-004: exact zero test, not a tolerance
      detail::mat_row_backward(s, a, b, d);
    }
  }
};
struct MatRowRelu : FusedRow<Op::kRelu> {
  static constexpr const char* kName = "matvec_relu_row";
};
struct MatRowTanh : FusedRow<Op::kTanh> {
  static constexpr const char* kName = "matvec_tanh_row";
};
struct MatRowSigmoid : FusedRow<Op::kSigmoid> {
  static constexpr const char* kName = "matvec_sigmoid_row";
};
// clang-format on
/// @endcond
}  // namespace rows

/// The fused rows' family.
using FusedOps = OpFamily<family::kFused, rows::MatRowRelu, rows::MatRowTanh, rows::MatRowSigmoid>;

namespace detail {
/// The fused row of activation Act (Op::kRelu, kTanh, kSigmoid).
template <Op Act>
struct FusedRowOf {
  static_assert((Act == Op::kRelu) || (Act == Op::kTanh) || (Act == Op::kSigmoid),
                "matvec<Act> fuses Op::kRelu, Op::kTanh or Op::kSigmoid");
};
template <> struct FusedRowOf<Op::kRelu> {
  using Type = rows::MatRowRelu;
};
template <> struct FusedRowOf<Op::kTanh> {
  using Type = rows::MatRowTanh;
};
template <> struct FusedRowOf<Op::kSigmoid> {
  using Type = rows::MatRowSigmoid;
};
}  // namespace detail

/// core/views.hpp's matvec with an activation fused into every row: `Act` is
/// Op::kRelu, Op::kTanh or Op::kSigmoid, and row o = Act(sum + bias), one
/// node per output. The same checks and errors as matvec(); also
/// kCapacityExceeded if the tape holds kTapeFamilies other op families.
/// Inline: compiled only into a program that calls it.
template <Op Act, class T>
inline View matvec(Tape<T>& tape, Index w_first, Index rows, ViewList x, Index bias_first) noexcept {
  using R = Recorder<T>;
  using Row = typename detail::FusedRowOf<Act>::Type;
  constexpr Op kRow = FusedOps::op<Row>();
  const Index descriptor = detail::matvec_descriptor(tape, w_first, rows, x, bias_first);
  if (descriptor == kNoIndex) {
    return kNoView;
  }
  if (!FusedOps::enable(tape)) {
    R::release_slots(tape, descriptor);
    return kNoView;
  }
  const auto first = static_cast<Index>(tape.size());
  for (Index o = 0U; o < rows; ++o) {
    // Row::value (what replay computes), with the descriptor's fields in
    // registers: the same operations, so the same bits.
    T result = detail::dot_list_of(R::values(tape), w_first + (o * x.total), &R::slots(tape)[x.slot]);
    if (bias_first != kNoIndex) {
      result += R::values(tape)[bias_first + o];
    }
    static_cast<void>(R::append(tape, kRow, Row::activate(result), descriptor, o));  // fits: room checked
  }
  return View{first, rows};
}

}  // namespace burtorch

#endif  // BURTORCH_EXT_FUSED_HPP
