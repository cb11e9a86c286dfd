// SPDX-License-Identifier: Apache-2.0
/// @file
/// The backward sweep (a member of Tape<T>, out of line; lib/tape.cpp
/// compiles it). One loop from the root down to the oldest interior node;
/// each node's step is its op's row, chosen through one jump table: the
/// elementwise rows inline, the wide rows out of line (backward_wide), and
/// an op family's rows through the table its recorder registered.
#ifndef BURTORCH_CORE_DETAIL_SWEEP_HPP
#define BURTORCH_CORE_DETAIL_SWEEP_HPP

#include "burtorch/core/detail/step.hpp"
#include "burtorch/core/op.hpp"
#include "burtorch/core/op_wide.hpp"
#include "burtorch/scalar.hpp"
#include "burtorch/core/tape.hpp"

namespace burtorch {

// The nodes whose backward is a loop (reductions, inner products, layer
// rows) and those of the op families; out of line, so the sweep over simple
// nodes keeps its variables in registers. Each through the backward its
// recorder registered: a core wide op's (Recorder::enable_wide) or its
// family's (Recorder::enable). The sweep names none of them, so a program
// links the backward of the ops it records, and no other's.
template <class T>
Index Tape<T>::backward_wide(Op op, Index i, Index a, Index b, T g, Index lowest) noexcept {
  const detail::Arrays<T> s{values_, grads_, args_};
  Index swept = 0U;
  bool found = false;
  if (static_cast<std::uint32_t>(op) < static_cast<std::uint32_t>(Op::kCount)) {
    const detail::FamilyBackward<T> wide = wide_[detail::wide_entry(op)];
    found = wide != nullptr;
    swept = found ? wide(s, op, i, a, b, g, lowest) : 0U;  // BT-DEV-005
  } else {
    // Each registered family's backward, in order, until one has op (a
    // family does nothing for a code not its own).
    for (std::size_t e = 0U; (e < kTapeFamilies) && !found && (families_[e] != nullptr); ++e) {
      const Index rows = families_[e](s, op, i, a, b, g, lowest);  // BT-DEV-005
      found = rows != kNoIndex;
      swept = found ? rows : swept;
    }
  }
  if (BURTORCH_UNLIKELY(!found)) {
    // A wide node no recorder registered a backward for (appended with
    // Recorder::push, not through its recorder): refused, not skipped.
    static_cast<void>(fail(Status::kInvalidArgument));
  }
  return swept;
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
  // (Nodes of the parameter region are leaves, so lowest >= param_region_;
  // nodes below stop_gradient()'s point are not swept.)
  const Index lowest = (leading_leaves_ > floor_) ? leading_leaves_ : floor_;
  const Index swept = swept_end_;
  if (BURTORCH_UNLIKELY(swept > lowest)) {
    clear_interior_grads(lowest, (swept < r) ? swept : r);
  }
  swept_end_ = (swept > r) ? swept : (r + 1U);
  if (op_at(r) == Op::kLeaf) {
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
  // Counted in metadata indices m = i - base (the arrays of operands and op
  // codes start at the parameter region's end).
  Index m = (r + 1U) - base;
  const Index m_lowest = lowest - base;
  while (m > m_lowest) {
    --m;
    const Index i = m + base;
    const T g = gr[i];
    // A node with a zero gradient adds nothing: skipping it keeps nodes the
    // root does not reach (a logged metric, a side computation) from adding
    // 0 * (an infinite local derivative) = NaN to their operands, and skips
    // work (a ReLU that is off, a row whose output gradient is zero).
    if (ScalarOps<T>::is_zero(g)) {  // BT-DEV-004: exact zero test, not a tolerance
      continue;
    }
    const std::uint64_t link = links[m];
    const Index a = first_of(link);
    const Index b = second_of(link);
    const Op op = ops[m];
    // The core elementwise ops inline (one jump table, each case its row's
    // backward in place), the wide ops and the families' ops out of line. A new core elementwise op needs its line here:
    // tests/core/test_ops.cpp (every_elementwise_op) checks each elementwise
    // op's gradient, and that it knows every elementwise row.
    // clang-format off
    switch (op) {
      case Op::kLeaf:
      case Op::kInput:
        break;
      case Op::kAdd: detail::elementwise_step<OpDef<Op::kAdd>>(v, gr, args_, i, a, b, g); break;
      case Op::kSub: detail::elementwise_step<OpDef<Op::kSub>>(v, gr, args_, i, a, b, g); break;
      case Op::kMul: detail::elementwise_step<OpDef<Op::kMul>>(v, gr, args_, i, a, b, g); break;
      case Op::kDiv: detail::elementwise_step<OpDef<Op::kDiv>>(v, gr, args_, i, a, b, g); break;
      case Op::kMean2: detail::elementwise_step<OpDef<Op::kMean2>>(v, gr, args_, i, a, b, g); break;
      case Op::kAddSquares2: detail::elementwise_step<OpDef<Op::kAddSquares2>>(v, gr, args_, i, a, b, g); break;
      case Op::kMeanSquares2: detail::elementwise_step<OpDef<Op::kMeanSquares2>>(v, gr, args_, i, a, b, g); break;
      case Op::kNegMean2: detail::elementwise_step<OpDef<Op::kNegMean2>>(v, gr, args_, i, a, b, g); break;
      case Op::kNeg: detail::elementwise_step<OpDef<Op::kNeg>>(v, gr, args_, i, a, b, g); break;
      case Op::kAddConst: detail::elementwise_step<OpDef<Op::kAddConst>>(v, gr, args_, i, a, b, g); break;
      case Op::kConstSub: detail::elementwise_step<OpDef<Op::kConstSub>>(v, gr, args_, i, a, b, g); break;
      case Op::kConstDiv: detail::elementwise_step<OpDef<Op::kConstDiv>>(v, gr, args_, i, a, b, g); break;
      case Op::kRelu: detail::elementwise_step<OpDef<Op::kRelu>>(v, gr, args_, i, a, b, g); break;
      case Op::kTanh: detail::elementwise_step<OpDef<Op::kTanh>>(v, gr, args_, i, a, b, g); break;
      case Op::kExp: detail::elementwise_step<OpDef<Op::kExp>>(v, gr, args_, i, a, b, g); break;
      case Op::kLog: detail::elementwise_step<OpDef<Op::kLog>>(v, gr, args_, i, a, b, g); break;
      case Op::kNegLog: detail::elementwise_step<OpDef<Op::kNegLog>>(v, gr, args_, i, a, b, g); break;
      case Op::kSigmoid: detail::elementwise_step<OpDef<Op::kSigmoid>>(v, gr, args_, i, a, b, g); break;
      case Op::kInv: detail::elementwise_step<OpDef<Op::kInv>>(v, gr, args_, i, a, b, g); break;
      case Op::kSqr: detail::elementwise_step<OpDef<Op::kSqr>>(v, gr, args_, i, a, b, g); break;
      case Op::kPow3: detail::elementwise_step<OpDef<Op::kPow3>>(v, gr, args_, i, a, b, g); break;
      case Op::kSqrt: detail::elementwise_step<OpDef<Op::kSqrt>>(v, gr, args_, i, a, b, g); break;
      case Op::kInvSqrt: detail::elementwise_step<OpDef<Op::kInvSqrt>>(v, gr, args_, i, a, b, g); break;
      case Op::kMulConst: detail::elementwise_step<OpDef<Op::kMulConst>>(v, gr, args_, i, a, b, g); break;
      case Op::kDivConst: detail::elementwise_step<OpDef<Op::kDivConst>>(v, gr, args_, i, a, b, g); break;
      default: {
        // A core wide op through its registered backward, called from here
        // (one call, not two); a family's op, or a wide op with nothing
        // registered, through backward_wide. A matvec's rows are swept as
        // one block: i moves past the rows below it swept too.
        const auto code = static_cast<std::uint32_t>(op);
        const bool core = (code >= static_cast<std::uint32_t>(Op::kSumR)) && (code < static_cast<std::uint32_t>(Op::kCount));
        const detail::FamilyBackward<T> wide = core ? wide_[detail::wide_entry(op)] : nullptr;
        if (BURTORCH_UNLIKELY(wide == nullptr)) {
          m -= backward_wide(op, i, a, b, g, lowest);
        } else {
          const detail::Arrays<T> s{v, gr, args_};
          m -= wide(s, op, i, a, b, g, lowest);  // BT-DEV-005
        }
        break;
      }
    }
    // clang-format on
  }
  return status_;  // kInvalidArgument if a wide node had no backward (backward_wide)
}

}  // namespace burtorch

#endif  // BURTORCH_CORE_DETAIL_SWEEP_HPP
