// SPDX-License-Identifier: Apache-2.0
/// @file
/// Internal (included by tape_impl.hpp): the backward sweep. One loop from
/// the root down to the oldest interior node; each node's step is its op's
/// row (op.hpp), chosen through one jump table.
#ifndef BURTORCH_DETAIL_TAPE_BACKWARD_HPP
#define BURTORCH_DETAIL_TAPE_BACKWARD_HPP

#include <cstring>

#include "burtorch/op.hpp"
#include "burtorch/scalar.hpp"
#include "burtorch/tape.hpp"

namespace burtorch {

namespace detail {
/// The step of one reduction node: its row's loop over a run or a list.
template <class D, class T>
inline void reduce_step(const Arrays<T>& s, Index i, Index a, Index b, T g) noexcept {
  if constexpr (D::kKind == OpKind::kRangeReduce) {
    D::backward(s.v, s.g, RangeOperand{a}, b, g, s.v[i]);
  } else {
    D::backward(s.v, s.g, ListOperand{&s.slots[a]}, b, g, s.v[i]);
  }
}
}  // namespace detail

// The nodes whose backward is a loop: out of line, so the sweep over simple
// nodes keeps its variables in registers.
template <class T>
void Tape<T>::backward_wide(Op op, Index i, Index a, Index b, T g) noexcept {
  const detail::Arrays<T> s{values_, grads_, args_};
  visit_op(op, [&](auto tag) noexcept BURTORCH_ALWAYS_INLINE {
    using D = typename decltype(tag)::Def;
    if constexpr ((D::kKind == OpKind::kRangeReduce) || (D::kKind == OpKind::kListReduce)) {
      detail::reduce_step<D>(s, i, a, b, g);
    } else if constexpr (D::kKind == OpKind::kDescriptor) {
      D::backward(s, i, a, b, g);
    } else {
      // elementwise ops are swept inline by backward()
    }
  });
}

template <class T>
Status Tape<T>::backward(Value<T> root) noexcept {
  if (status_ != Status::kOk) {
    return status_;
  }
  if (root.tape() == nullptr) {
    return Status::kEmptyHandle;
  }
  if (root.tape() != this) {
    return Status::kForeignValue;
  }
  const Index r = root.index();
  if (r >= size_) {
    return Status::kInvalidHandle;
  }
  // Interior gradients are scratch for this sweep. Nodes recorded since the
  // last backward start at zero; older ones (a second backward over the same
  // graph, or nodes kept before a mark) are cleared here, so nothing is
  // counted twice. Leaves keep what they accumulated.
  // (Nodes of the parameter region are leaves, so lowest >= param_region_.)
  const Index lowest = (leading_leaves_ > param_region_) ? leading_leaves_ : param_region_;
  const Index swept = swept_end_;
  if (BURTORCH_UNLIKELY(swept > lowest)) {
    clear_interior_grads(lowest, (swept < r) ? swept : r);
  }
  swept_end_ = (swept > r) ? swept : (r + 1U);
  if ((r < param_region_) || (ops_[r - param_region_] == Op::kLeaf)) {
    grads_[r] += T(1);  // a leaf root: d(root)/d(root) = 1, accumulated like every leaf gradient
    return Status::kOk;
  }
  grads_[r] = T(1);

  T* const v = values_;
  T* const gr = grads_;
  // Metadata arrays start at the parameter region's end.
  const Index base = param_region_;
  const std::uint64_t* const links = links_;
  const Op* const ops = ops_;
  // One reverse sweep: when node i is reached, every node that uses it is
  // newer and has already added its share to grads_[i].
  for (Index i = r + 1U; i-- > lowest;) {
    const T g = gr[i];
    // A node with a zero gradient adds nothing: skipping it keeps nodes the
    // root does not reach (a logged metric, a side computation) from adding
    // 0 * (an infinite local derivative) = NaN to their operands, and skips
    // work (a ReLU that is off, a row whose output gradient is zero).
    if (ScalarOps<T>::is_zero(g)) {  // BT-DEV-004: exact zero test, not a tolerance
      continue;
    }
    const std::uint64_t link = links[i - base];
    const Index a = first_of(link);
    const Index b = second_of(link);
    const Op op = ops[i - base];
    const bool elementwise = visit_elementwise_op(op, [&](auto tag) noexcept BURTORCH_ALWAYS_INLINE {
      using D = typename decltype(tag)::Def;
      if constexpr (D::kKind == OpKind::kUnary) {
        D::backward(g, v[a], v[i], gr[a]);
      } else if constexpr (D::kKind == OpKind::kBinary) {
        const T x = v[a];
        const T y = v[b];
        D::backward(g, x, y, v[i], gr[a], gr[b]);
      } else {
        T c = T(0);
        std::memcpy(&c, &args_[b], sizeof(T));  // BT-DEV-010
        D::backward(g, v[a], c, v[i], gr[a]);
      }
    });
    if (!elementwise) {
      backward_wide(op, i, a, b, g);  // reductions, inner products, layer rows: loops of their own
    }
  }
  return Status::kOk;
}

}  // namespace burtorch

#endif  // BURTORCH_DETAIL_TAPE_BACKWARD_HPP
