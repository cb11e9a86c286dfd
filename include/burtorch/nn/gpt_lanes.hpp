// SPDX-License-Identifier: Apache-2.0
/// @file
/// The members of Gpt (gpt.hpp) that record on a tape of N lanes: the
/// loss of N sequences (a lane batch, nn::lane_batch) and the checkpointed
/// sweep (lane_sweep, nn::lane_batch_sweeps), with the parts they share.
/// nn/gpt.hpp includes this file after the class: include that one.
#ifndef BURTORCH_NN_GPT_LANES_HPP
#define BURTORCH_NN_GPT_LANES_HPP

#include <cstddef>
#include <cstdint>

#include "burtorch/lanes/ops.hpp"
#include "burtorch/lanes/lanes.hpp"
#include "burtorch/nn/losses.hpp"
#include "burtorch/core/ops.hpp"
#include "burtorch/core/tape.hpp"
#include "burtorch/core/views.hpp"

namespace burtorch {
namespace nn {

template <class T>
template <std::size_t N>
inline Value<Lanes<T, N>> Gpt<T>::loss(Tape<Lanes<T, N>>& tape, const LaneParams<T>& p,
                                       const std::uint8_t* const* tokens, const std::uint8_t* const* targets,
                                       Index steps) const noexcept {
  using U = Lanes<T, N>;
  View x[kMaxSteps];
  if (!burtorch::detail::params_cover(p, params_.first, params_.count)) {  // before anything is recorded
    static_cast<void>(tape.report(Status::kInvalidArgument));
    return Value<U>(&tape, kNoIndex);
  }
  if (!lane_arguments(tape, tokens, targets, steps)) {
    return Value<U>(&tape, kNoIndex);
  }
  return all_or_nothing(tape, Value<U>(&tape, kNoIndex), [&]() noexcept {
    if (!lane_embed(tape, p, tokens, steps, x)) {
      return Value<U>(&tape, kNoIndex);
    }
    for (Index l = 0U; l < options_.layers; ++l) {
      if (!lane_block(tape, p, l, x, steps)) {
        return Value<U>(&tape, kNoIndex);
      }
    }
    return lane_head(tape, p, x, targets, steps);
  });
}

template <class T>
template <std::size_t N>
inline bool Gpt<T>::lane_sweep(Tape<Lanes<T, N>>& tape, const LaneParams<T>& p, const std::uint8_t* const* tokens,
                               const std::uint8_t* const* targets, Index steps, const Lanes<T, N>& mask,
                               Lanes<T, N>* losses) const noexcept {
  if ((losses == nullptr) || !burtorch::detail::params_cover(p, params_.first, params_.count) ||
      !lane_arguments(tape, tokens, targets, steps)) {
    static_cast<void>(tape.report(Status::kInvalidArgument));
    return false;
  }
  const Index span = steps * options_.width;  // one half's input, position after position
  const Index halves = 2U * options_.layers;
  // The kept inputs: leaves first, so no backward sweep passes over them.
  const std::uint64_t leaves = (static_cast<std::uint64_t>(halves) + 1U) * span;
  if (leaves > (tape.usage().node_capacity - tape.size())) {
    static_cast<void>(tape.report(Status::kCapacityExceeded));
    return false;
  }
  // A sweep that fails part-way leaves nothing (the kept inputs too).
  return all_or_nothing(tape, false,
                        [&]() noexcept { return sweep_phases(tape, p, tokens, targets, steps, mask, losses); });
}

template <class T>
template <std::size_t N>
inline bool Gpt<T>::sweep_phases(Tape<Lanes<T, N>>& tape, const LaneParams<T>& p, const std::uint8_t* const* tokens,
                                 const std::uint8_t* const* targets, Index steps, const Lanes<T, N>& mask,
                                 Lanes<T, N>* losses) const noexcept {
  using U = Lanes<T, N>;
  const Index span = steps * options_.width;  // one half's input, position after position
  const Index halves = 2U * options_.layers;
  // The kept inputs (their room checked): leaves first, so no backward sweep passes over them.
  const Index kept = static_cast<Index>(tape.size());
  for (std::uint64_t i = 0U; i < ((static_cast<std::uint64_t>(halves) + 1U) * span); ++i) {
    static_cast<void>(tape.leaf(U(T(0))));
  }
  if (tape.status() != Status::kOk) {
    return false;
  }
  const Mark phase = tape.mark();
  Peak peak;
  View x[kMaxSteps];
  // Forward: each phase's outputs become the next one's kept input.
  bool ok = lane_embed(tape, p, tokens, steps, x) && keep(tape, x, steps, kept) && end_phase(tape, phase, &peak);
  for (Index h = 0U; ok && (h < halves); ++h) {
    kept_views(kept + (h * span), steps, x);
    ok = lane_half(tape, p, h, x, steps) && keep(tape, x, steps, kept + ((h + 1U) * span)) &&
         end_phase(tape, phase, &peak);
  }
  // The head and the losses, backward from loss * mask as lane_batch does,
  // once the backward phases are known to fit: a tape too small fails
  // before any gradient reaches p.grads.
  if (ok) {
    kept_views(kept + (halves * span), steps, x);
    const Value<U> loss = lane_head(tape, p, x, targets, steps);
    const Value<U> root = loss * mask;
    ok = seeds_fit(tape, peak, span) && (tape.status() == Status::kOk) && (tape.backward(root) == Status::kOk);
    *losses = loss.value();
    ok = ok && (tape.rewind(phase) == Status::kOk);
  }
  // Backward: each half again from its kept input, then the embeddings.
  for (Index h = halves; ok && (h > 0U); --h) {
    kept_views(kept + ((h - 1U) * span), steps, x);
    ok = lane_half(tape, p, h - 1U, x, steps) && seeded_backward(tape, x, steps, kept + (h * span)) &&
         (tape.rewind(phase) == Status::kOk);
  }
  return ok && lane_embed(tape, p, tokens, steps, x) && seeded_backward(tape, x, steps, kept) &&
         (tape.rewind(phase) == Status::kOk);
}

template <class T>
template <class U>
inline bool Gpt<T>::end_phase(Tape<U>& tape, Mark phase, Peak* peak) noexcept {
  peak->nodes = (tape.size() > peak->nodes) ? tape.size() : peak->nodes;
  peak->slots = (tape.usage().slots > peak->slots) ? tape.usage().slots : peak->slots;
  return tape.rewind(phase) == Status::kOk;
}

template <class T>
template <class U>
inline bool Gpt<T>::seeds_fit(Tape<U>& tape, const Peak& peak, Index span) noexcept {
  // A phase's seeds: one product with a constant per kept value, and their sum.
  const bool fit = ((peak.nodes + span + 1U) <= tape.usage().node_capacity) &&
                   ((peak.slots + (static_cast<std::size_t>(span) * Recorder<U>::kConstantSlots)) <=
                    tape.usage().slot_capacity);
  if (!fit) {
    static_cast<void>(tape.report(Status::kCapacityExceeded));
  }
  return fit;
}

template <class T>
template <class U>
inline bool Gpt<T>::lane_arguments(Tape<U>& tape, const std::uint8_t* const* tokens,
                                   const std::uint8_t* const* targets, Index steps) const noexcept {
  // params_ is empty until create() succeeded (options_ may then hold sizes it refused).
  bool ok = (tokens != nullptr) && (targets != nullptr);
  for (std::size_t l = 0U; ok && (l < U::kLanes); ++l) {
    ok = sequence_ok(tokens[l], steps) && sequence_ok(targets[l], steps);
  }
  if (!ok) {
    static_cast<void>(tape.report(Status::kInvalidArgument));
  }
  return ok;
}

template <class T>
template <std::size_t N>
inline bool Gpt<T>::lane_embed(Tape<Lanes<T, N>>& tape, const LaneParams<T>& p, const std::uint8_t* const* tokens,
                               Index steps, View* x) const noexcept {
  Index ids[N];  // BT-DEV-013
  for (Index t = 0U; t < steps; ++t) {
    for (std::size_t l = 0U; l < N; ++l) {
      ids[l] = (tokens[l] != nullptr) ? tokens[l][t] : kNoIndex;
    }
    const View token = token_.gather(tape, p, ids, 1U);
    for (std::size_t l = 0U; l < N; ++l) {
      ids[l] = t;
    }
    x[t] = add(tape, token, position_.gather(tape, p, ids, 1U));
  }
  return tape.status() == Status::kOk;
}

template <class T>
template <std::size_t N>
inline bool Gpt<T>::lane_block(Tape<Lanes<T, N>>& tape, const LaneParams<T>& p, Index l, View* x,
                               Index steps) const noexcept {
  return lane_half(tape, p, 2U * l, x, steps) && lane_half(tape, p, (2U * l) + 1U, x, steps);
}

template <class T>
template <std::size_t N>
inline bool Gpt<T>::lane_half(Tape<Lanes<T, N>>& tape, const LaneParams<T>& p, Index h, View* x,
                              Index steps) const noexcept {
  const Block& b = blocks_[h / 2U];
  if ((h % 2U) == 0U) {
    View y[kMaxSteps];
    for (Index t = 0U; t < steps; ++t) {
      y[t] = b.ln1.forward(tape, p, x[t]);
    }
    if (!b.attn.forward(tape, p, y, steps, y)) {
      return false;
    }
    for (Index t = 0U; t < steps; ++t) {
      x[t] = add(tape, x[t], y[t]);
    }
  } else {
    for (Index t = 0U; t < steps; ++t) {
      const View hidden = b.ff1.forward(tape, p, b.ln2.forward(tape, p, x[t]));
      x[t] = add(tape, x[t], b.ff2.forward(tape, p, hidden));
    }
  }
  return tape.status() == Status::kOk;
}

template <class T>
template <std::size_t N>
inline Value<Lanes<T, N>> Gpt<T>::lane_head(Tape<Lanes<T, N>>& tape, const LaneParams<T>& p, const View* x,
                                            const std::uint8_t* const* targets, Index steps) const noexcept {
  Index ids[N];  // BT-DEV-013
  Value<Lanes<T, N>> losses[kMaxSteps];
  for (Index t = 0U; t < steps; ++t) {
    const View z = head_.forward(tape, p, final_norm_.forward(tape, p, x[t]));
    for (std::size_t l = 0U; l < N; ++l) {
      ids[l] = (targets[l] != nullptr) ? targets[l][t] : kNoIndex;
    }
    losses[t] = cross_entropy(tape, z, ids);
  }
  return reduce_mean(losses, steps);
}

template <class T>
inline void Gpt<T>::kept_views(Index first, Index steps, View* x) const noexcept {
  for (Index t = 0U; t < steps; ++t) {
    x[t] = View{first + (t * options_.width), options_.width};
  }
}

template <class T>
template <class U>
inline bool Gpt<T>::keep(Tape<U>& tape, const View* x, Index steps, Index first) const noexcept {
  if (tape.status() != Status::kOk) {
    return false;
  }
  U* const v = tape.values();
  for (Index t = 0U; t < steps; ++t) {
    for (Index j = 0U; j < options_.width; ++j) {
      v[first + (t * options_.width) + j] = v[x[t].first + j];
    }
  }
  return true;
}

template <class T>
template <class U>
inline bool Gpt<T>::seeded_backward(Tape<U>& tape, const View* x, Index steps, Index first) const noexcept {
  const U* const g = tape.grads();
  const Index terms = static_cast<Index>(tape.size());
  for (Index t = 0U; t < steps; ++t) {
    for (Index j = 0U; j < options_.width; ++j) {
      static_cast<void>(Value<U>(&tape, x[t].first + j) * g[first + (t * options_.width) + j]);
    }
  }
  const Value<U> root = burtorch::reduce<Op::kSumR>(tape, burtorch::View{terms, steps * options_.width});
  return (tape.status() == Status::kOk) && (tape.backward(root) == Status::kOk);
}

}  // namespace nn
}  // namespace burtorch

#endif  // BURTORCH_NN_GPT_LANES_HPP
