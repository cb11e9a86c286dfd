// SPDX-License-Identifier: Apache-2.0
/// @file
/// The op set of the paper's tape, part 2 (part 1 is core/op.hpp): the
/// reductions over n operands, the inner products and a layer's rows, whose
/// operands are described in argument slots; then the table that reads
/// every core row (visit_op, op_kind, op_name, op_pair).
#ifndef BURTORCH_CORE_OP_WIDE_HPP
#define BURTORCH_CORE_OP_WIDE_HPP

#include <cstddef>
#include <cstdint>
#include <utility>

#include "burtorch/config.hpp"
#include "burtorch/core/detail/math.hpp"
#include "burtorch/index.hpp"
#include "burtorch/core/op.hpp"
#include "burtorch/scalar.hpp"

namespace burtorch {

/// @cond OP_ROWS
// clang-format off
// --- reductions over n operands: R reads a view (consecutive nodes), L a list ------------
// forward(v, at, n): the value over operands v[at[0]] ... v[at[n-1]];
// backward(v, grads, at, n, g, out): adds g times each partial derivative.
template <> struct OpDef<Op::kSumR> {
  static constexpr OpKind kKind = OpKind::kViewReduce;
  static constexpr Op kPair = Op::kSumL;
  static constexpr Empty kEmpty = Empty::kZero;  // of no operands (PyTorch's)
  static constexpr const char* kName = "sum";
  template <class T, class At> static T forward(const T* v, At at, Index n) noexcept { return detail::sum_of(v, at, n); }
  template <class T, class At> static void backward(const T* /*v*/, T* gr, At at, Index n, T g, T /*out*/) noexcept {
    for (Index i = 0U; i < n; ++i) { gr[at[i]] += g; }
  }
};
template <> struct OpDef<Op::kSumL> : detail::ListVariant<Op::kSumR> {};
template <> struct OpDef<Op::kSubR> {  // x0 - (x1 + ... + x(n-1))
  static constexpr OpKind kKind = OpKind::kViewReduce;
  static constexpr Op kPair = Op::kSubL;
  static constexpr Empty kEmpty = Empty::kZero;  // of no operands (PyTorch's)
  static constexpr const char* kName = "sub_n";
  template <class T, class At> static T forward(const T* v, At at, Index n) noexcept {
    T rest = T(0);
    for (Index i = 1U; i < n; ++i) { rest += v[at[i]]; }
    return v[at[0U]] - rest;
  }
  template <class T, class At> static void backward(const T* /*v*/, T* gr, At at, Index n, T g, T /*out*/) noexcept {
    gr[at[0U]] += g;
    for (Index i = 1U; i < n; ++i) { gr[at[i]] -= g; }
  }
};
template <> struct OpDef<Op::kSubL> : detail::ListVariant<Op::kSubR> {};
template <> struct OpDef<Op::kProdR> {  // exact zeros handled in backward
  static constexpr OpKind kKind = OpKind::kViewReduce;
  static constexpr Op kPair = Op::kProdL;
  static constexpr Empty kEmpty = Empty::kOne;  // of no operands (PyTorch's)
  static constexpr const char* kName = "prod";
  template <class T, class At> static T forward(const T* v, At at, Index n) noexcept { return detail::product_of(v, at, n); }
  template <class T, class At> static void backward(const T* v, T* gr, At at, Index n, T g, T /*out*/) noexcept {
    detail::product_backward(v, gr, at, n, g);
  }
};
template <> struct OpDef<Op::kProdL> : detail::ListVariant<Op::kProdR> {};
template <> struct OpDef<Op::kMeanR> {
  static constexpr OpKind kKind = OpKind::kViewReduce;
  static constexpr Op kPair = Op::kMeanL;
  static constexpr Empty kEmpty = Empty::kNaN;  // of no operands (PyTorch's)
  static constexpr const char* kName = "mean";
  template <class T, class At> static T forward(const T* v, At at, Index n) noexcept {
    return detail::sum_of(v, at, n) / static_cast<T>(n);
  }
  template <class T, class At> static void backward(const T* /*v*/, T* gr, At at, Index n, T g, T /*out*/) noexcept {
    const T share = g / static_cast<T>(n);
    for (Index i = 0U; i < n; ++i) { gr[at[i]] += share; }
  }
};
template <> struct OpDef<Op::kMeanL> : detail::ListVariant<Op::kMeanR> {};
template <> struct OpDef<Op::kSumSqR> {  // sum of x_i^2
  static constexpr OpKind kKind = OpKind::kViewReduce;
  static constexpr Op kPair = Op::kSumSqL;
  static constexpr Empty kEmpty = Empty::kZero;  // of no operands (PyTorch's)
  static constexpr const char* kName = "sum_sq";
  template <class T, class At> static T forward(const T* v, At at, Index n) noexcept { return detail::sum_of_squares(v, at, n); }
  template <class T, class At> static void backward(const T* v, T* gr, At at, Index n, T g, T /*out*/) noexcept {
    const T scale = T(2) * g;
    for (Index i = 0U; i < n; ++i) { gr[at[i]] += scale * v[at[i]]; }
  }
};
template <> struct OpDef<Op::kSumSqL> : detail::ListVariant<Op::kSumSqR> {};
template <> struct OpDef<Op::kMeanSqR> {  // mean of x_i^2
  static constexpr OpKind kKind = OpKind::kViewReduce;
  static constexpr Op kPair = Op::kMeanSqL;
  static constexpr Empty kEmpty = Empty::kNaN;  // of no operands (PyTorch's)
  static constexpr const char* kName = "mean_sq";
  template <class T, class At> static T forward(const T* v, At at, Index n) noexcept {
    return detail::sum_of_squares(v, at, n) / static_cast<T>(n);
  }
  template <class T, class At> static void backward(const T* v, T* gr, At at, Index n, T g, T /*out*/) noexcept {
    const T scale = (T(2) * g) / static_cast<T>(n);
    for (Index i = 0U; i < n; ++i) { gr[at[i]] += scale * v[at[i]]; }
  }
};
template <> struct OpDef<Op::kMeanSqL> : detail::ListVariant<Op::kMeanSqR> {};
template <> struct OpDef<Op::kNegMeanR> {  // -mean
  static constexpr OpKind kKind = OpKind::kViewReduce;
  static constexpr Op kPair = Op::kNegMeanL;
  static constexpr Empty kEmpty = Empty::kNaN;  // of no operands (PyTorch's)
  static constexpr const char* kName = "neg_mean";
  template <class T, class At> static T forward(const T* v, At at, Index n) noexcept {
    return -detail::sum_of(v, at, n) / static_cast<T>(n);
  }
  template <class T, class At> static void backward(const T* /*v*/, T* gr, At at, Index n, T g, T /*out*/) noexcept {
    const T share = -g / static_cast<T>(n);
    for (Index i = 0U; i < n; ++i) { gr[at[i]] += share; }
  }
};
template <> struct OpDef<Op::kNegMeanL> : detail::ListVariant<Op::kNegMeanR> {};
namespace detail {
/// Variance with the given denominator (n - 1 or n), two-pass.
template <class T, class At>
T variance_of(const T* v, At at, Index n, T denominator) noexcept {
  return centered_squares(v, at, n, sum_of(v, at, n) / static_cast<T>(n)) / denominator;
}
/// Its backward: 2 g (x_i - mean) / denominator.
template <class T, class At>
void variance_backward(const T* v, T* gr, At at, Index n, T g, T denominator) noexcept {
  const T m = sum_of(v, at, n) / static_cast<T>(n);
  const T scale = (T(2) * g) / denominator;
  for (Index i = 0U; i < n; ++i) { gr[at[i]] += scale * (v[at[i]] - m); }
}
}  // namespace detail
template <> struct OpDef<Op::kVarR> {  // sum((x - mean)^2) / (n - 1); NaN for n == 1
  static constexpr OpKind kKind = OpKind::kViewReduce;
  static constexpr Op kPair = Op::kVarL;
  static constexpr Empty kEmpty = Empty::kNaN;  // of no operands (PyTorch's)
  static constexpr const char* kName = "var";
  template <class T, class At> static T forward(const T* v, At at, Index n) noexcept {
    return detail::variance_of(v, at, n, static_cast<T>(n) - T(1));
  }
  template <class T, class At> static void backward(const T* v, T* gr, At at, Index n, T g, T /*out*/) noexcept {
    detail::variance_backward(v, gr, at, n, g, static_cast<T>(n) - T(1));
  }
};
template <> struct OpDef<Op::kVarL> : detail::ListVariant<Op::kVarR> {};
template <> struct OpDef<Op::kVarBiasedR> {  // sum((x - mean)^2) / n
  static constexpr OpKind kKind = OpKind::kViewReduce;
  static constexpr Op kPair = Op::kVarBiasedL;
  static constexpr Empty kEmpty = Empty::kNaN;  // of no operands (PyTorch's)
  static constexpr const char* kName = "var_biased";
  template <class T, class At> static T forward(const T* v, At at, Index n) noexcept {
    return detail::variance_of(v, at, n, static_cast<T>(n));
  }
  template <class T, class At> static void backward(const T* v, T* gr, At at, Index n, T g, T /*out*/) noexcept {
    detail::variance_backward(v, gr, at, n, g, static_cast<T>(n));
  }
};
template <> struct OpDef<Op::kVarBiasedL> : detail::ListVariant<Op::kVarBiasedR> {};
template <> struct OpDef<Op::kLogSumExpR> {  // log(sum(exp(x_i))), max-shifted
  static constexpr OpKind kKind = OpKind::kViewReduce;
  static constexpr Op kPair = Op::kLogSumExpL;
  static constexpr Empty kEmpty = Empty::kMinusInf;  // of no operands (PyTorch's)
  static constexpr const char* kName = "log_sum_exp";
  template <class T, class At> static T forward(const T* v, At at, Index n) noexcept { return detail::log_sum_exp_of(v, at, n); }
  // d/dx_i = softmax(x)_i = exp(x_i - out).
  template <class T, class At> static void backward(const T* v, T* gr, At at, Index n, T g, T out) noexcept {
    for (Index i = 0U; i < n; ++i) { gr[at[i]] += g * ScalarOps<T>::exp(v[at[i]] - out); }
  }
};
template <> struct OpDef<Op::kLogSumExpL> : detail::ListVariant<Op::kLogSumExpR> {};

// --- descriptor ops: operands described in argument slots from a ------------
// backward(s, i, a, b, g) for node i with operand fields a, b.
namespace detail {
/// Adds g to the bias of a [w, x, bias] descriptor (none if kNoIndex).
template <class T>
inline void bias_backward(const Arrays<T>& s, Index descriptor, T g) noexcept {
  const Index bias = s.slots[descriptor + 2U];
  if (bias != kNoIndex) { s.g[bias] += g; }
}
}  // namespace detail
/// sum(w_i * x_i) (+ bias) over b pairs; descriptor [w, x, bias] at slot a,
/// w and x the first node of a view (R) or a list slot (L).
namespace detail {
/// A [w, x, bias] descriptor's product plus its bias (none if kNoIndex).
template <class T>
inline T with_bias(const T* v, const Index* slots, Index descriptor, T product) noexcept {
  const Index bias = slots[descriptor + 2U];
  return (bias != kNoIndex) ? (product + v[bias]) : product;
}
}  // namespace detail
template <> struct OpDef<Op::kDotRR> {
  static constexpr OpKind kKind = OpKind::kDescriptor;
  static constexpr const char* kName = "dot";
  template <class T> static T value(const T* v, const Index* slots, Index /*i*/, Index a, Index b) noexcept {
    return detail::with_bias(v, slots, a, detail::view_dot(v, slots[a], slots[a + 1U], b));
  }
  template <class T> static void backward(const detail::Arrays<T>& s, Index /*i*/, Index a, Index b, T g) noexcept {
    detail::view_dot_backward(s.v, s.g, s.slots[a], s.slots[a + 1U], b, g);
    detail::bias_backward(s, a, g);
  }
};
template <> struct OpDef<Op::kDotRL> {
  static constexpr OpKind kKind = OpKind::kDescriptor;
  static constexpr const char* kName = "dot";
  template <class T> static T value(const T* v, const Index* slots, Index /*i*/, Index a, Index b) noexcept {
    return detail::with_bias(v, slots, a,
                             detail::dot_of(v, detail::view_operand(slots[a]), detail::list_operand(&slots[slots[a + 1U]]), b));
  }
  template <class T> static void backward(const detail::Arrays<T>& s, Index /*i*/, Index a, Index b, T g) noexcept {
    detail::dot_backward(s.v, s.g, detail::view_operand(s.slots[a]), detail::list_operand(&s.slots[s.slots[a + 1U]]), b, g);
    detail::bias_backward(s, a, g);
  }
};
template <> struct OpDef<Op::kDotLL> {
  static constexpr OpKind kKind = OpKind::kDescriptor;
  static constexpr const char* kName = "dot";
  template <class T> static T value(const T* v, const Index* slots, Index /*i*/, Index a, Index b) noexcept {
    return detail::with_bias(
        v, slots, a, detail::dot_of(v, detail::list_operand(&slots[slots[a]]), detail::list_operand(&slots[slots[a + 1U]]), b));
  }
  template <class T> static void backward(const detail::Arrays<T>& s, Index /*i*/, Index a, Index b, T g) noexcept {
    detail::dot_backward(s.v, s.g, detail::list_operand(&s.slots[s.slots[a]]),
                         detail::list_operand(&s.slots[s.slots[a + 1U]]), b, g);
    detail::bias_backward(s, a, g);
  }
};
/// A weight view times a view list (several views read as one operand):
/// descriptor [w_first, list_slot, bias] at slot a, b = n.
template <> struct OpDef<Op::kDotRV> {
  static constexpr OpKind kKind = OpKind::kDescriptor;
  static constexpr const char* kName = "dot_views";
  template <class T> static T value(const T* v, const Index* slots, Index /*i*/, Index a, Index /*b*/) noexcept {
    return detail::with_bias(v, slots, a, detail::dot_list_of(v, slots[a], &slots[slots[a + 1U]]));
  }
  template <class T> static void backward(const detail::Arrays<T>& s, Index /*i*/, Index a, Index /*b*/, T g) noexcept {
    detail::dot_list_backward(s.v, s.g, s.slots[a], &s.slots[s.slots[a + 1U]], g);
    detail::bias_backward(s, a, g);
  }
};
/// Row b of a weight matrix times a view list (one output of a layer); the
/// rows share the descriptor [w_first, list_slot, bias_first, length] at
/// slot a: row b's weights start at w_first + b * length, its bias is node
/// bias_first + b (none if kNoIndex).
namespace detail {
/// The backward of row b of the matvec whose descriptor is at slot a,
/// given the gradient g of its pre-activation.
template <class T>
inline T mat_row_value(const T* v, const Index* slots, Index a, Index b) noexcept {
  const Index length = slots[a + 3U];
  const T sum = dot_list_of(v, slots[a] + (b * length), &slots[slots[a + 1U]]);
  return (slots[a + 2U] != kNoIndex) ? (sum + v[slots[a + 2U] + b]) : sum;
}
template <class T>
inline void mat_row_backward(const Arrays<T>& s, Index a, Index b, T g) noexcept {
  const Index length = s.slots[a + 3U];
  dot_list_backward(s.v, s.g, s.slots[a] + (b * length), &s.slots[s.slots[a + 1U]], g);
  if (s.slots[a + 2U] != kNoIndex) { s.g[s.slots[a + 2U] + b] += g; }
}
}  // namespace detail
template <> struct OpDef<Op::kMatRow> {
  static constexpr OpKind kKind = OpKind::kDescriptor;
  static constexpr const char* kName = "matvec_row";
  static constexpr bool kRows = true;
  template <class T> static T value(const T* v, const Index* slots, Index /*i*/, Index a, Index b) noexcept {
    return detail::mat_row_value(v, slots, a, b);
  }
  template <class T> static void backward(const detail::Arrays<T>& s, Index /*i*/, Index a, Index b, T g) noexcept {
    detail::mat_row_backward(s, a, b, g);
  }
};
/// Element b of x * scale + shift over three views (a layer norm's gain and
/// bias); the elements share the descriptor [scale, x, shift] at slot a.
template <> struct OpDef<Op::kScaleShift> {
  static constexpr OpKind kKind = OpKind::kDescriptor;
  static constexpr const char* kName = "scale_shift";
  template <class T> static T value(const T* v, const Index* slots, Index /*i*/, Index a, Index b) noexcept {
    return (v[slots[a + 1U] + b] * v[slots[a] + b]) + v[slots[a + 2U] + b];
  }
  template <class T> static void backward(const detail::Arrays<T>& s, Index /*i*/, Index a, Index b, T g) noexcept {
    const Index scale = s.slots[a] + b;
    const Index x = s.slots[a + 1U] + b;
    const T vx = s.v[x];
    s.g[x] += g * s.v[scale];
    s.g[scale] += g * vx;
    s.g[s.slots[a + 2U] + b] += g;
  }
};

// clang-format on
/// @endcond

// --- what the rows give everyone else ------------------------------------
/// A type that names op K (visit_op passes one to its function).
template <Op K>
struct OpTag {
  static constexpr Op kOp = K;  ///< the op
  using Def = OpDef<K>;         ///< its row
};

namespace detail {
/// Calls f(OpTag<op>{}) if op is one of I...
template <class F, std::size_t... I>
BURTORCH_ALWAYS_INLINE inline void visit_op_from(Op op, F&& f, std::index_sequence<I...> /*ops*/) noexcept {
  // One equality test per op: the compiler turns the chain into a jump table.
  const auto code = static_cast<std::uint32_t>(op);
  const bool found = (((code == I) ? (f(OpTag<static_cast<Op>(I)>{}), true) : false) || ...);
  static_cast<void>(found);
}
template <std::size_t... I>
constexpr OpKind kind_of(Op op, std::index_sequence<I...> /*ops*/) noexcept {
  constexpr OpKind kKinds[] = {OpDef<static_cast<Op>(I)>::kKind...};
  return (static_cast<std::size_t>(op) < sizeof...(I)) ? kKinds[static_cast<std::size_t>(op)] : OpKind::kSource;
}
template <std::size_t... I>
constexpr const char* name_of(Op op, std::index_sequence<I...> /*ops*/) noexcept {
  constexpr const char* kNames[] = {OpDef<static_cast<Op>(I)>::kName...};
  return (static_cast<std::size_t>(op) < sizeof...(I)) ? kNames[static_cast<std::size_t>(op)] : "?";
}
/// The other variant of a reduction (R <-> L); the op itself otherwise.
template <Op K>
constexpr Op pair_of() noexcept {
  if constexpr ((OpDef<K>::kKind == OpKind::kViewReduce) || (OpDef<K>::kKind == OpKind::kListReduce)) {
    return OpDef<K>::kPair;
  } else {
    return K;
  }
}
template <std::size_t... I>
constexpr Op pair_of(Op op, std::index_sequence<I...> /*ops*/) noexcept {
  constexpr Op kPairs[] = {pair_of<static_cast<Op>(I)>()...};
  return (static_cast<std::size_t>(op) < sizeof...(I)) ? kPairs[static_cast<std::size_t>(op)] : op;
}
/// Every row is complete and a reduction's pair points back at it.
template <std::size_t... I>
constexpr bool rows_consistent(std::index_sequence<I...> /*ops*/) noexcept {
  return ((pair_of<pair_of<static_cast<Op>(I)>()>() == static_cast<Op>(I)) && ...);
}
/// The core set: the ops before Op::kCount.
using CoreOps = std::make_index_sequence<static_cast<std::size_t>(Op::kCount)>;
static_assert(rows_consistent(CoreOps{}), "a reduction's R and L rows must name each other");

/// The core ops of one kind, in code order (visit_op_of_kind dispatches
/// over them).
struct OpList {
  Op ops[static_cast<std::size_t>(Op::kCount)];  ///< the ops
  std::size_t count;                             ///< how many
};
template <OpKind Kind, std::size_t... I>
constexpr OpList ops_of_kind(std::index_sequence<I...> /*ops*/) noexcept {
  OpList list{};
  constexpr OpKind kKinds[] = {OpDef<static_cast<Op>(I)>::kKind...};
  for (std::size_t i = 0U; i < sizeof...(I); ++i) {
    if (kKinds[i] == Kind) {
      list.ops[list.count] = static_cast<Op>(i);
      ++list.count;
    }
  }
  return list;
}
template <OpKind Kind>
constexpr OpList kCoreOpsOfKind = ops_of_kind<Kind>(CoreOps{});
template <OpKind Kind, class F, std::size_t... J>
BURTORCH_ALWAYS_INLINE inline void visit_op_of_kind(Op op, F&& f, std::index_sequence<J...> /*ops*/) noexcept {
  const auto code = static_cast<std::uint32_t>(op);
  const bool found = (((code == static_cast<std::uint32_t>(kCoreOpsOfKind<Kind>.ops[J]))
                           ? (f(OpTag<kCoreOpsOfKind<Kind>.ops[J]>{}), true)
                           : false) ||
                      ...);
  static_cast<void>(found);
}
}  // namespace detail

/// Calls f(OpTag<op>{}) for the core op's row (nothing for an op family's
/// code): f is a generic lambda whose body picks what it needs with
/// `if constexpr` on the tag's Def::kKind.
template <class F>
BURTORCH_ALWAYS_INLINE inline void visit_op(Op op, F&& f) noexcept {
  detail::visit_op_from(op, static_cast<F&&>(f), detail::CoreOps{});
}
/// visit_op() over the core ops of one kind only (nothing for any other
/// op): a smaller jump table where only that kind can occur.
template <OpKind Kind, class F>
BURTORCH_ALWAYS_INLINE inline void visit_op_of_kind(Op op, F&& f) noexcept {
  detail::visit_op_of_kind<Kind>(op, static_cast<F&&>(f),
                                 std::make_index_sequence<detail::kCoreOpsOfKind<Kind>.count>{});
}
/// How a core op stores its operands (kSource for any other code: an op
/// family's kind is its family's, tools/inspect.hpp's node_kind).
constexpr OpKind op_kind(Op op) noexcept { return detail::kind_of(op, detail::CoreOps{}); }
/// A core op's name ("?" for any other code); R and L variants share one.
constexpr const char* op_name(Op op) noexcept { return detail::name_of(op, detail::CoreOps{}); }
/// The list variant of a view reduction, the view variant of a list
/// reduction; any other op itself.
constexpr Op op_pair(Op op) noexcept { return detail::pair_of(op, detail::CoreOps{}); }

}  // namespace burtorch

#endif  // BURTORCH_CORE_OP_WIDE_HPP
