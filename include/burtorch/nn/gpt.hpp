// SPDX-License-Identifier: Apache-2.0
/// @file
/// The paper's GPT-like model, built from the layers of nn/ (linear.hpp,
/// norm.hpp, attention.hpp, losses.hpp), with its memory plans. The members
/// that record on a tape of lanes (a lane batch's loss, the checkpointed
/// lane_sweep) are declared here and defined in gpt_lanes.hpp, which this
/// header includes at its end.
///
/// Gpt (paper §2.5): token + position embeddings, `layers` pre-LayerNorm
/// blocks x += attn(ln1(x)); x += ffn(ln2(x)) with ffn = Linear(D,4D) ReLU
/// Linear(4D,D), a final LayerNorm and a linear head; the loss of a sequence
/// is the mean cross-entropy over its positions.
///
/// Parameter order on the tape (also the order of tools/golden/nn/*.py):
///   tok[V][D], pos[S][D], per block: ln1.g, ln1.b, Wq, Wk, Wv [D][D],
///   proj.W[D][D], proj.b, ln2.g, ln2.b, ff1.W[4D][D], ff1.b[4D],
///   ff2.W[D][4D], ff2.b[D]; then lnf.g, lnf.b, head.W[V][D], head.b[V].
#ifndef BURTORCH_NN_GPT_HPP
#define BURTORCH_NN_GPT_HPP

#include <cstddef>
#include <cstdint>

#include "burtorch/config.hpp"
#include "burtorch/lanes/ops.hpp"
#include "burtorch/lanes/lanes.hpp"
#include "burtorch/nn/attention.hpp"
#include "burtorch/nn/common.hpp"
#include "burtorch/nn/init.hpp"
#include "burtorch/nn/linear.hpp"
#include "burtorch/nn/losses.hpp"
#include "burtorch/nn/norm.hpp"
#include "burtorch/nn/optim.hpp"
#include "burtorch/nn/plan.hpp"
#include "burtorch/nn/random.hpp"
#include "burtorch/core/record.hpp"
#include "burtorch/core/tape.hpp"

namespace burtorch {
namespace nn {

/// Sizes of a Gpt (the paper's small model).
struct GptOptions {
  Index vocab = 65U;  ///< V: token ids 0..V-1
  Index block = 8U;   ///< maximum sequence length
  Index width = 24U;  ///< D
  Index heads = 6U;   ///< attention heads (divide width)
  Index layers = 6U;  ///< blocks (at most Gpt::kMaxLayers)
  double eps = 1e-5;  ///< LayerNorm
};
/// The paper's GPT-like model (see the file comment).
template <class T>
class Gpt {
 public:
  static constexpr std::size_t kMaxLayers = 8U;  ///< largest GptOptions::layers

  /// The layers of a configuration, as create() builds them (nanoGPT's
  /// init): embeddings and weight matrices ~ N(0, 0.02^2), biases 0,
  /// LayerNorm gains 1 and biases 0.
  /// @{
  static constexpr EmbeddingOptions token_options(const GptOptions& c) noexcept {
    EmbeddingOptions o{};
    o.rows = c.vocab;
    o.dim = c.width;
    o.init = kWeightInit;
    o.name = BURTORCH_NAME("tok");
    return o;
  }
  static constexpr EmbeddingOptions position_options(const GptOptions& c) noexcept {
    EmbeddingOptions o = token_options(c);
    o.rows = c.block;
    o.name = BURTORCH_NAME("pos");
    return o;
  }
  static constexpr LayerNormOptions norm_options(const GptOptions& c, const char* gain_name,
                                                 const char* bias_name) noexcept {
    LayerNormOptions o{};
    o.width = c.width;
    o.eps = c.eps;
    o.gain_name = gain_name;
    o.bias_name = bias_name;
    return o;
  }
  static constexpr AttentionOptions attention_options(const GptOptions& c) noexcept {
    AttentionOptions o{};
    o.width = c.width;
    o.heads = c.heads;
    o.weight_init = kWeightInit;
    o.proj_init = kWeightInit;
    o.proj_bias_init = Init::zeros();
    o.q_name = BURTORCH_NAME("Wq");
    o.k_name = BURTORCH_NAME("Wk");
    o.v_name = BURTORCH_NAME("Wv");
    o.proj_weight_name = BURTORCH_NAME("proj.W");
    o.proj_bias_name = BURTORCH_NAME("proj.b");
    return o;
  }
  static constexpr LinearOptions ff1_options(const GptOptions& c) noexcept {
    LinearOptions o{};
    o.in = c.width;
    o.out = 4U * c.width;
    o.act = Activation::kRelu;
    o.weight_init = kWeightInit;
    o.bias_init = Init::zeros();
    o.weight_name = BURTORCH_NAME("ff1.W");
    o.bias_name = BURTORCH_NAME("ff1.b");
    return o;
  }
  static constexpr LinearOptions ff2_options(const GptOptions& c) noexcept {
    LinearOptions o{};
    o.in = 4U * c.width;
    o.out = c.width;
    o.weight_init = kWeightInit;
    o.bias_init = Init::zeros();
    o.weight_name = BURTORCH_NAME("ff2.W");
    o.bias_name = BURTORCH_NAME("ff2.b");
    return o;
  }
  static constexpr LinearOptions head_options(const GptOptions& c) noexcept {
    LinearOptions o{};
    o.in = c.width;
    o.out = c.vocab;
    o.weight_init = kWeightInit;
    o.bias_init = Init::zeros();
    o.weight_name = BURTORCH_NAME("head.W");
    o.bias_name = BURTORCH_NAME("head.b");
    return o;
  }
  /// @}

  /// Parameters of one block.
  static constexpr std::size_t block_parameters(const GptOptions& c) noexcept {
    return (2U * LayerNorm<T>::parameters(norm_options(c, nullptr, nullptr))) +
           CausalSelfAttention<T>::parameters(attention_options(c)) + Linear<T>::parameters(ff1_options(c)) +
           Linear<T>::parameters(ff2_options(c));
  }
  /// All parameters of the model.
  static constexpr std::size_t parameters(const GptOptions& c) noexcept {
    return Embedding<T>::parameters(token_options(c)) + Embedding<T>::parameters(position_options(c)) +
           (c.layers * block_parameters(c)) + LayerNorm<T>::parameters(norm_options(c, nullptr, nullptr)) +
           Linear<T>::parameters(head_options(c));
  }
  /// A sequence of `steps` positions (<= block) up to the logits.
  static constexpr std::size_t logits_nodes(const GptOptions& c, std::size_t steps) noexcept {
    const std::size_t d = c.width;
    const std::size_t norm = LayerNorm<T>::nodes(norm_options(c, nullptr, nullptr));
    const std::size_t per_block = (steps * norm) + CausalSelfAttention<T>::nodes(attention_options(c), steps) +
                                  (steps * d) + (steps * norm) + (steps * Linear<T>::nodes(ff1_options(c))) +
                                  (steps * Linear<T>::nodes(ff2_options(c))) + (steps * d);
    return (steps * d) + (c.layers * per_block) + (steps * norm) + (steps * Linear<T>::nodes(head_options(c)));
  }
  /// Argument slots of logits_nodes()'s sequence.
  static constexpr std::size_t logits_slots(const GptOptions& c, std::size_t steps) noexcept {
    const std::size_t norm = LayerNorm<T>::slots(norm_options(c, nullptr, nullptr));
    const std::size_t per_block = (steps * norm) + CausalSelfAttention<T>::slots(attention_options(c), steps) +
                                  (steps * norm) + (steps * Linear<T>::view_slots(ff1_options(c))) +
                                  (steps * Linear<T>::view_slots(ff2_options(c)));
    return (c.layers * per_block) + (steps * norm) + (steps * Linear<T>::view_slots(head_options(c)));
  }
  /// Loss of a sequence: a cross-entropy per position and their mean (a list).
  static constexpr std::size_t sample_nodes(const GptOptions& c) noexcept {
    return logits_nodes(c, c.block) + (c.block * kCrossEntropyNodes) + 1U;
  }
  /// Slots of a full sequence's loss (the mean's list: one per position).
  static constexpr std::size_t sample_slots(const GptOptions& c) noexcept {
    return logits_slots(c, c.block) + c.block;
  }
  /// The model's memory plan for sequences of `block` positions.
  static constexpr MemoryPlan plan(const GptOptions& c, OptimizerKind optimizer) noexcept {
    return make_plan<T>(parameters(c), sample_nodes(c), sample_slots(c), optimizer);
  }

  /// Creates every parameter in the order of the file comment (see
  /// token_options() and the options after it); call on an empty tape. False
  /// if the tape is full or failed, or the configuration is out of range
  /// (layers, block, heads); params() is then kNoView.
  bool create(Tape<T>& tape, const GptOptions& c, Rng& rng) noexcept {
    options_ = c;
    params_ = kNoView;
    if ((c.layers > kMaxLayers) || (c.block > kMaxSteps) || (c.heads == 0U) || ((c.width % c.heads) != 0U)) {
      return false;
    }
    bool ok = token_.create(tape, token_options(c), rng) && position_.create(tape, position_options(c), rng);
    for (Index l = 0U; ok && (l < c.layers); ++l) {
      Block& b = blocks_[l];
      ok = b.ln1.create(tape, norm_options(c, BURTORCH_NAME("ln1.g"), BURTORCH_NAME("ln1.b")), rng) &&
           b.attn.create(tape, attention_options(c), rng) &&
           b.ln2.create(tape, norm_options(c, BURTORCH_NAME("ln2.g"), BURTORCH_NAME("ln2.b")), rng) &&
           b.ff1.create(tape, ff1_options(c), rng) && b.ff2.create(tape, ff2_options(c), rng);
    }
    ok = ok && final_norm_.create(tape, norm_options(c, BURTORCH_NAME("lnf.g"), BURTORCH_NAME("lnf.b")), rng) &&
         head_.create(tape, head_options(c), rng);
    params_ = model_params(ok, token_.params(), head_.params(), parameters(c));
    return params_.count != 0U;
  }

  /// The parameters on the tape, in the order of the file comment (kNoView
  /// before a successful create()): what an optimizer step takes.
  View params() const noexcept { return params_; }
  /// The sizes given to create().
  const GptOptions& options() const noexcept { return options_; }

  /// logits[t] for each position t < steps of the token ids. False on
  /// error, with nothing recorded (no node, no slot) and logits_out[]
  /// kNoView: a model not created, null arrays, no steps or more than the
  /// block, a token id past the vocabulary are kInvalidArgument and the
  /// parameters not recorded on the tape (a model created on another tape)
  /// kInvalidHandle, all found before recording; a tape too small is
  /// kCapacityExceeded, what the pass recorded before it found out
  /// discarded (all_or_nothing).
  bool logits(Tape<T>& tape, const std::uint8_t* tokens, Index steps, View* logits_out) const noexcept {
    if (!sequence_ok(tokens, steps) || (logits_out == nullptr)) {  // before anything is recorded
      static_cast<void>(tape.report(Status::kInvalidArgument));
      return false;
    }
    if (!is_recorded(tape, params_)) {
      static_cast<void>(tape.report(Status::kInvalidHandle));
      return false;
    }
    const bool done =
        all_or_nothing(tape, false, [&]() noexcept { return record_logits(tape, tokens, steps, logits_out); });
    for (Index t = 0U; !done && (t < steps); ++t) {
      logits_out[t] = kNoView;  // discarded
    }
    return done;
  }

  /// Mean cross-entropy over the positions of tokens[0..steps) predicting
  /// targets[0..steps). Errors as logits(), a target past the vocabulary
  /// (kInvalidArgument) too; nothing recorded on any.
  Value<T> loss(Tape<T>& tape, const std::uint8_t* tokens, const std::uint8_t* targets, Index steps) const noexcept {
    if (!sequence_ok(targets, steps)) {  // before the logits are recorded
      static_cast<void>(tape.report(Status::kInvalidArgument));
      return Value<T>(&tape, kNoIndex);
    }
    return all_or_nothing(tape, Value<T>(&tape, kNoIndex), [&]() noexcept {
      View z[kMaxSteps];
      if (!logits(tape, tokens, steps, z)) {
        return Value<T>(&tape, kNoIndex);
      }
      Value<T> losses[kMaxSteps];
      for (Index t = 0U; t < steps; ++t) {
        losses[t] = cross_entropy(tape, z[t], targets[t]);
      }
      return reduce_mean(losses, steps);
    });
  }

 private:
  /// logits()'s recording, its arguments checked.
  bool record_logits(Tape<T>& tape, const std::uint8_t* tokens, Index steps, View* logits_out) const noexcept {
    View x[kMaxSteps];
    View y[kMaxSteps];
    for (Index t = 0U; t < steps; ++t) {
      x[t] = add(tape, token_.row(tokens[t]), position_.row(t));
    }
    for (Index l = 0U; l < options_.layers; ++l) {
      const Block& b = blocks_[l];
      for (Index t = 0U; t < steps; ++t) {
        y[t] = b.ln1.forward(tape, x[t]);
      }
      if (!b.attn.forward(tape, y, steps, y)) {
        return false;
      }
      for (Index t = 0U; t < steps; ++t) {
        x[t] = add(tape, x[t], y[t]);
      }
      for (Index t = 0U; t < steps; ++t) {
        const View h = b.ff1.forward(tape, b.ln2.forward(tape, x[t]));
        x[t] = add(tape, x[t], b.ff2.forward(tape, h));
      }
    }
    for (Index t = 0U; t < steps; ++t) {
      logits_out[t] = head_.forward(tape, final_norm_.forward(tape, x[t]));
    }
    return tape.status() == Status::kOk;
  }

 public:

  /// A lane batch's sequence of `block` positions (nn::lane_batch): the
  /// embeddings gathered per lane, every layer over the shared weights.
  static constexpr std::size_t lane_sample_nodes(const GptOptions& c) noexcept {
    return embed_nodes(c) + (c.layers * block_lane_nodes(c)) + head_lane_nodes(c);
  }
  /// Argument slots of lane_sample_nodes()'s sequence on a tape of N lanes.
  template <std::size_t N>
  static constexpr std::size_t lane_sample_slots(const GptOptions& c) noexcept {
    return embed_lane_slots<N>(c) + (c.layers * block_lane_slots<N>(c)) + head_lane_slots<N>(c);
  }
  /// The memory plan of lane batches of N lanes (exact: tests/core/test_lanes.cpp).
  template <std::size_t N>
  static constexpr LanePlan lane_plan(const GptOptions& c, OptimizerKind optimizer) noexcept {
    return make_lane_plan<T, N>(parameters(c), lane_sample_nodes(c), lane_sample_slots<N>(c), optimizer);
  }

  /// The loss of N sequences at once on a tape of N lanes, the parameters
  /// shared from their own tape through p (nn::lane_params): lane l reads
  /// tokens[l][0 .. steps) and predicts targets[l][0 .. steps). Refused
  /// before recording (kInvalidArgument) for weights p does not hold, null
  /// arrays, steps 0 or past the block, an id past the vocabulary; a tape
  /// too small is kCapacityExceeded, with nothing recorded left.
  template <std::size_t N>
  Value<Lanes<T, N>> loss(Tape<Lanes<T, N>>& tape, const LaneParams<T>& p, const std::uint8_t* const* tokens,
                          const std::uint8_t* const* targets, Index steps) const noexcept;

  /// Gradient checkpointing (recomputation) for lane batches: the nodes of
  /// one checkpointed sweep (lane_sweep) of N sequences of `block`
  /// positions. The inputs of each block's two halves (attention,
  /// feed-forward) and the final norm's are kept as leaves, (2 x layers + 1)
  /// x block x width of them, and one phase is recorded at a time on top:
  /// the embeddings, one half of a block, or the final norm, head and losses.
  static constexpr std::size_t checkpoint_sample_nodes(const GptOptions& c) noexcept {
    const std::size_t seeds = (static_cast<std::size_t>(c.block) * c.width) + 1U;  // y * g terms and their sum
    const std::size_t phase = max_of(max_of(embed_nodes(c) + seeds, attention_half_nodes(c) + seeds),
                                     max_of(feed_forward_half_nodes(c) + seeds, head_lane_nodes(c) + 1U));  // + mask
    return (((2U * static_cast<std::size_t>(c.layers)) + 1U) * c.block * c.width) + phase;
  }
  /// Argument slots of checkpoint_sample_nodes()'s sweep on a tape of N lanes.
  template <std::size_t N>
  static constexpr std::size_t checkpoint_sample_slots(const GptOptions& c) noexcept {
    const std::size_t seeds = static_cast<std::size_t>(c.block) * c.width * Recorder<Lanes<T, N>>::kConstantSlots;
    return max_of(max_of(embed_lane_slots<N>(c) + seeds, attention_half_slots<N>(c) + seeds),
                  max_of(feed_forward_half_slots<N>(c) + seeds,
                         head_lane_slots<N>(c) + Recorder<Lanes<T, N>>::kConstantSlots));  // and the mask's constant
  }
  /// The memory plan of checkpointed lane batches of N lanes
  /// (nn::lane_batch_sweeps with lane_sweep; exact: tests/core/test_lanes.cpp):
  /// the lane tape holds half a block's graph instead of every block's.
  template <std::size_t N>
  static constexpr LanePlan checkpoint_plan(const GptOptions& c, OptimizerKind optimizer) noexcept {
    return size_lane_plan<T, N>(parameters(c), checkpoint_sample_nodes(c), checkpoint_sample_slots<N>(c), optimizer);
  }

  /// One checkpointed sweep of N sequences (nn::lane_batch_sweeps): the
  /// same losses and parameter gradients as loss() followed by backward of
  /// loss * mask, computed bitwise the same (the same nodes in the same
  /// order, each phase's gradient sum handed on exactly), in the memory of
  /// half a block's graph. The forward pass records one phase at a time (a
  /// block's attention half, its feed-forward half) and keeps only each
  /// phase's input (as leaves); backward then re-records each half from its
  /// kept input, last first, and seeds its outputs with the gradients the
  /// later phases left in the next input's leaves (a root sum(y * g) gives
  /// each output y exactly g). Costs a second forward pass of every block. Lane l's loss goes to
  /// losses->lane[l]; the gradients are added to p.grads. False on error,
  /// the tape's status says why (a model create() did not build, null
  /// arrays, steps 0 or past the block: kInvalidArgument before anything is
  /// recorded; a lane tape too small: kCapacityExceeded), with nothing
  /// recorded left on the tape (all_or_nothing: the kept inputs too).
  template <std::size_t N>
  bool lane_sweep(Tape<Lanes<T, N>>& tape, const LaneParams<T>& p, const std::uint8_t* const* tokens,
                  const std::uint8_t* const* targets, Index steps, const Lanes<T, N>& mask,
                  Lanes<T, N>* losses) const noexcept;

 private:
  // --- the lane sweep's parts (loss() and lane_sweep() share them) ---------
  static constexpr std::size_t max_of(std::size_t a, std::size_t b) noexcept { return (a > b) ? a : b; }
  static constexpr std::size_t embed_nodes(const GptOptions& c) noexcept {
    return static_cast<std::size_t>(c.block) * 3U * c.width;
  }
  // A block's two halves: the attention (its norm, the attention, the
  // residual) and the feed-forward (its norm, the two layers, the residual).
  static constexpr std::size_t attention_half_nodes(const GptOptions& c) noexcept {
    const std::size_t steps = c.block;
    const std::size_t norm = LayerNorm<T>::nodes(norm_options(c, nullptr, nullptr));
    return (steps * norm) + CausalSelfAttention<T>::lane_nodes(attention_options(c), steps) + (steps * c.width);
  }
  static constexpr std::size_t feed_forward_half_nodes(const GptOptions& c) noexcept {
    const std::size_t steps = c.block;
    const std::size_t norm = LayerNorm<T>::nodes(norm_options(c, nullptr, nullptr));
    return (steps * norm) + (steps * Linear<T>::template nodes<LaneParams<T>>(ff1_options(c))) +
           (steps * Linear<T>::template nodes<LaneParams<T>>(ff2_options(c))) + (steps * c.width);
  }
  static constexpr std::size_t block_lane_nodes(const GptOptions& c) noexcept {
    return attention_half_nodes(c) + feed_forward_half_nodes(c);
  }
  static constexpr std::size_t head_lane_nodes(const GptOptions& c) noexcept {
    const std::size_t steps = c.block;
    const std::size_t norm = LayerNorm<T>::nodes(norm_options(c, nullptr, nullptr));
    return (steps * norm) + (steps * Linear<T>::template nodes<LaneParams<T>>(head_options(c))) + (steps * kLaneCrossEntropyNodes) + 1U;
  }
  template <std::size_t N>
  static constexpr std::size_t embed_lane_slots(const GptOptions& c) noexcept {
    return static_cast<std::size_t>(c.block) * 2U * burtorch::gather_slots(1U, N);
  }
  template <std::size_t N>
  static constexpr std::size_t attention_half_slots(const GptOptions& c) noexcept {
    const std::size_t steps = c.block;
    return (steps * burtorch::kLaneScaleShiftSlots) +
           CausalSelfAttention<T>::template lane_slots<N>(attention_options(c), steps);
  }
  template <std::size_t N>
  static constexpr std::size_t feed_forward_half_slots(const GptOptions& c) noexcept {
    const std::size_t steps = c.block;
    return (steps * burtorch::kLaneScaleShiftSlots) +
           (steps * Linear<T>::template view_slots<LaneParams<T>>(ff1_options(c))) + (steps * Linear<T>::template view_slots<LaneParams<T>>(ff2_options(c)));
  }
  template <std::size_t N>
  static constexpr std::size_t block_lane_slots(const GptOptions& c) noexcept {
    return attention_half_slots<N>(c) + feed_forward_half_slots<N>(c);
  }
  template <std::size_t N>
  static constexpr std::size_t head_lane_slots(const GptOptions& c) noexcept {
    const std::size_t steps = c.block;
    return (steps * burtorch::kLaneScaleShiftSlots) + (steps * Linear<T>::template view_slots<LaneParams<T>>(head_options(c))) +
           (steps * burtorch::pick_slots(N)) + steps;
  }

  // The lane sweep's recording parts (defined in gpt_lanes.hpp).
  template <class U>
  bool lane_arguments(Tape<U>& tape, const std::uint8_t* const* tokens, const std::uint8_t* const* targets,
                      Index steps) const noexcept;
  // True if the model was created and ids holds `steps` (1 to block) token
  // ids < vocab.
  bool sequence_ok(const std::uint8_t* ids, Index steps) const noexcept {
    bool ok = (params_.count != 0U) && (ids != nullptr) && (steps != 0U) && (steps <= options_.block);
    for (Index t = 0U; ok && (t < steps); ++t) {
      ok = ids[t] < options_.vocab;
    }
    return ok;
  }
  // x[t] = the token's row + the position's row, gathered per lane.
  template <std::size_t N>
  bool lane_embed(Tape<Lanes<T, N>>& tape, const LaneParams<T>& p, const std::uint8_t* const* tokens, Index steps,
                  View* x) const noexcept;
  // Block l over x[0 .. steps), in place: its two halves.
  template <std::size_t N>
  bool lane_block(Tape<Lanes<T, N>>& tape, const LaneParams<T>& p, Index l, View* x, Index steps) const noexcept;
  // Half h of the blocks over x[0 .. steps), in place: block h / 2's
  // attention (h even) or feed-forward (h odd), each with its norm and
  // residual.
  template <std::size_t N>
  bool lane_half(Tape<Lanes<T, N>>& tape, const LaneParams<T>& p, Index h, View* x, Index steps) const noexcept;
  // The final norm, the head and the mean cross-entropy over the positions.
  template <std::size_t N>
  Value<Lanes<T, N>> lane_head(Tape<Lanes<T, N>>& tape, const LaneParams<T>& p, const View* x,
                               const std::uint8_t* const* targets, Index steps) const noexcept;
  // x[t] = the kept leaves of position t from `first`.
  void kept_views(Index first, Index steps, View* x) const noexcept;
  // Copies the values of x[0 .. steps) into the kept leaves from `first`.
  template <class U>
  bool keep(Tape<U>& tape, const View* x, Index steps, Index first) const noexcept;
  // Backward from sum(x * g) over the outputs x[0 .. steps), g the
  // gradients of the kept leaves from `first`: each output's gradient is
  // exactly its g (one times g, added to zero).
  template <class U>
  bool seeded_backward(Tape<U>& tape, const View* x, Index steps, Index first) const noexcept;
  // The largest phase a sweep recorded (nodes, slots in use at its end).
  struct Peak {
    std::size_t nodes = 0U;
    std::size_t slots = 0U;
  };
  // A phase's end: the tape's use noted in *peak, then a rewind to `phase`.
  template <class U>
  static bool end_phase(Tape<U>& tape, Mark phase, Peak* peak) noexcept;
  // True if the largest phase fits again with its seeds (span of them).
  template <class U>
  static bool seeds_fit(Tape<U>& tape, const Peak& peak, Index span) noexcept;
  // lane_sweep's recording, its arguments and its kept inputs' room checked.
  template <std::size_t N>
  bool sweep_phases(Tape<Lanes<T, N>>& tape, const LaneParams<T>& p, const std::uint8_t* const* tokens,
                    const std::uint8_t* const* targets, Index steps, const Lanes<T, N>& mask,
                    Lanes<T, N>* losses) const noexcept;

  struct Block {
    LayerNorm<T> ln1;
    CausalSelfAttention<T> attn;
    LayerNorm<T> ln2;
    Linear<T> ff1;
    Linear<T> ff2;
  };
  static constexpr Init kWeightInit = Init::normal(0.0, 0.02);

  GptOptions options_;
  View params_ = kNoView;
  Embedding<T> token_;
  Embedding<T> position_;
  Block blocks_[kMaxLayers];
  LayerNorm<T> final_norm_;
  Linear<T> head_;
};

}  // namespace nn
}  // namespace burtorch

// The members on a tape of lanes, defined after the class.
#include "burtorch/nn/gpt_lanes.hpp"

#endif  // BURTORCH_NN_GPT_HPP
