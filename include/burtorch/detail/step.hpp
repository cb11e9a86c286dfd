// SPDX-License-Identifier: Apache-2.0
/// @file
/// Internal (included by tape.hpp): one node's backward step, taken from its
/// op's row (op.hpp), and the backward of the ops linked on use, which the
/// recorders of those ops hand to the tape (see kFirstLinkedOnUse).
#ifndef BURTORCH_DETAIL_STEP_HPP
#define BURTORCH_DETAIL_STEP_HPP

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "burtorch/config.hpp"
#include "burtorch/index.hpp"
#include "burtorch/detail/math.hpp"
#include "burtorch/op.hpp"
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
  if constexpr (D::kKind == OpKind::kRangeReduce) {
    D::backward(s.v, s.g, range_operand(a), b, g, s.v[i]);
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
/// True if row D (a descriptor op) has a value() for Tape::replay.
template <class D, class = void>
struct ValuedOf {
  static constexpr bool value = false;
};
template <class D> struct ValuedOf<D, std::void_t<decltype(&D::template value<float>)>> {
  static constexpr bool value = true;
};

/// A folded constant as the node's second operand field keeps it for
/// Tape::replay: its float bits, if T is float, or double and c is a float
/// exactly (1, 0.5, 1e-3f, ...); kNoIndex (not kept: the node cannot be
/// replayed) otherwise, and for the one float whose bits are kNoIndex.
template <class T>
inline Index pack_constant(T c) noexcept {
  Index bits = kNoIndex;
  if constexpr (std::is_same<T, float>::value) {
    std::memcpy(&bits, &c, sizeof(bits));  // BT-DEV-010
  } else if constexpr (std::is_same<T, double>::value) {
    // Kept if converting to float and back gives the same bits (no
    // rounding; -0 stays -0; a NaN's payload may not survive: not kept).
    const float f = static_cast<float>(c);
    const double back = static_cast<double>(f);
    std::uint64_t wide = 0U;
    std::uint64_t round_trip = 0U;
    std::memcpy(&wide, &c, sizeof(wide));  // BT-DEV-010
    std::memcpy(&round_trip, &back, sizeof(round_trip));  // BT-DEV-010
    if (wide == round_trip) {
      std::memcpy(&bits, &f, sizeof(bits));  // BT-DEV-010
    }
  } else {
    static_cast<void>(c);  // lane types: not kept
  }
  return bits;
}
/// The constant pack_constant kept (b != kNoIndex).
template <class T>
inline T unpack_constant(Index bits) noexcept {
  float f = 0.0F;
  std::memcpy(&f, &bits, sizeof(f));  // BT-DEV-010
  return static_cast<T>(f);
}

/// The value of node i of op D from its operands (what its recorder
/// stored): Tape::replay's forward step. Leaves keep their value.
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
  } else if constexpr (D::kKind == OpKind::kRangeReduce) {
    return D::forward(v, range_operand(a), b);
  } else if constexpr (D::kKind == OpKind::kListReduce) {
    return D::forward(v, list_operand(&slots[a]), b);
  } else if constexpr ((D::kKind == OpKind::kDescriptor) && ValuedOf<D>::value) {
    return D::value(v, slots, i, a, b);
  } else {
    return v[i];  // a source (or a descriptor op Tape::replayable refuses)
  }
}

/// True if every node of op D can be re-evaluated by Tape::replay (a
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
  } else if constexpr ((D::kKind == OpKind::kRangeReduce) || (D::kKind == OpKind::kListReduce)) {
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

/// Tape::replay's forward step of node i (op D, operands a, b): its value;
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



/// The ops linked on use of family F (linked_family): their backward step
/// (the backward of a node whose op is linked on use and of family F;
/// nothing for another op). Its address is what the recorders of those ops
/// give the tape: this function, and with it the backward code of the
/// family's rows, is linked into a program only if the program records one
/// of them. Returns how many nodes below i it swept too (step). (A class
/// template of one argument and a member template of one: one argument per
/// template-id, which MISRA's comma rule asks of cppcheck's reading.)
template <std::size_t F>
struct LinkedFamily {
  template <class T>
  static Index backward(const Arrays<T>& s, Op op, Index i, Index a, Index b, T g, Index lowest) noexcept {
    Index swept = 0U;
    visit_linked_op(op, [&](auto tag) noexcept {
      if constexpr (linked_family(decltype(tag)::kOp) == F) {
        swept = step<typename decltype(tag)::Def>(s, i, a, b, g, lowest);
      }
    });
    return swept;
  }
};

/// The type of LinkedFamily<F>::backward<T>.
template <class T>
using LinkedBackward = Index (*)(const Arrays<T>& s, Op op, Index i, Index a, Index b, T g, Index lowest) noexcept;

}  // namespace detail
}  // namespace burtorch

#endif  // BURTORCH_DETAIL_STEP_HPP
