// SPDX-License-Identifier: Apache-2.0
/// @file
/// Losses over a View of predictions (or logits) and the caller's targets,
/// with PyTorch's default reduction (the mean over the elements).
///
/// Softmax cross-entropy with a target class (cross_entropy; on a tape of
/// lanes, a target per lane) and the mean squared error (mse) read the view
/// in place with one reduction; each states what it refuses
/// (kInvalidArgument on the tape) and how many nodes it records. A call
/// that fails (a view not recorded, a tape too small) leaves nothing
/// recorded (all_or_nothing).
///
/// Binary cross-entropy with logits, Huber, L1: each records one element
/// term per prediction, read in place, and one mean node (burtorch::reduce
/// over a view), and returns the scalar loss.
///
/// A call of these three is recorded whole or not at all: before recording
/// anything it checks its arguments and the room on the tape. Null targets,
/// an empty view (a failed layer's kNoView) or delta <= 0 are
/// kInvalidArgument, a view whose nodes are not recorded kInvalidHandle, too
/// little room kCapacityExceeded; the error goes to the tape (Tape::report)
/// and the result is an invalid value. On a tape whose status is already an
/// error nothing is recorded either (the first error stays).
///
/// Each of the three states, as constexpr functions, how many nodes and
/// argument slots one call records for n elements (see nn::make_plan). The
/// scalar type comes from the tape alone: targets may be given as nullptr
/// (an error), delta as a literal of another floating type.
#ifndef BURTORCH_NN_LOSSES_HPP
#define BURTORCH_NN_LOSSES_HPP

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "burtorch/ext/functions.hpp"
#include "burtorch/nn/common.hpp"
#include "burtorch/scalar.hpp"
#include "burtorch/core/record.hpp"
#include "burtorch/core/ops.hpp"
#include "burtorch/core/tape.hpp"
#include "burtorch/core/views.hpp"

namespace burtorch {
namespace nn {

/// Softmax cross-entropy of logits with a target class, max-shifted:
/// log(sum(exp(z))) - z[target]. Two nodes, no slots.
template <class T>
inline Value<T> cross_entropy(Tape<T>& tape, View logits, Index target) noexcept {
  if ((target >= logits.count) || (logits.count > kMaxGather)) {
    static_cast<void>(tape.report(Status::kInvalidArgument));
    return Value<T>(&tape, kNoIndex);
  }
  // Read in place: no array of handles on the stack. Whole or not at all.
  return all_or_nothing(tape, Value<T>(&tape, kNoIndex), [&]() noexcept {
    return burtorch::reduce<Op::kLogSumExpR>(tape, burtorch::View{logits.first, logits.count}) -
           node(tape, logits.first + target);
  });
}
/// Nodes cross_entropy() records.
constexpr std::size_t kCrossEntropyNodes = 2U;

/// The same on a tape of N lanes, a target per lane (targets[0..N)): the
/// target's logit is picked per lane (pick, lanes/ops.hpp, found by
/// argument-dependent lookup: this header does not include the lanes
/// extension). Three nodes, pick_slots(N) slots. Only for a tape whose
/// values are lanes (ScalarOps<T>::kSingleLane false).
template <class T, std::enable_if_t<!ScalarOps<T>::kSingleLane, int> = 0>
inline Value<T> cross_entropy(Tape<T>& tape, View logits, const Index* targets) noexcept {
  if ((targets == nullptr) || (logits.count > kMaxGather)) {
    static_cast<void>(tape.report(Status::kInvalidArgument));
    return Value<T>(&tape, kNoIndex);
  }
  return all_or_nothing(tape, Value<T>(&tape, kNoIndex), [&]() noexcept {
    return burtorch::reduce<Op::kLogSumExpR>(tape, burtorch::View{logits.first, logits.count}) -
           pick(tape, logits, targets);
  });
}
/// Nodes the lane cross_entropy() records.
constexpr std::size_t kLaneCrossEntropyNodes = 3U;

/// Mean squared error mean((pred - target)^2) (torch.nn.MSELoss()).
/// pred.count + 1 nodes, no slots. target[0 .. pred.count) is read; the
/// two forms below say how many targets there are, which is what a static
/// analyser needs to see that nothing past them is read (the number of
/// outputs a layer returns is known only when it runs).
template <class T>
inline Value<T> mse(Tape<T>& tape, View pred, const T* target) noexcept {
  if ((target == nullptr) || (pred.count == 0U) || (pred.count > kMaxGather)) {
    static_cast<void>(tape.report(Status::kInvalidArgument));
    return Value<T>(&tape, kNoIndex);
  }
  return all_or_nothing(tape, Value<T>(&tape, kNoIndex), [&]() noexcept {
    const View diff = burtorch::record_view(tape, pred.count, [&](Index i) noexcept { return node(tape, pred.first + i) - target[i]; });
    return (diff.count != 0U) ? burtorch::reduce<Op::kMeanSqR>(tape, burtorch::View{diff.first, diff.count}) : Value<T>(&tape, kNoIndex);
  });
}
/// mse against target[0 .. count): kInvalidArgument unless count is
/// pred.count. The same nodes as mse(tape, pred, target).
template <class T>
inline Value<T> mse(Tape<T>& tape, View pred, const T* target, std::size_t count) noexcept {
  if (count != pred.count) {
    static_cast<void>(tape.report(Status::kInvalidArgument));
    return Value<T>(&tape, kNoIndex);
  }
  return mse(tape, pred, target);
}
/// mse of a model's one output against one target value (the target's
/// type need not be T: a literal converts): kInvalidArgument unless
/// pred.count is 1. Two nodes, as mse(tape, pred, &target).
template <class T>
inline Value<T> mse(Tape<T>& tape, View pred, burtorch::detail::PlainT<T> target) noexcept {
  return mse(tape, pred, &target, 1U);
}

/// Nodes binary_cross_entropy_with_logits() records for n elements: one
/// bce_with_logits node per element and the mean.
constexpr std::size_t binary_cross_entropy_with_logits_nodes(std::size_t n) noexcept { return n + 1U; }
/// Argument slots it records: each element's target (a constant of type T).
template <class T>
constexpr std::size_t binary_cross_entropy_with_logits_slots(std::size_t n) noexcept {
  return n * constant_slots<T>();
}
/// Nodes huber() records for n elements: the residuals, their Huber terms
/// and the mean.
constexpr std::size_t huber_nodes(std::size_t n) noexcept { return (2U * n) + 1U; }
/// Argument slots it records: delta, stored by each Huber term.
template <class T>
constexpr std::size_t huber_slots(std::size_t n) noexcept {
  return n * constant_slots<T>();
}
/// Nodes l1() records for n elements: the residuals, their absolute values
/// and the mean.
constexpr std::size_t l1_nodes(std::size_t n) noexcept { return (2U * n) + 1U; }
/// Argument slots it records: none.
constexpr std::size_t l1_slots(std::size_t /*n*/) noexcept { return 0U; }

/// True if a loss over `x` with these targets may record `nodes` nodes and
/// `slots` slots on `tape`; otherwise reports why (see the file comment)
/// and records nothing.
template <class T>
inline bool loss_inputs_ok(Tape<T>& tape, View x, const void* targets, std::uint64_t nodes,
                           std::uint64_t slots) noexcept {
  if (tape.status() != Status::kOk) {
    return false;
  }
  const std::size_t size = tape.size();
  if ((targets == nullptr) || (x.count == 0U) || (x.count >= kNoIndex)) {
    static_cast<void>(tape.report(Status::kInvalidArgument));
    return false;
  }
  if ((x.first >= size) || (x.count > (size - x.first))) {
    static_cast<void>(tape.report(Status::kInvalidHandle));
    return false;
  }
  // Nodes past the parameter region only (a loss records no leaves).
  const std::size_t room = (size >= tape.usage().params) ? (tape.usage().node_capacity - size) : 0U;
  if ((nodes > room) || (slots > (tape.usage().slot_capacity - tape.usage().slots))) {
    static_cast<void>(tape.report(Status::kCapacityExceeded));
    return false;
  }
  return true;
}

/// Mean binary cross-entropy of logits against targets[0..logits.count),
/// torch.nn.functional.binary_cross_entropy_with_logits(logits, targets)
/// (reduction 'mean'): mean of max(x, 0) - x y + log(1 + exp(-|x|)), which
/// never overflows; d/dx_i = (sigmoid(x_i) - y_i) / n. Targets are usually
/// in [0, 1] (soft labels allowed). Records
/// binary_cross_entropy_with_logits_nodes(n) nodes and _slots<T>(n) slots.
template <class T>
inline Value<T> binary_cross_entropy_with_logits(Tape<T>& tape, View logits,
                                                 const burtorch::detail::PlainT<T>* targets) noexcept {
  const std::uint64_t n = logits.count;
  if (!loss_inputs_ok(tape, logits, targets, n + 1U, n * constant_slots<T>())) {
    return Value<T>(&tape, kNoIndex);
  }
  const Index terms = static_cast<Index>(tape.size());
  for (Index i = 0U; i < logits.count; ++i) {
    static_cast<void>(burtorch::bce_with_logits(node(tape, logits.first + i), targets[i]));
  }
  return burtorch::reduce<Op::kMeanR>(tape, burtorch::View{terms, logits.count});
}

/// Mean Huber loss of predictions against targets[0..pred.count),
/// torch.nn.HuberLoss(delta=delta) (reduction 'mean'): per element, with
/// d = pred - target, 0.5 d^2 where |d| < delta, else delta (|d| - delta/2)
/// (the linear branch at |d| == delta, where both agree). delta must be
/// > 0 (PyTorch rejects the rest too). Records huber_nodes(n) nodes and
/// huber_slots<T>(n) slots.
template <class T>
inline Value<T> huber(Tape<T>& tape, View pred, const burtorch::detail::PlainT<T>* targets,
                      burtorch::detail::PlainT<T> delta = burtorch::detail::PlainT<T>(1)) noexcept {
  const std::uint64_t n = pred.count;
  if (!(delta > T(0))) {  // also NaN
    static_cast<void>(tape.report(Status::kInvalidArgument));  // the first error stays
    return Value<T>(&tape, kNoIndex);
  }
  if (!loss_inputs_ok(tape, pred, targets, (2U * n) + 1U, n * constant_slots<T>())) {
    return Value<T>(&tape, kNoIndex);
  }
  const Index residuals = static_cast<Index>(tape.size());
  for (Index i = 0U; i < pred.count; ++i) {
    static_cast<void>(node(tape, pred.first + i) - targets[i]);
  }
  const Index terms = static_cast<Index>(tape.size());
  for (Index i = 0U; i < pred.count; ++i) {
    static_cast<void>(burtorch::huber(node(tape, residuals + i), delta));
  }
  return burtorch::reduce<Op::kMeanR>(tape, burtorch::View{terms, pred.count});
}

/// Mean absolute error of predictions against targets[0..pred.count),
/// torch.nn.L1Loss() (reduction 'mean'): mean |pred - target|; its
/// derivative is sign(pred - target) / n, 0 where they are equal (as
/// PyTorch). Records l1_nodes(n) nodes and no slots.
template <class T>
inline Value<T> l1(Tape<T>& tape, View pred, const burtorch::detail::PlainT<T>* targets) noexcept {
  const std::uint64_t n = pred.count;
  if (!loss_inputs_ok(tape, pred, targets, (2U * n) + 1U, 0U)) {
    return Value<T>(&tape, kNoIndex);
  }
  const Index residuals = static_cast<Index>(tape.size());
  for (Index i = 0U; i < pred.count; ++i) {
    static_cast<void>(node(tape, pred.first + i) - targets[i]);
  }
  const Index terms = static_cast<Index>(tape.size());
  for (Index i = 0U; i < pred.count; ++i) {
    static_cast<void>(burtorch::abs(node(tape, residuals + i)));
  }
  return burtorch::reduce<Op::kMeanR>(tape, burtorch::View{terms, pred.count});
}

/// Makes a cross-entropy node (cross_entropy: a log-sum-exp over a view of
/// logits minus one of them) pick logit `target` of that view, for the
/// next replay (tools/replay.hpp): the target of a sample is data of the graph,
/// not its structure. kInvalidArgument for another node or a target past
/// the view, kInvalidHandle for a handle not recorded on the tape, the
/// tape's status if it holds an error (nothing changed; the status is not
/// changed).
template <class T>
inline Status set_target(Tape<T>& tape, Value<T> loss, Index target) noexcept {
  using R = Recorder<T>;
  if (tape.status() != Status::kOk) {
    return tape.status();
  }
  if (!R::owns(tape, loss)) {
    return Status::kInvalidHandle;
  }
  // loss = lse - z[t]: a kSub whose first operand is a log-sum-exp over a
  // view that holds its second operand.
  const Index i = loss.index();
  if (R::op(tape, i) != Op::kSub) {
    return Status::kInvalidArgument;
  }
  const Operands sub = R::operands(tape, i);
  const Index lse = sub.a;
  if (R::op(tape, lse) != Op::kLogSumExpR) {
    return Status::kInvalidArgument;
  }
  const Operands logits = R::operands(tape, lse);
  const Index first = logits.a;
  const Index count = logits.b;
  const Index picked = sub.b;
  if ((picked < first) || ((picked - first) >= count) || (target >= count)) {
    return Status::kInvalidArgument;
  }
  R::relink(tape, i, lse, first + target);
  return Status::kOk;
}

}  // namespace nn

}  // namespace burtorch

#endif  // BURTORCH_NN_LOSSES_HPP
