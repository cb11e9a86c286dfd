// SPDX-License-Identifier: Apache-2.0
/// @file
/// Internal: one node's step, taken from its op's row (core/op.hpp, core/op_wide.hpp,
/// or an op family's): its backward (the sweep, core/detail/sweep.hpp, and the
/// families' dispatch, ext/extension.hpp) and its forward again (replay).
#ifndef BURTORCH_CORE_DETAIL_STEP_HPP
#define BURTORCH_CORE_DETAIL_STEP_HPP

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "burtorch/config.hpp"
#include "burtorch/index.hpp"
#include "burtorch/core/detail/math.hpp"
#include "burtorch/core/op.hpp"
#include "burtorch/core/op_wide.hpp"
#include "burtorch/core/record.hpp"
#include "burtorch/scalar.hpp"

namespace burtorch {
namespace detail {

/// The step of one elementwise node (unary, binary, stored constant): its
/// row's backward, given the operands' values, the node's value `out` and
/// its gradient g.
template <class D, class T>
BURTORCH_ALWAYS_INLINE inline void elementwise_step(const T* v, T* gr, const Index* slots, Index i, Index a, Index b,
                                                    T g) noexcept {
  if constexpr (D::kKind == OpKind::kUnary) {
    D::backward(g, v[a], v[i], gr[a]);
  } else if constexpr (D::kKind == OpKind::kBinary) {
    const T x = v[a];
    const T y = v[b];
    D::backward(g, x, y, v[i], gr[a], gr[b]);
  } else {
    static_assert(D::kKind == OpKind::kConstant, "an elementwise op is unary, binary or has a stored constant");
    T c = T(0);
    std::memcpy(&c, &slots[b], sizeof(T));  // BT-DEV-010
    D::backward(g, v[a], c, v[i], gr[a]);
  }
}

/// The step of one reduction node: its row's loop over a run or a list.
template <class D, class T>
inline void reduce_step(const Arrays<T>& s, Index i, Index a, Index b, T g) noexcept {
  if constexpr (D::kKind == OpKind::kViewReduce) {
    D::backward(s.v, s.g, view_operand(a), b, g, s.v[i]);
  } else {
    D::backward(s.v, s.g, list_operand(&s.slots[a]), b, g, s.v[i]);
  }
}

/// True if row D folds a constant into its value (OpDef::kFolded).
template <class D, class = void>
struct FoldedOf {
  static constexpr bool value = false;
};
template <class D> struct FoldedOf<D, std::void_t<decltype(D::kFolded)>> {
  static constexpr bool value = D::kFolded;
};
/// True if row D (a descriptor op) has a value() for replay.
template <class D, class = void>
struct ValuedOf {
  static constexpr bool value = false;
};
template <class D> struct ValuedOf<D, std::void_t<decltype(&D::template value<float>)>> {
  static constexpr bool value = true;
};

/// The value of node i of op D from its operands (what its recorder
/// stored): replay's forward step. Leaves keep their value.
template <class D, class T>
BURTORCH_ALWAYS_INLINE inline T value_of(const T* v, const Index* slots, Index i, Index a, Index b) noexcept {
  if constexpr (D::kKind == OpKind::kUnary) {
    if constexpr (FoldedOf<D>::value) {
      return D::forward(v[a], unpack_constant<T>(b));
    } else {
      return D::forward(v[a]);
    }
  } else if constexpr (D::kKind == OpKind::kBinary) {
    return D::forward(v[a], v[b]);
  } else if constexpr (D::kKind == OpKind::kConstant) {
    T c = T(0);
    std::memcpy(&c, &slots[b], sizeof(T));  // BT-DEV-010
    return D::forward(v[a], c);
  } else if constexpr (D::kKind == OpKind::kViewReduce) {
    return D::forward(v, view_operand(a), b);
  } else if constexpr (D::kKind == OpKind::kListReduce) {
    return D::forward(v, list_operand(&slots[a]), b);
  } else if constexpr ((D::kKind == OpKind::kDescriptor) && ValuedOf<D>::value) {
    return D::value(v, slots, i, a, b);
  } else {
    return v[i];  // a source (or a descriptor op replayable refuses)
  }
}

/// True if every node of op D can be re-evaluated by replay (a
/// folded constant also needs to have been kept: pack_constant).
template <class D>
constexpr bool replayable() noexcept {
  return (D::kKind != OpKind::kDescriptor) || ValuedOf<D>::value;
}

/// True if row D is a row of a matrix-vector product (OpDef::kRows).
template <class D, class = void>
struct RowsOf {
  static constexpr bool value = false;
};
template <class D> struct RowsOf<D, std::void_t<decltype(D::kRows)>> {
  static constexpr bool value = D::kRows;
};

/// The rows of a matrix-vector product (RowsOf), swept as one block: row b
/// at node i (gradient g), then rows b - 1, b - 2, ... at nodes i - 1, i -
/// 2, ... (a matvec appends its rows 0 .. rows-1 as consecutive nodes that
/// share descriptor a), down to row 0 or node `lowest`, each skipped if its
/// gradient is zero: the order and the bits of the sweep visiting them one
/// by one, one dispatch per block. Returns how many nodes below i it swept.
template <class D, class T>
inline Index rows_step(const Arrays<T>& s, Index i, Index a, Index b, T g, Index lowest) noexcept {
  const Index below = i - lowest;  // the sweep never goes below lowest
  const Index more = (b < below) ? b : below;
#if defined(__OPTIMIZE_SIZE__)
  // -Os: one call site for every row keeps D::backward's code once (row
  // b's gradient g is not zero: the sweep tested it).
  T gk = g;
  for (Index k = 0U; k <= more; ++k) {
    gk = (k == 0U) ? gk : s.g[i - k];
    if (!ScalarOps<T>::is_zero(gk)) {  // BT-DEV-004: exact zero test, not a tolerance
      D::backward(s, i - k, a, b - k, gk);
    }
  }
#else
  D::backward(s, i, a, b, g);
  for (Index k = 1U; k <= more; ++k) {
    const T gk = s.g[i - k];
    if (!ScalarOps<T>::is_zero(gk)) {  // BT-DEV-004: exact zero test, not a tolerance
      D::backward(s, i - k, a, b - k, gk);
    }
  }
#endif
  return more;
}

/// The step of node i of any kind but a leaf, from its op's row. Returns
/// how many nodes below i it swept too (the rows of a block, rows_step).
template <class D, class T>
inline Index step(const Arrays<T>& s, Index i, Index a, Index b, T g, Index lowest) noexcept {
  Index swept = 0U;
  if constexpr ((D::kKind == OpKind::kUnary) || (D::kKind == OpKind::kBinary) || (D::kKind == OpKind::kConstant)) {
    elementwise_step<D>(s.v, s.g, s.slots, i, a, b, g);
  } else if constexpr ((D::kKind == OpKind::kViewReduce) || (D::kKind == OpKind::kListReduce)) {
    reduce_step<D>(s, i, a, b, g);
  } else if constexpr (D::kKind == OpKind::kDescriptor) {
    if constexpr (RowsOf<D>::value) {
      swept = rows_step<D>(s, i, a, b, g, lowest);
    } else {
      D::backward(s, i, a, b, g);
    }
  } else {
    // a leaf or an input: nothing to propagate
  }
  return swept;
}

/// The backward of core wide op K (Recorder<T>::enable_wide registers it;
/// the sweep calls it for K's nodes): a reduction's R or L row, chosen by
/// the node's op; K's row otherwise. Returns how many nodes below i it
/// swept too (a layer's rows).
template <Op K, class T>
Index wide_backward(const Arrays<T>& s, Op op, Index i, Index a, Index b, T g, Index lowest) noexcept {
  using D = OpDef<K>;
  Index swept = 0U;
  if constexpr (D::kKind == OpKind::kViewReduce) {
    if (op == K) {
      reduce_step<D>(s, i, a, b, g);
    } else {
      reduce_step<OpDef<D::kPair>>(s, i, a, b, g);
    }
  } else {
    static_assert(D::kKind == OpKind::kDescriptor, "a core wide op: a view reduction or a descriptor op");
    static_cast<void>(op);
    swept = step<D>(s, i, a, b, g, lowest);
  }
  return swept;
}

/// replay's forward step of node i (op D, operands a, b): its value;
/// for the rows of a matrix-vector product (RowsOf), the rows after it too,
/// as long as they are the same op, share its descriptor and come before
/// `end` (a matvec's rows are consecutive nodes b, b + 1, ...). Returns the
/// nodes evaluated (at least 1). `links` and `base`: the tape's operand
/// fields, indexed from the parameter region's end.
template <class D, class T>
inline Index forward_step(const Forward<T>& f, const Index* slots, Op op, Index i, Index a, Index b) noexcept {
  T* const v = f.v;
  Index done = 1U;
  v[i] = value_of<D>(v, slots, i, a, b);
  if constexpr ((D::kKind == OpKind::kDescriptor) && RowsOf<D>::value) {
    // The next row: node i + done, the same op, operand fields (a, b + done).
    while (((i + done) < f.end) && (f.ops[(i + done) - f.base] == op) &&
           (f.links[(i + done) - f.base] ==
            (static_cast<std::uint64_t>(a) | (static_cast<std::uint64_t>(b + done) << 32U)))) {
      v[i + done] = value_of<D>(v, slots, i + done, a, b + done);
      ++done;
    }
  } else {
    static_cast<void>(op);
  }
  return done;
}

}  // namespace detail
}  // namespace burtorch

#endif  // BURTORCH_CORE_DETAIL_STEP_HPP
