// SPDX-License-Identifier: Apache-2.0
/// @file
/// Internal (included by tape.hpp): one node's backward step, taken from its
/// op's row (op.hpp), and the backward of the ops linked on use, which the
/// recorders of those ops hand to the tape (see kFirstLinkedOnUse).
#ifndef BURTORCH_DETAIL_STEP_HPP
#define BURTORCH_DETAIL_STEP_HPP

#include <cstring>

#include "burtorch/config.hpp"
#include "burtorch/index.hpp"
#include "burtorch/op.hpp"

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
    D::backward(s.v, s.g, RangeOperand{a}, b, g, s.v[i]);
  } else {
    D::backward(s.v, s.g, ListOperand{&s.slots[a]}, b, g, s.v[i]);
  }
}

/// The step of node i of any kind but a leaf, from its op's row.
template <class D, class T>
inline void step(const Arrays<T>& s, Index i, Index a, Index b, T g) noexcept {
  if constexpr ((D::kKind == OpKind::kUnary) || (D::kKind == OpKind::kBinary) || (D::kKind == OpKind::kConstant)) {
    elementwise_step<D>(s.v, s.g, s.slots, i, a, b, g);
  } else if constexpr ((D::kKind == OpKind::kRangeReduce) || (D::kKind == OpKind::kListReduce)) {
    reduce_step<D>(s, i, a, b, g);
  } else if constexpr (D::kKind == OpKind::kDescriptor) {
    D::backward(s, i, a, b, g);
  } else {
    // a leaf: nothing to propagate
  }
}

/// The backward step of a node whose op is linked on use (nothing for
/// another op). Its address is what the recorders of those ops give the
/// tape: this function, and with it the rows' backward code, is linked
/// into a program only if the program records one of them.
template <class T>
void linked_backward(const Arrays<T>& s, Op op, Index i, Index a, Index b, T g) noexcept {
  visit_linked_op(op, [&](auto tag) noexcept { step<typename decltype(tag)::Def>(s, i, a, b, g); });
}

/// The type of linked_backward<T>.
template <class T>
using LinkedBackward = void (*)(const Arrays<T>& s, Op op, Index i, Index a, Index b, T g) noexcept;

}  // namespace detail
}  // namespace burtorch

#endif  // BURTORCH_DETAIL_STEP_HPP
