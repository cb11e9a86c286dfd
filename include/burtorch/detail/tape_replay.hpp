// SPDX-License-Identifier: Apache-2.0
/// @file
/// Internal (included by tape_impl.hpp): record once, replay many. A graph
/// whose structure does not change between samples (the same ops on the
/// same operands; only leaf values, parameter values and cross-entropy
/// targets differ) is recorded once; replay() re-evaluates its nodes in
/// recording order with each op's own forward (the row of op.hpp, as the
/// recorder computed it) and runs the backward sweep. No operand checks, no
/// appends: the recording checked them, and replay() refuses a tape whose
/// structure changed since (nodes, slots, rewind generation).
#ifndef BURTORCH_DETAIL_TAPE_REPLAY_HPP
#define BURTORCH_DETAIL_TAPE_REPLAY_HPP

#include <cstdint>

#include "burtorch/detail/step.hpp"
#include "burtorch/op.hpp"
#include "burtorch/tape.hpp"

namespace burtorch {

template <class T>
bool Tape<T>::mark_valid(Mark m) const noexcept {
  return (m.tape == this) && (m.nodes <= size_) && (m.slots <= slots_used_) && (m.generation <= generation_) &&
         (generation_at(static_cast<std::size_t>(m.nodes) + m.slots) <= m.generation);
}

template <class T>
Replay Tape<T>::replayable(Mark from, Value<T> root) noexcept {
  Replay r;
  if (status_ != Status::kOk) {
    return r;
  }
  const Index at = root.index();
  if ((root.tape() != this) || !mark_valid(from) || (at >= size_) || (at < from.nodes)) {
    static_cast<void>(fail(Status::kInvalidArgument));
    return r;
  }
  // Every node after the mark must be one replay() can re-evaluate.
  for (Index i = (from.nodes > param_region_) ? from.nodes : param_region_; i < size_; ++i) {
    const Op k = ops_[i - param_region_];
    bool ok = true;
    visit_op(k, [&](auto tag) noexcept {
      using D = typename decltype(tag)::Def;
      ok = detail::replayable<D>();
      if constexpr (detail::FoldedOf<D>::value) {
        ok = second_of(links_[i - param_region_]) != kNoIndex;  // the constant was kept
      }
    });
    if (!ok) {
      static_cast<void>(fail(Status::kInvalidArgument));
      return r;
    }
  }
  r.first = from.nodes;
  r.end = size_;
  r.slots = slots_used_;
  r.root = at;
  r.tape = this;
  r.generation = generation_;
  return r;
}

template <class T>
Status Tape<T>::set(Value<T> source, T x) noexcept {
  if (status_ != Status::kOk) {
    return status_;
  }
  if (!owns(source)) {
    return Status::kInvalidHandle;
  }
  const Op k = op(source.index());
  if ((k != Op::kLeaf) && (k != Op::kInput)) {
    return Status::kInvalidArgument;
  }
  values_[source.index()] = x;
  return Status::kOk;
}

template <class T>
Status Tape<T>::set(View sources, const T* x) noexcept {
  if (status_ != Status::kOk) {
    return status_;
  }
  if ((x == nullptr) || !recorded(sources.first, sources.count)) {
    return (x == nullptr) ? Status::kInvalidArgument : Status::kInvalidHandle;
  }
  for (Index i = sources.first; i < (sources.first + sources.count); ++i) {
    const Op k = op(i);
    if ((k != Op::kLeaf) && (k != Op::kInput)) {
      return Status::kInvalidArgument;  // checked before anything is written
    }
  }
  for (Index i = 0U; i < sources.count; ++i) {
    values_[sources.first + i] = x[i];
  }
  return Status::kOk;
}

template <class T>
Status Tape<T>::set_target(Value<T> loss, Index target) noexcept {
  if (status_ != Status::kOk) {
    return status_;
  }
  if (!owns(loss)) {
    return Status::kInvalidHandle;
  }
  // loss = lse - z[t]: a kSub whose first operand is a log-sum-exp over a
  // run that holds its second operand.
  const Index i = loss.index();
  if (op(i) != Op::kSub) {
    return Status::kInvalidArgument;
  }
  const Index lse = arg_a(i);
  if (op(lse) != Op::kLogSumExpR) {
    return Status::kInvalidArgument;
  }
  const Index first = arg_a(lse);
  const Index count = arg_b(lse);
  const Index picked = arg_b(i);
  if ((picked < first) || ((picked - first) >= count) || (target >= count)) {
    return Status::kInvalidArgument;
  }
  links_[i - param_region_] = pack(lse, first + target);
  return Status::kOk;
}

template <class T>
Index Tape<T>::forward_wide(Op op, Index i, Index a, Index b, Index end) noexcept {
  // Every op's forward, the ops linked on use included: replay is itself
  // linked on use (only a program that replays carries this function), and
  // a program that replays re-evaluates whatever it recorded.
  const detail::Forward<T> f{values_, links_, ops_, param_region_, end};
  Index done = 1U;
  visit_op(op, [&](auto tag) noexcept {
    using D = typename decltype(tag)::Def;
    done = detail::forward_step<D>(f, args_, op, i, a, b);
  });
  return done;
}

template <class T>
bool Tape<T>::replay_values(const Replay& r) noexcept {
  if (status_ != Status::kOk) {
    return false;
  }
  // The structure replayable() took: the same tape, nothing recorded or
  // discarded since, no rewind or reset in between.
  if ((r.tape != this) || (r.generation != generation_) || (r.end != size_) || (r.slots != slots_used_) ||
      (r.first > r.end)) {
    static_cast<void>(fail(Status::kInvalidArgument));
    return false;
  }
  T* const v = values_;
  T* const gr = grads_;
  const Index base = param_region_;
  const std::uint64_t* const links = links_;
  const Op* const ops = ops_;
  // Nodes of the parameter region are leaves: nothing to evaluate there.
  const Index first = (r.first > base) ? r.first : base;
  // Every gradient of the recording starts at zero, as when recorded.
  for (Index i = r.first; i < r.end; ++i) {
    gr[i] = T(0);
  }
  Index i = first;
  while (i < r.end) {
    const std::uint64_t link = links[i - base];
    const Index a = first_of(link);
    const Index b = second_of(link);
    const Op k = ops[i - base];
    // The core elementwise ops inline (one jump table), the rest out of
    // line, as in backward().
    // clang-format off
    switch (k) {
      case Op::kLeaf:
      case Op::kInput:
        break;
      case Op::kAdd: v[i] = detail::value_of<OpDef<Op::kAdd>>(v, args_, i, a, b); break;
      case Op::kSub: v[i] = detail::value_of<OpDef<Op::kSub>>(v, args_, i, a, b); break;
      case Op::kMul: v[i] = detail::value_of<OpDef<Op::kMul>>(v, args_, i, a, b); break;
      case Op::kDiv: v[i] = detail::value_of<OpDef<Op::kDiv>>(v, args_, i, a, b); break;
      case Op::kMean2: v[i] = detail::value_of<OpDef<Op::kMean2>>(v, args_, i, a, b); break;
      case Op::kAddSquares2: v[i] = detail::value_of<OpDef<Op::kAddSquares2>>(v, args_, i, a, b); break;
      case Op::kMeanSquares2: v[i] = detail::value_of<OpDef<Op::kMeanSquares2>>(v, args_, i, a, b); break;
      case Op::kNegMean2: v[i] = detail::value_of<OpDef<Op::kNegMean2>>(v, args_, i, a, b); break;
      case Op::kNeg: v[i] = detail::value_of<OpDef<Op::kNeg>>(v, args_, i, a, b); break;
      case Op::kAddConst: v[i] = detail::value_of<OpDef<Op::kAddConst>>(v, args_, i, a, b); break;
      case Op::kConstSub: v[i] = detail::value_of<OpDef<Op::kConstSub>>(v, args_, i, a, b); break;
      case Op::kConstDiv: v[i] = detail::value_of<OpDef<Op::kConstDiv>>(v, args_, i, a, b); break;
      case Op::kRelu: v[i] = detail::value_of<OpDef<Op::kRelu>>(v, args_, i, a, b); break;
      case Op::kSqr: v[i] = detail::value_of<OpDef<Op::kSqr>>(v, args_, i, a, b); break;
      case Op::kPow3: v[i] = detail::value_of<OpDef<Op::kPow3>>(v, args_, i, a, b); break;
      case Op::kMulConst: v[i] = detail::value_of<OpDef<Op::kMulConst>>(v, args_, i, a, b); break;
      case Op::kDivConst: v[i] = detail::value_of<OpDef<Op::kDivConst>>(v, args_, i, a, b); break;
      default:
        // The rows of a layer as one block: i moves past them.
        i += forward_wide(k, i, a, b, r.end) - 1U;
        break;
    }
    // clang-format on
    ++i;
  }
  // Their gradients are fresh: backward clears only older interior nodes.
  swept_end_ = (swept_end_ < r.first) ? swept_end_ : r.first;
  return true;
}

template <class T>
Status Tape<T>::replay_forward(const Replay& r) noexcept {
  return replay_values(r) ? Status::kOk : status_;
}

template <class T>
Status Tape<T>::replay(const Replay& r) noexcept {
  if (!replay_values(r)) {
    return status_;
  }
  return backward(Value<T>(this, r.root));
}

}  // namespace burtorch

#endif  // BURTORCH_DETAIL_TAPE_REPLAY_HPP
