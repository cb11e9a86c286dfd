// SPDX-License-Identifier: Apache-2.0
/// @file
/// Record once, replay many. A graph whose structure does not change
/// between samples (the same ops on the same operands; only leaf values,
/// parameter values and cross-entropy targets differ: nn::set_target) is
/// recorded once; replay() re-evaluates its nodes in recording order with
/// each op's own forward (its row, as the recorder computed it) and runs
/// the backward sweep: the same values and gradients as rewinding and
/// recording the graph again. No operand checks, no appends: the recording
/// checked them, and replay() refuses a tape whose structure changed since
/// (nodes, slots, rewind generation).
///
///   bt::Mark m = tape.mark();
///   auto loss = model_loss(tape, sample0);
///   bt::Replay r = bt::replayable(tape, m, loss);
///   for (each sample) { bt::set_values(tape, inputs, x); nn::set_target(tape, loss, y); bt::replay(tape, r); }
///
/// Compiled into the library for float and double (linked only where
/// called); a tape of another scalar type instantiates it here.
#ifndef BURTORCH_TOOLS_REPLAY_HPP
#define BURTORCH_TOOLS_REPLAY_HPP

#include <cstdint>

#include "burtorch/core/detail/step.hpp"
#include "burtorch/ext/extension.hpp"
#include "burtorch/ext/functions.hpp"
#include "burtorch/ext/fused.hpp"
#include "burtorch/index.hpp"
#include "burtorch/core/op.hpp"
#include "burtorch/core/op_wide.hpp"
#include "burtorch/core/record.hpp"
#include "burtorch/status.hpp"
#include "burtorch/core/tape.hpp"

namespace burtorch {

/// What replay re-evaluates (replayable()): the nodes recorded after a
/// mark, the root backward starts from, and the state of the tape they were
/// taken in. An empty Replay (tape nullptr) is refused.
struct Replay {
  Index first = kNoIndex;         ///< the first node recorded after the mark
  Index end = 0U;                 ///< the tape's size when taken
  Index slots = 0U;               ///< argument slots in use then
  Index root = kNoIndex;          ///< where backward starts
  const void* tape = nullptr;     ///< the tape that took it
  std::uint64_t generation = 0U;  ///< the tape's rewind generation then
};

/// Takes what replay() needs to re-evaluate the nodes recorded since `from`
/// (a mark of this tape, taken before recording them) for new values of
/// their leaves and inputs, then run backward from `root`: the graph's
/// structure as it is now (nodes, slots, the tape's rewind generation).
/// Refused (kInvalidArgument recorded, an empty Replay returned) for a
/// tape holding an error, a mark of another tape or no longer valid (see
/// Tape::rewind), a root not recorded after the mark, or a node that
/// replay() cannot re-evaluate: a row without a forward (a frozen layer's:
/// its bias is not kept; the lane ops'), an op of an op family that is not
/// the library's (ext/extension.hpp), or a constant folded into x + c,
/// c - x, c / x that was not kept (on a double tape, a constant that is not
/// exactly a float).
template <class T>
Replay replayable(Tape<T>& tape, Mark from, Value<T> root) noexcept;
/// Sets the value of a leaf or input (a parameter too) for the next
/// replay(); kInvalidArgument for any other node, kInvalidHandle for a
/// handle not recorded on this tape, the tape's status if it holds an
/// error (nothing written; the status is not changed).
template <class T>
Status set_value(Tape<T>& tape, Value<T> source, detail::PlainT<T> x) noexcept;
/// The same for the consecutive leaves or inputs of a view (a sample's
/// features): x[k] for node sources.first + k; nothing written if one of
/// them is not a leaf or input (kInvalidArgument), the view is not
/// recorded (kInvalidHandle) or x is null (kInvalidArgument).
template <class T>
Status set_values(Tape<T>& tape, View sources, const detail::PlainT<T>* x) noexcept;
/// Re-evaluates the nodes of `r` from the current values of their
/// operands (in recording order, each with its op's forward, so with the
/// same bits as recording them again with these values), clears their
/// gradients, then runs backward(root): the same values and gradients as
/// rewinding to the mark and recording the graph again. Leaf gradients
/// older than the recording (parameters) accumulate as with backward().
/// Refused with kInvalidArgument recorded, nothing computed, if the graph
/// changed since replayable(): nodes or slots recorded or discarded, a
/// rewind or reset in between (even back to the same size), or r from
/// another tape or empty; the tape's status if it holds an error.
template <class T>
Status replay(Tape<T>& tape, const Replay& r) noexcept;
/// replay() without the backward sweep (evaluation).
template <class T>
Status replay_forward(Tape<T>& tape, const Replay& r) noexcept;

namespace detail {
/// True if node i (op k, second operand field b) can be re-evaluated.
template <class T>
inline bool node_replayable(const Tape<T>& tape, Op k, Index b) noexcept {
  bool ok = false;
  if (is_extension(k)) {
    // The library's families whose rows have a forward (the frozen layer's
    // and the lane ops' have none); an op family of a program's own is not
    // replayed.
    static_cast<void>(tape);
    ok = SmoothOps::replayable(k, b) || PiecewiseOps::replayable(k, b) || FusedOps::replayable(k, b);
  } else {
    visit_op(k, [&](auto tag) noexcept {
      using D = typename decltype(tag)::Def;
      ok = replayable<D>();
      if constexpr (FoldedOf<D>::value) {
        ok = b != kNoIndex;  // the constant was kept
      }
    });
  }
  return ok;
}

/// Re-evaluates node i whose op is not a core elementwise op, and the rows
/// of its layer after it before f.end: the nodes evaluated.
template <class T>
Index forward_wide(Tape<T>& tape, const Forward<T>& f, Op k, Index i, Index a, Index b) noexcept {
  const Index* const slots = Recorder<T>::slots(tape);
  Index done = 1U;
  if (is_extension(k)) {
    // replayable() took only the families node_replayable knows.
    const auto id = static_cast<std::uint8_t>((static_cast<std::uint32_t>(k) - 64U) >> 4U);
    if (id == family::kPiecewise) {
      done = PiecewiseOps::forward(f, slots, k, i, a, b);
    } else if (id == family::kSmooth) {
      done = SmoothOps::forward(f, slots, k, i, a, b);
    } else if (id == family::kFused) {
      done = FusedOps::forward(f, slots, k, i, a, b);
    } else {
      // not replayable: refused by replayable()
    }
  } else {
    visit_op(k, [&](auto tag) noexcept { done = forward_step<typename decltype(tag)::Def>(f, slots, k, i, a, b); });
  }
  return done;
}

/// replay()'s checks and its forward pass; false (status set) if refused.
template <class T>
bool replay_values(Tape<T>& tape, const Replay& r) noexcept {
  using R = Recorder<T>;
  if (tape.status() != Status::kOk) {
    return false;
  }
  // The structure replayable() took: the same tape, nothing recorded or
  // discarded since, no rewind or reset in between.
  if ((r.tape != &tape) || (r.generation != R::generation(tape)) || (r.end != R::size(tape)) ||
      (r.slots != R::slots_used(tape)) || (r.first > r.end)) {
    static_cast<void>(R::fail(tape, Status::kInvalidArgument));
    return false;
  }
  T* const v = R::values(tape);
  T* const gr = R::grads(tape);
  const Index* const args = R::slots(tape);
  const Index base = R::param_region(tape);
  const std::uint64_t* const links = R::links(tape);
  const Op* const ops = R::ops(tape);
  const Forward<T> f{v, links, ops, base, r.end};
  // Nodes of the parameter region are leaves: nothing to evaluate there.
  const Index first = (r.first > base) ? r.first : base;
  // Every gradient of the recording starts at zero, as when recorded.
  for (Index i = r.first; i < r.end; ++i) {
    gr[i] = T(0);
  }
  Index i = first;
  while (i < r.end) {
    const std::uint64_t link = links[i - base];
    const auto a = static_cast<Index>(link);
    const auto b = static_cast<Index>(link >> 32U);
    const Op k = ops[i - base];
    // The core elementwise ops inline (one jump table), the rest out of
    // line, as in backward().
    // clang-format off
    switch (k) {
      case Op::kLeaf:
      case Op::kInput:
        break;
      case Op::kAdd: v[i] = value_of<OpDef<Op::kAdd>>(v, args, i, a, b); break;
      case Op::kSub: v[i] = value_of<OpDef<Op::kSub>>(v, args, i, a, b); break;
      case Op::kMul: v[i] = value_of<OpDef<Op::kMul>>(v, args, i, a, b); break;
      case Op::kDiv: v[i] = value_of<OpDef<Op::kDiv>>(v, args, i, a, b); break;
      case Op::kMean2: v[i] = value_of<OpDef<Op::kMean2>>(v, args, i, a, b); break;
      case Op::kAddSquares2: v[i] = value_of<OpDef<Op::kAddSquares2>>(v, args, i, a, b); break;
      case Op::kMeanSquares2: v[i] = value_of<OpDef<Op::kMeanSquares2>>(v, args, i, a, b); break;
      case Op::kNegMean2: v[i] = value_of<OpDef<Op::kNegMean2>>(v, args, i, a, b); break;
      case Op::kNeg: v[i] = value_of<OpDef<Op::kNeg>>(v, args, i, a, b); break;
      case Op::kAddConst: v[i] = value_of<OpDef<Op::kAddConst>>(v, args, i, a, b); break;
      case Op::kConstSub: v[i] = value_of<OpDef<Op::kConstSub>>(v, args, i, a, b); break;
      case Op::kConstDiv: v[i] = value_of<OpDef<Op::kConstDiv>>(v, args, i, a, b); break;
      case Op::kRelu: v[i] = value_of<OpDef<Op::kRelu>>(v, args, i, a, b); break;
      case Op::kSqr: v[i] = value_of<OpDef<Op::kSqr>>(v, args, i, a, b); break;
      case Op::kPow3: v[i] = value_of<OpDef<Op::kPow3>>(v, args, i, a, b); break;
      case Op::kMulConst: v[i] = value_of<OpDef<Op::kMulConst>>(v, args, i, a, b); break;
      case Op::kDivConst: v[i] = value_of<OpDef<Op::kDivConst>>(v, args, i, a, b); break;
      default:
        // The rows of a layer as one block: i moves past them.
        i += forward_wide(tape, f, k, i, a, b) - 1U;
        break;
    }
    // clang-format on
    ++i;
  }
  // Their gradients are fresh: backward clears only older interior nodes.
  R::fresh_from(tape, r.first);
  return true;
}
}  // namespace detail

template <class T>
Replay replayable(Tape<T>& tape, Mark from, Value<T> root) noexcept {
  using R = Recorder<T>;
  Replay r;
  if (tape.status() != Status::kOk) {
    return r;
  }
  const Index at = root.index();
  const Index size = R::size(tape);
  if ((root.tape() != &tape) || !R::mark_valid(tape, from) || (at >= size) || (at < from.nodes)) {
    static_cast<void>(R::fail(tape, Status::kInvalidArgument));
    return r;
  }
  // Every node after the mark must be one replay() can re-evaluate.
  const Index base = R::param_region(tape);
  for (Index i = (from.nodes > base) ? from.nodes : base; i < size; ++i) {
    if (!detail::node_replayable(tape, R::ops(tape)[i - base], R::operands(tape, i).b)) {
      static_cast<void>(R::fail(tape, Status::kInvalidArgument));
      return r;
    }
  }
  r.first = from.nodes;
  r.end = size;
  r.slots = R::slots_used(tape);
  r.root = at;
  r.tape = &tape;
  r.generation = R::generation(tape);
  return r;
}

template <class T>
Status set_value(Tape<T>& tape, Value<T> source, detail::PlainT<T> x) noexcept {
  using R = Recorder<T>;
  if (tape.status() != Status::kOk) {
    return tape.status();
  }
  if (!R::owns(tape, source)) {
    return Status::kInvalidHandle;
  }
  const Op k = R::op(tape, source.index());
  if ((k != Op::kLeaf) && (k != Op::kInput)) {
    return Status::kInvalidArgument;
  }
  R::values(tape)[source.index()] = x;
  return Status::kOk;
}

template <class T>
Status set_values(Tape<T>& tape, View sources, const detail::PlainT<T>* x) noexcept {
  using R = Recorder<T>;
  if (tape.status() != Status::kOk) {
    return tape.status();
  }
  if ((x == nullptr) || !R::recorded(tape, sources.first, sources.count)) {
    return (x == nullptr) ? Status::kInvalidArgument : Status::kInvalidHandle;
  }
  for (Index i = sources.first; i < (sources.first + sources.count); ++i) {
    const Op k = R::op(tape, i);
    if ((k != Op::kLeaf) && (k != Op::kInput)) {
      return Status::kInvalidArgument;  // checked before anything is written
    }
  }
  T* const v = R::values(tape);
  for (Index i = 0U; i < sources.count; ++i) {
    v[sources.first + i] = x[i];
  }
  return Status::kOk;
}

template <class T>
Status replay_forward(Tape<T>& tape, const Replay& r) noexcept {
  return detail::replay_values(tape, r) ? Status::kOk : tape.status();
}

template <class T>
Status replay(Tape<T>& tape, const Replay& r) noexcept {
  if (!detail::replay_values(tape, r)) {
    return tape.status();
  }
  return tape.backward(Value<T>(&tape, r.root));
}

/// @cond INTERNAL
// Compiled into the library (lib/replay.cpp).
extern template Replay replayable<float>(Tape<float>&, Mark, Value<float>) noexcept;
extern template Status set_value<float>(Tape<float>&, Value<float>, float) noexcept;
extern template Status set_values<float>(Tape<float>&, View, const float*) noexcept;
extern template Status replay<float>(Tape<float>&, const Replay&) noexcept;
extern template Status replay_forward<float>(Tape<float>&, const Replay&) noexcept;
extern template Replay replayable<double>(Tape<double>&, Mark, Value<double>) noexcept;
extern template Status set_value<double>(Tape<double>&, Value<double>, double) noexcept;
extern template Status set_values<double>(Tape<double>&, View, const double*) noexcept;
extern template Status replay<double>(Tape<double>&, const Replay&) noexcept;
extern template Status replay_forward<double>(Tape<double>&, const Replay&) noexcept;
/// @endcond

}  // namespace burtorch

#endif  // BURTORCH_TOOLS_REPLAY_HPP
