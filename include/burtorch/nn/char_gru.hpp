// SPDX-License-Identifier: Apache-2.0
/// @file
/// A character-level GRU language model (bench_gru's row, burtorch-gru):
///
///   per position t of a sequence of `steps` characters
///     x_t  = Embedding(vocab -> embed) of character t
///     h_t  = Gru(embed -> hidden) step from h_{t-1} (h_{-1} = 0)
///     z_t  = Linear(hidden -> vocab) of h_t
///   loss = mean over t of cross-entropy(z_t, character t + 1)
///
/// torch.nn.Embedding, torch.nn.GRU(batch_first) and torch.nn.Linear with
/// their default initialisation draw the same distributions (Embedding
/// N(0, 1), the GRU and the head U(-1/sqrt(fan_in), 1/sqrt(fan_in))).
/// Parameters in this order: the embedding [vocab][embed], the GRU's
/// weight_ih, weight_hh, bias_ih, bias_hh (torch's state_dict order and
/// layout), the head's weights [vocab][hidden] and biases.
///
/// Serial batches: loss(tape, tokens, targets) records one sequence; the
/// embedding rows are read in place (views of the parameters). Lane
/// batches (nn::lane_batch): loss() on a tape of N lanes, N sequences per
/// sweep, the embedding rows gathered per lane and every layer over the
/// parameters shared from their own tape. plan() and lane_plan() are
/// exact (tests/nn/test_nn_lanes.cpp).
#ifndef BURTORCH_NN_CHAR_GRU_HPP
#define BURTORCH_NN_CHAR_GRU_HPP

#include <cstddef>
#include <cstdint>

#include "burtorch/config.hpp"
#include "burtorch/lanes/ops.hpp"
#include "burtorch/lanes/lanes.hpp"
#include "burtorch/nn/gru.hpp"
#include "burtorch/nn/linear.hpp"
#include "burtorch/nn/losses.hpp"
#include "burtorch/nn/plan.hpp"
#include "burtorch/nn/random.hpp"
#include "burtorch/core/ops.hpp"
#include "burtorch/core/tape.hpp"

namespace burtorch {
namespace nn {

/// Sizes of a CharGru (names.txt: 26 letters and the newline).
struct CharGruOptions {
  Index vocab = 27U;   ///< V: token ids 0..V-1
  Index embed = 16U;   ///< E: embedding width, the GRU's input
  Index hidden = 32U;  ///< H: the GRU's hidden state
  Index steps = 16U;   ///< T: positions per sequence (1 to CharGru::kMaxSteps)
};

/// The model of the file comment.
template <class T>
class CharGru {
 public:
  static constexpr Index kMaxSteps = 64U;  ///< largest CharGruOptions::steps

  /// The layers of a configuration, as create() builds them.
  /// @{
  static constexpr EmbeddingOptions embedding_options(const CharGruOptions& c) noexcept {
    EmbeddingOptions o{};
    o.rows = c.vocab;
    o.dim = c.embed;
    o.name = BURTORCH_NAME("embed");
    return o;
  }
  static constexpr GruOptions gru_options(const CharGruOptions& c) noexcept {
    GruOptions o{};
    o.input = c.embed;
    o.hidden = c.hidden;
    o.weight_ih_name = BURTORCH_NAME("gru.weight_ih");
    o.weight_hh_name = BURTORCH_NAME("gru.weight_hh");
    o.bias_ih_name = BURTORCH_NAME("gru.bias_ih");
    o.bias_hh_name = BURTORCH_NAME("gru.bias_hh");
    return o;
  }
  static constexpr LinearOptions head_options(const CharGruOptions& c) noexcept {
    LinearOptions o{};
    o.in = c.hidden;
    o.out = c.vocab;
    o.weight_name = BURTORCH_NAME("head.w");
    o.bias_name = BURTORCH_NAME("head.b");
    return o;
  }
  /// @}

  /// Every parameter: the embedding, the GRU, the head.
  static constexpr std::size_t parameters(const CharGruOptions& c) noexcept {
    return Embedding<T>::parameters(embedding_options(c)) + Gru<T>::parameters(gru_options(c)) +
           Linear<T>::parameters(head_options(c));
  }
  /// Slots of the mean over the steps' losses (a list of them: they are not
  /// consecutive nodes; none for one step).
  static constexpr std::size_t mean_slots(const CharGruOptions& c) noexcept {
    return (c.steps > 1U) ? static_cast<std::size_t>(c.steps) : 0U;
  }
  /// One sequence: the initial state's H nodes, per step the GRU's nodes,
  /// the logits and the cross-entropy, then the mean.
  static constexpr std::size_t sample_nodes(const CharGruOptions& c) noexcept {
    return static_cast<std::size_t>(c.hidden) +
           (static_cast<std::size_t>(c.steps) *
            (Gru<T>::nodes(gru_options(c), 1U) + Linear<T>::nodes(head_options(c)) + kCrossEntropyNodes)) +
           1U;
  }
  /// Argument slots of one sequence.
  static constexpr std::size_t sample_slots(const CharGruOptions& c) noexcept {
    return (static_cast<std::size_t>(c.steps) *
            (Gru<T>::slots(gru_options(c), 1U) + Linear<T>::view_slots(head_options(c)))) +
           mean_slots(c);
  }
  /// The model's memory plan (serial batches).
  static constexpr MemoryPlan plan(const CharGruOptions& c, OptimizerKind optimizer) noexcept {
    return make_plan<T>(parameters(c), sample_nodes(c), sample_slots(c), optimizer);
  }
  /// One sweep of a lane batch: as sample_nodes(), the embedding rows
  /// gathered, the layers' head nodes, the lanes' cross-entropy.
  static constexpr std::size_t lane_sample_nodes(const CharGruOptions& c) noexcept {
    return static_cast<std::size_t>(c.hidden) +
           (static_cast<std::size_t>(c.steps) *
            (static_cast<std::size_t>(c.embed) + Gru<T>::template nodes<LaneParams<T>>(gru_options(c), 1U) +
             Linear<T>::template nodes<LaneParams<T>>(head_options(c)) + kLaneCrossEntropyNodes)) +
           1U;
  }
  /// Argument slots of that sweep on a tape of N lanes.
  template <std::size_t N>
  static constexpr std::size_t lane_sample_slots(const CharGruOptions& c) noexcept {
    return (static_cast<std::size_t>(c.steps) *
            (burtorch::gather_slots(1U, N) + Gru<T>::template slots<LaneParams<T>>(gru_options(c), 1U) +
             Linear<T>::template view_slots<LaneParams<T>>(head_options(c)) + burtorch::pick_slots(N))) +
           mean_slots(c);
  }
  /// The memory plan of lane batches of N lanes.
  template <std::size_t N>
  static constexpr LanePlan lane_plan(const CharGruOptions& c, OptimizerKind optimizer) noexcept {
    return make_lane_plan<T, N>(parameters(c), lane_sample_nodes(c), lane_sample_slots<N>(c), optimizer);
  }
  /// True for sizes create() accepts.
  static constexpr bool valid(const CharGruOptions& c) noexcept {
    return (c.vocab != 0U) && (c.embed != 0U) && (c.hidden != 0U) && (c.hidden <= kMaxGather) &&
           (c.vocab <= kMaxGather) && (c.steps != 0U) && (c.steps <= kMaxSteps) &&
           Gru<T>::addressable(gru_options(c));
  }

  /// Creates every parameter in the order of the file comment; call on an
  /// empty tape. False if the tape is full or failed or the sizes are not
  /// valid() (kInvalidArgument); params() is then kNoView.
  bool create(Tape<T>& tape, const CharGruOptions& c, Rng& rng) noexcept {
    options_ = c;
    params_ = kNoView;
    if (!valid(c)) {
      static_cast<void>(tape.report(Status::kInvalidArgument));
      return false;
    }
    const bool ok = embedding_.create(tape, embedding_options(c), rng) && gru_.create(tape, gru_options(c), rng) &&
                    head_.create(tape, head_options(c), rng);
    params_ = model_params(ok, embedding_.params(), head_.params(), parameters(c));
    return params_.count != 0U;
  }
  /// Every parameter (kNoView before a successful create()).
  View params() const noexcept { return params_; }
  /// The sizes given to create().
  const CharGruOptions& options() const noexcept { return options_; }

  /// The loss of one sequence: tokens[0 .. steps) in, targets[0 .. steps)
  /// the characters to predict (each below vocab, else kInvalidArgument).
  Value<T> loss(Tape<T>& tape, const std::uint8_t* tokens, const std::uint8_t* targets) const noexcept {
    if (!arguments(tape, tokens, targets)) {
      return Value<T>(&tape, kNoIndex);
    }
    return all_or_nothing(tape, Value<T>(&tape, kNoIndex), [&]() noexcept {
      View h = burtorch::record_view(tape, options_.hidden, [&tape](Index /*k*/) noexcept { return tape.input(T(0)); });
      Value<T> losses[kMaxSteps];
      for (Index t = 0U; t < options_.steps; ++t) {
        h = gru_.step(tape, embedding_.row(tokens[t]), h);
        losses[t] = cross_entropy(tape, head_.forward(tape, h), targets[t]);
      }
      return (tape.status() == Status::kOk) ? reduce_mean(losses, options_.steps) : Value<T>(&tape, kNoIndex);
    });
  }

  /// The losses of N sequences on a tape of N lanes (lane l: tokens[l],
  /// targets[l]), the parameters shared from their own tape through p
  /// (nn::lane_params).
  template <std::size_t N>
  Value<Lanes<T, N>> loss(Tape<Lanes<T, N>>& tape, const LaneParams<T>& p, const std::uint8_t* const* tokens,
                          const std::uint8_t* const* targets) const noexcept {
    using U = Lanes<T, N>;
    bool ok = (tokens != nullptr) && (targets != nullptr) &&
              burtorch::detail::params_cover(p, params_.first, params_.count);
    for (std::size_t l = 0U; ok && (l < N); ++l) {
      ok = arguments(tape, tokens[l], targets[l]);
    }
    if (!ok) {
      static_cast<void>(tape.report(Status::kInvalidArgument));
      return Value<U>(&tape, kNoIndex);
    }
    return all_or_nothing(tape, Value<U>(&tape, kNoIndex), [&]() noexcept {
      View h = burtorch::record_view(tape, options_.hidden, [&tape](Index /*k*/) noexcept { return tape.input(U(T(0))); });
      Value<U> losses[kMaxSteps];
      Index ids[N];  // BT-DEV-013
      for (Index t = 0U; t < options_.steps; ++t) {
        for (std::size_t l = 0U; l < N; ++l) {
          ids[l] = tokens[l][t];
        }
        h = gru_.step(tape, p, embedding_.gather(tape, p, ids, 1U), h);
        for (std::size_t l = 0U; l < N; ++l) {
          ids[l] = targets[l][t];
        }
        losses[t] = cross_entropy(tape, head_.forward(tape, p, h), ids);
      }
      return (tape.status() == Status::kOk) ? reduce_mean(losses, options_.steps) : Value<U>(&tape, kNoIndex);
    });
  }

 private:
  // True if the model was created and both arrays hold ids below vocab
  // (kInvalidArgument recorded otherwise).
  template <class U>
  bool arguments(Tape<U>& tape, const std::uint8_t* tokens, const std::uint8_t* targets) const noexcept {
    bool ok = (params_.count != 0U) && (tokens != nullptr) && (targets != nullptr);
    for (Index t = 0U; ok && (t < options_.steps); ++t) {
      ok = (tokens[t] < options_.vocab) && (targets[t] < options_.vocab);
    }
    if (!ok) {
      static_cast<void>(tape.report(Status::kInvalidArgument));
    }
    return ok;
  }

  CharGruOptions options_;
  View params_ = kNoView;
  Embedding<T> embedding_;
  Gru<T> gru_;
  Linear<T> head_;
};

}  // namespace nn
}  // namespace burtorch

#endif  // BURTORCH_NN_CHAR_GRU_HPP
