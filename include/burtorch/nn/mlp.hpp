// SPDX-License-Identifier: Apache-2.0
/// @file
/// The paper's makemore MLP, built from the layers of layers.hpp, with its
/// memory plans.
///
/// MakemoreMlp (paper §2.4, Bengio et al. 2003): a context of `context`
/// tokens, each an embedding row of `embed` parameters; the rows feed the
/// hidden layer as one view list (no concatenation); tanh hidden layer of
/// width e; linear output over the vocabulary; softmax cross-entropy.
/// d = V*E + (C*E + 1)*e + (e + 1)*V = 1,755 + 1,052 e for V=27, C=16, E=64.
///
/// Parameter order on the tape (also the order of tools/golden/nn/*.py):
///   C[V][E], W1[e][C*E], b1[e], W2[V][e], b2[V].
#ifndef BURTORCH_NN_MLP_HPP
#define BURTORCH_NN_MLP_HPP

#include <cstddef>
#include <cstdint>

#include "burtorch/config.hpp"
#include "burtorch/lanes/ops.hpp"
#include "burtorch/lanes/lanes.hpp"
#include "burtorch/nn/init.hpp"
#include "burtorch/nn/linear.hpp"
#include "burtorch/nn/losses.hpp"
#include "burtorch/nn/optim.hpp"
#include "burtorch/nn/plan.hpp"
#include "burtorch/nn/random.hpp"
#include "burtorch/core/tape.hpp"
#include "burtorch/core/views.hpp"

namespace burtorch {
namespace nn {

/// Sizes of a MakemoreMlp (the paper's defaults).
struct MlpOptions {
  Index vocab = 27U;    ///< V: token ids 0..V-1
  Index context = 16U;  ///< C: tokens of context per sample (at most MakemoreMlp::kMaxContext)
  Index embed = 64U;    ///< E: embedding width
  Index hidden = 64U;   ///< e: hidden-layer width
};
/// The paper's makemore MLP (Bengio et al. 2003; see the file comment).
template <class T>
class MakemoreMlp {
 public:
  static constexpr std::size_t kMaxContext = 64U;  ///< largest MlpOptions::context

  /// The layers of a configuration, as create() builds them. Init: C ~
  /// N(0, 1); W1 fan-in normal with tanh gain; b1 ~ U(-0.01, 0.01); W2 ~
  /// N(0, 0.01^2); b2 = 0 (makemore's scaled initialisation).
  /// @{
  static constexpr EmbeddingOptions embedding_options(const MlpOptions& c) noexcept {
    EmbeddingOptions o{};
    o.rows = c.vocab;
    o.dim = c.embed;
    o.init = Init::normal(0.0, 1.0);
    o.name = BURTORCH_NAME("C");
    return o;
  }
  static constexpr LinearOptions hidden_options(const MlpOptions& c) noexcept {
    LinearOptions o{};
    o.in = c.context * c.embed;
    o.out = c.hidden;
    o.act = Activation::kTanh;
    o.weight_init = Init::fan_in_normal(kGainTanh);
    o.bias_init = Init::uniform(-0.01, 0.01);
    o.weight_name = BURTORCH_NAME("W1");
    o.bias_name = BURTORCH_NAME("b1");
    return o;
  }
  static constexpr LinearOptions output_options(const MlpOptions& c) noexcept {
    LinearOptions o{};
    o.in = c.hidden;
    o.out = c.vocab;
    o.weight_init = Init::normal(0.0, 0.01);
    o.bias_init = Init::zeros();
    o.weight_name = BURTORCH_NAME("W2");
    o.bias_name = BURTORCH_NAME("b2");
    return o;
  }
  /// @}

  /// d = V*E + (C*E + 1)*e + (e + 1)*V.
  static constexpr std::size_t parameters(const MlpOptions& c) noexcept {
    return Embedding<T>::parameters(embedding_options(c)) + Linear<T>::parameters(hidden_options(c)) +
           Linear<T>::parameters(output_options(c));
  }
  /// One sample: view list of the context rows, hidden layer, output
  /// layer (its input is one view), cross-entropy.
  static constexpr std::size_t logits_nodes(const MlpOptions& c) noexcept {
    return Linear<T>::nodes(hidden_options(c)) + Linear<T>::nodes(output_options(c));
  }
  /// logits_nodes() and the loss.
  static constexpr std::size_t sample_nodes(const MlpOptions& c) noexcept {
    return logits_nodes(c) + kCrossEntropyNodes;
  }
  /// The context's view list and the two layers' descriptors.
  static constexpr std::size_t sample_slots(const MlpOptions& c) noexcept {
    return (1U + (2U * static_cast<std::size_t>(c.context))) + Linear<T>::slots(hidden_options(c)) +
           Linear<T>::view_slots(output_options(c));
  }
  /// The model's memory plan (exact: tests/nn/test_nn_plan.cpp).
  static constexpr MemoryPlan plan(const MlpOptions& c, OptimizerKind optimizer) noexcept {
    return make_plan<T>(parameters(c), sample_nodes(c), sample_slots(c), optimizer);
  }

  /// Creates every parameter (see embedding_options() and the layers after
  /// it); call on an empty tape (parameters first). False if the tape is full
  /// or failed or c.context is 0 or above kMaxContext; params() is then
  /// kNoView.
  bool create(Tape<T>& tape, const MlpOptions& c, Rng& rng) noexcept {
    options_ = c;
    params_ = kNoView;
    if ((c.context == 0U) || (c.context > kMaxContext)) {
      return false;
    }
    const bool ok = embedding_.create(tape, embedding_options(c), rng) &&
                    hidden_.create(tape, hidden_options(c), rng) && output_.create(tape, output_options(c), rng);
    // The layers' parameters must form one run, from the first layer's to
    // the end of the last one's.
    params_ = model_params(ok, embedding_.params(), output_.params(), parameters(c));
    return params_.count != 0U;
  }

  /// The parameters on the tape, in the order of the file comment (kNoView
  /// before a successful create()): what an optimizer step takes.
  View params() const noexcept { return params_; }
  /// The sizes given to create().
  const MlpOptions& options() const noexcept { return options_; }

  /// True if the model was created and `context` holds options().context
  /// token ids < vocab and target < vocab; else kInvalidArgument on the
  /// tape. Every loss and logits form checks it before it records anything.
  template <class U>
  bool accepts(Tape<U>& tape, const std::uint8_t* context, Index target) const noexcept {
    bool ok = (params_.count != 0U) && (context != nullptr) && (target < options_.vocab);
    for (Index i = 0U; ok && (i < options_.context); ++i) {
      ok = context[i] < options_.vocab;
    }
    if (!ok) {
      static_cast<void>(tape.report(Status::kInvalidArgument));
    }
    return ok;
  }

  /// The logits for a context of options().context token ids (kNoView,
  /// nothing recorded, if accepts() refuses it).
  View logits(Tape<T>& tape, const std::uint8_t* context) const noexcept {
    if (!accepts(tape, context, 0U)) {
      return kNoView;
    }
    View rows[kMaxContext];
    for (Index i = 0U; i < options_.context; ++i) {
      rows[i] = embedding_.row(context[i]);
    }
    return all_or_nothing(tape, kNoView, [&]() noexcept {
      const ViewList x = burtorch::view_list(tape, rows, options_.context);
      return output_.forward(tape, hidden_.forward(tape, x));
    });
  }

  /// The loss of one sample: cross-entropy of the logits against `target`.
  Value<T> loss(Tape<T>& tape, const std::uint8_t* context, std::uint8_t target) const noexcept {
    if (!accepts(tape, context, target)) {
      return Value<T>(&tape, kNoIndex);
    }
    return all_or_nothing(tape, Value<T>(&tape, kNoIndex),
                          [&]() noexcept { return cross_entropy(tape, logits(tape, context), target); });
  }

  /// A lane batch's sample (nn::lane_batch): the context's rows gathered
  /// per lane, the two layers over the shared weights, the cross-entropy
  /// against each lane's target.
  static constexpr std::size_t lane_sample_nodes(const MlpOptions& c) noexcept {
    return (static_cast<std::size_t>(c.context) * c.embed) + Linear<T>::template nodes<LaneParams<T>>(hidden_options(c)) +
           Linear<T>::template nodes<LaneParams<T>>(output_options(c)) + kLaneCrossEntropyNodes;
  }
  /// Argument slots of lane_sample_nodes()'s sample on a tape of N lanes.
  template <std::size_t N>
  static constexpr std::size_t lane_sample_slots(const MlpOptions& c) noexcept {
    return (static_cast<std::size_t>(c.context) * burtorch::gather_slots(1U, N)) +
           (1U + (2U * static_cast<std::size_t>(c.context))) +
           Linear<T>::template slots<LaneParams<T>>(hidden_options(c)) + Linear<T>::template view_slots<LaneParams<T>>(output_options(c)) +
           burtorch::pick_slots(N);
  }
  /// The memory plan of lane batches of N lanes (exact: tests/core/test_lanes.cpp).
  template <std::size_t N>
  static constexpr LanePlan lane_plan(const MlpOptions& c, OptimizerKind optimizer) noexcept {
    return make_lane_plan<T, N>(parameters(c), lane_sample_nodes(c), lane_sample_slots<N>(c), optimizer);
  }

  /// The loss of N samples at once on a tape of N lanes, the parameters
  /// shared from their own tape through p (nn::lane_params): lane l's
  /// context is contexts[l][0 .. context) and its target targets[l].
  template <std::size_t N>
  Value<Lanes<T, N>> loss(Tape<Lanes<T, N>>& tape, const LaneParams<T>& p, const std::uint8_t* const* contexts,
                          const std::uint8_t* targets) const noexcept {
    bool ok = (contexts != nullptr) && (targets != nullptr) && (options_.context != 0U) &&
              burtorch::detail::params_cover(p, params_.first, params_.count);
    if (!ok) {
      static_cast<void>(tape.report(Status::kInvalidArgument));
      return Value<Lanes<T, N>>(&tape, kNoIndex);
    }
    for (std::size_t l = 0U; ok && (l < N); ++l) {
      ok = accepts(tape, contexts[l], targets[l]);
    }
    if (!ok) {
      return Value<Lanes<T, N>>(&tape, kNoIndex);
    }
    return all_or_nothing(tape, Value<Lanes<T, N>>(&tape, kNoIndex), [&]() noexcept {
      Index ids[N];  // BT-DEV-013
      // One gather per context position: the rows follow one another. The
      // hidden layer takes them as one run per position, so that a position
      // whose token every lane shares (the padding before a word's start) is
      // read as shared scalars (see lane_matvec).
      Index first = kNoIndex;
      for (Index q = 0U; q < options_.context; ++q) {
        for (std::size_t l = 0U; l < N; ++l) {
          ids[l] = (contexts[l] != nullptr) ? contexts[l][q] : kNoIndex;
        }
        const View row = embedding_.gather(tape, p, ids, 1U);
        first = (q == 0U) ? row.first : first;
      }
      if (tape.status() != Status::kOk) {
        return Value<Lanes<T, N>>(&tape, kNoIndex);
      }
      const View x{first, options_.context * options_.embed};
      const View logits =
          output_.forward(tape, p, hidden_.forward(tape, p, burtorch::view_list_rows(tape, x, options_.embed)));
      for (std::size_t l = 0U; l < N; ++l) {
        ids[l] = targets[l];
      }
      return cross_entropy(tape, logits, ids);
    });
  }

 private:
  MlpOptions options_;
  View params_ = kNoView;
  Embedding<T> embedding_;
  Linear<T> hidden_;
  Linear<T> output_;
};

}  // namespace nn
}  // namespace burtorch

#endif  // BURTORCH_NN_MLP_HPP
