// SPDX-License-Identifier: Apache-2.0
/// @file
/// The paper's two models, built from layers.hpp, with their memory plans.
///
/// MakemoreMlp (paper §2.4, Bengio et al. 2003): a context of `context`
/// tokens, each an embedding row of `embed` parameters; the rows feed the
/// hidden layer as one view list (no concatenation); tanh hidden layer of
/// width e; linear output over the vocabulary; softmax cross-entropy.
/// d = V*E + (C*E + 1)*e + (e + 1)*V = 1,755 + 1,052 e for V=27, C=16, E=64.
///
/// Gpt (paper §2.5): token + position embeddings, `layers` pre-LayerNorm
/// blocks x += attn(ln1(x)); x += ffn(ln2(x)) with ffn = Linear(D,4D) ReLU
/// Linear(4D,D), a final LayerNorm and a linear head; the loss of a sequence
/// is the mean cross-entropy over its positions.
///
/// Parameter order on the tape (also the order of tools/golden/nn/*.py):
///   MLP: C[V][E], W1[e][C*E], b1[e], W2[V][e], b2[V]
///   GPT: tok[V][D], pos[S][D], per block: ln1.g, ln1.b, Wq, Wk, Wv [D][D],
///        proj.W[D][D], proj.b, ln2.g, ln2.b, ff1.W[4D][D], ff1.b[4D],
///        ff2.W[D][4D], ff2.b[D]; then lnf.g, lnf.b, head.W[V][D], head.b[V].
#ifndef BURTORCH_NN_MODELS_HPP
#define BURTORCH_NN_MODELS_HPP

#include <cstddef>
#include <cstdint>
#include <limits>

#include "burtorch/config.hpp"
#include "burtorch/lane_ops.hpp"
#include "burtorch/nn/layers.hpp"
#include "burtorch/nn/optim.hpp"

namespace burtorch {
namespace nn {

/// What a model needs, in elements and bytes. Parameters, gradients and one
/// sample's activations are nodes of one tape; optimizer state is extra.
struct MemoryPlan {
  std::size_t parameters = 0U;    ///< trainable scalars (the tape's parameter region)
  std::size_t sample_nodes = 0U;  ///< nodes one sample records after the parameters
  std::size_t nodes = 0U;         ///< tape capacity: parameters + sample_nodes
  std::size_t slots = 0U;         ///< argument slots one sample uses
  std::size_t tape_bytes = 0U;       ///< Tape<T>::bytes_required(nodes, slots, parameters)
  std::size_t optimizer_bytes = 0U;  ///< optimizer state: state_per_parameter(kind) * parameters * sizeof(T)
  std::size_t bytes = 0U;  ///< tape_bytes + optimizer_bytes
};

/// The memory plan of a model of your own, at compile time: `parameters`
/// created first on the tape, then per sample `sample_nodes` nodes and
/// `slots` argument slots (add up the layers' parameters(), nodes() and
/// slots()/view_slots(), and the losses' node counts), trained with
/// `optimizer`. Size the tape and the optimizer state with it:
/// @code
/// constexpr nn::LinearOptions kHidden{2U, 8U, nn::Activation::kTanh};
/// constexpr nn::LinearOptions kOutput{8U, 1U, nn::Activation::kSigmoid};
/// constexpr nn::MemoryPlan kPlan = nn::make_plan<float>(
///     nn::Linear<float>::parameters(kHidden) + nn::Linear<float>::parameters(kOutput),
///     2 + nn::Linear<float>::nodes(kHidden) + nn::Linear<float>::nodes(kOutput) + 2,
///     nn::Linear<float>::view_slots(kHidden) + nn::Linear<float>::view_slots(kOutput), nn::OptimizerKind::kAdam);
/// static_assert(kPlan.bytes <= kRamForModel, "does not fit");
/// bt::FixedTape<float, kPlan.nodes, kPlan.slots, kPlan.parameters> tape;
/// float adam_state[kPlan.optimizer_bytes / sizeof(float)];
/// nn::Optimizer<float> opt(config, adam_state);  // knows the array's size
/// @endcode
/// examples/xor_nn builds exactly this and checks it against what a sample
/// records. A plan too small shows at run time as Status::kCapacityExceeded,
/// never as a write past the buffer.
///
/// Every sum and product is checked: a plan that does not fit this target's
/// size_t (or a tape an Index cannot address) has nodes, tape_bytes,
/// optimizer_bytes or bytes equal to burtorch::kTooLarge (the largest size_t),
/// never a wrapped small number, so `static_assert(plan.bytes <= budget)`
/// fails for it.
template <class T>
constexpr MemoryPlan make_plan(std::size_t parameters, std::size_t sample_nodes, std::size_t slots,
                               OptimizerKind optimizer) noexcept {
  constexpr std::size_t kTooLarge = burtorch::kTooLarge;
  MemoryPlan p;
  p.parameters = parameters;
  p.sample_nodes = sample_nodes;
  const bool nodes_fit = sample_nodes <= (kTooLarge - parameters);
  p.nodes = nodes_fit ? (parameters + sample_nodes) : kTooLarge;
  p.slots = slots;
  // Parameters occupy the tape's parameter region: value and gradient only.
  p.tape_bytes = nodes_fit ? Tape<T>::bytes_required(p.nodes, p.slots, parameters) : kTooLarge;
  const std::size_t per_parameter = state_per_parameter(optimizer) * sizeof(T);
  p.optimizer_bytes =
      ((per_parameter == 0U) || (parameters <= (kTooLarge / per_parameter))) ? (per_parameter * parameters) : kTooLarge;
  p.bytes = (p.tape_bytes <= (kTooLarge - p.optimizer_bytes)) ? (p.tape_bytes + p.optimizer_bytes) : kTooLarge;
  return p;
}

/// The memory of lane batches (nn::lane_batch): the parameters on their own
/// tape with the optimizer's state, and a tape of N lanes for N samples'
/// graphs, whatever the batch size.
struct LanePlan {
  std::size_t lanes = 0U;         ///< N: samples per sweep
  MemoryPlan params;              ///< the parameter tape (parameters only) and the optimizer's state
  std::size_t sample_nodes = 0U;  ///< nodes of one sweep (N samples' graph): the lane tape's capacity
  std::size_t slots = 0U;         ///< argument slots of one sweep
  std::size_t lane_tape_bytes = 0U;  ///< Tape<Lanes<T, N>>::bytes_required(sample_nodes, slots)
  std::size_t bytes = 0U;         ///< params.bytes + lane_tape_bytes
};

/// The plan of lane batches of N lanes for a model of `parameters`
/// parameters whose sweep records at most `sample_nodes` nodes and `slots`
/// argument slots, its root included (nn::lane_batch_sweeps: the sweep
/// records its own root). Checked as make_plan is: kTooLarge, never a wrap.
template <class T, std::size_t N>
constexpr LanePlan size_lane_plan(std::size_t parameters, std::size_t sample_nodes, std::size_t slots,
                                  OptimizerKind optimizer) noexcept {
  using Lane = Tape<Lanes<T, N>>;
  constexpr std::size_t kTooLarge = burtorch::kTooLarge;
  LanePlan p;
  p.lanes = N;
  p.params = make_plan<T>(parameters, 0U, 0U, optimizer);
  p.sample_nodes = sample_nodes;
  p.slots = slots;
  p.lane_tape_bytes = ((p.sample_nodes != kTooLarge) && (p.slots != kTooLarge))
                          ? Lane::bytes_required(p.sample_nodes, p.slots)
                          : kTooLarge;
  p.bytes = ((p.params.bytes != kTooLarge) && (p.lane_tape_bytes <= (kTooLarge - p.params.bytes)))
                ? (p.params.bytes + p.lane_tape_bytes)
                : kTooLarge;
  return p;
}
/// The same for nn::lane_batch, whose sweep records `sample_nodes` nodes and
/// `slots` slots: one more node and its constant's slots for the mask are
/// added here.
template <class T, std::size_t N>
constexpr LanePlan make_lane_plan(std::size_t parameters, std::size_t sample_nodes, std::size_t slots,
                                  OptimizerKind optimizer) noexcept {
  constexpr std::size_t kTooLarge = burtorch::kTooLarge;
  constexpr std::size_t kMaskSlots = Recorder<Lanes<T, N>>::kConstantSlots;
  return size_lane_plan<T, N>(parameters, (sample_nodes < kTooLarge) ? (sample_nodes + 1U) : kTooLarge,
                              (slots <= (kTooLarge - kMaskSlots)) ? (slots + kMaskSlots) : kTooLarge, optimizer);
}

/// A model's parameters after its layers' create() calls: the run from the
/// first layer's first parameter to the last layer's last, if every create()
/// succeeded (ok) and that run holds exactly `count` parameters (the layers
/// one after another on the tape); kNoView otherwise.
inline View model_params(bool ok, View first, View last, std::size_t count) noexcept {
  const bool contiguous = ok && (count != 0U) && (count < kNoIndex) &&
                          ((static_cast<std::size_t>(last.first) + last.count) == (first.first + count));
  return contiguous ? View{first.first, static_cast<Index>(count)} : kNoView;
}

// ---------------------------------------------------------------------------
/// Sizes of a MakemoreMlp (the paper's defaults).
struct MlpConfig {
  Index vocab = 27U;    ///< V: token ids 0..V-1
  Index context = 16U;  ///< C: tokens of context per sample (at most MakemoreMlp::kMaxContext)
  Index embed = 64U;    ///< E: embedding width
  Index hidden = 64U;   ///< e: hidden-layer width
};

/// The paper's makemore MLP (Bengio et al. 2003; see the file comment).
template <class T>
class MakemoreMlp {
 public:
  static constexpr std::size_t kMaxContext = 64U;  ///< largest MlpConfig::context

  /// The layers of a configuration, as create() builds them. Init: C ~
  /// N(0, 1); W1 fan-in normal with tanh gain; b1 ~ U(-0.01, 0.01); W2 ~
  /// N(0, 0.01^2); b2 = 0 (makemore's scaled initialisation).
  /// @{
  static constexpr EmbeddingOptions embedding_options(const MlpConfig& c) noexcept {
    EmbeddingOptions o{};
    o.rows = c.vocab;
    o.dim = c.embed;
    o.init = Init::normal(0.0, 1.0);
    o.name = BURTORCH_NAME("C");
    return o;
  }
  static constexpr LinearOptions hidden_options(const MlpConfig& c) noexcept {
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
  static constexpr LinearOptions output_options(const MlpConfig& c) noexcept {
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
  static constexpr std::size_t parameters(const MlpConfig& c) noexcept {
    return Embedding<T>::parameters(embedding_options(c)) + Linear<T>::parameters(hidden_options(c)) +
           Linear<T>::parameters(output_options(c));
  }
  /// One sample: view list of the context rows, hidden layer, output
  /// layer (its input is one view), cross-entropy.
  static constexpr std::size_t logits_nodes(const MlpConfig& c) noexcept {
    return Linear<T>::nodes(hidden_options(c)) + Linear<T>::nodes(output_options(c));
  }
  /// logits_nodes() and the loss.
  static constexpr std::size_t sample_nodes(const MlpConfig& c) noexcept {
    return logits_nodes(c) + kCrossEntropyNodes;
  }
  /// The context's view list and the two layers' descriptors.
  static constexpr std::size_t sample_slots(const MlpConfig& c) noexcept {
    return (1U + (2U * static_cast<std::size_t>(c.context))) + Linear<T>::slots(hidden_options(c)) +
           Linear<T>::view_slots(output_options(c));
  }
  /// The model's memory plan (exact: tests/test_nn_plan.cpp).
  static constexpr MemoryPlan plan(const MlpConfig& c, OptimizerKind optimizer) noexcept {
    return make_plan<T>(parameters(c), sample_nodes(c), sample_slots(c), optimizer);
  }

  /// Creates every parameter (see embedding_options() and the layers after
  /// it); call on an empty tape (parameters first). False if the tape is full
  /// or failed or c.context is 0 or above kMaxContext; params() is then
  /// kNoView.
  bool create(Tape<T>& tape, const MlpConfig& c, Rng& rng) noexcept {
    config_ = c;
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
  const MlpConfig& config() const noexcept { return config_; }

  /// The logits for a context of config().context token ids.
  View logits(Tape<T>& tape, const std::uint8_t* context) const noexcept {
    View rows[kMaxContext];
    for (Index i = 0U; i < config_.context; ++i) {
      rows[i] = embedding_.row(context[i]);
    }
    const ViewList x = burtorch::view_list(tape, rows, config_.context);
    return output_.forward(tape, hidden_.forward(tape, x));
  }

  /// The loss of one sample: cross-entropy of the logits against `target`.
  Value<T> loss(Tape<T>& tape, const std::uint8_t* context, std::uint8_t target) const noexcept {
    return cross_entropy(tape, logits(tape, context), target);
  }

  /// A lane batch's sample (nn::lane_batch): the context's rows gathered
  /// per lane, the two layers over the shared weights, the cross-entropy
  /// against each lane's target.
  static constexpr std::size_t lane_sample_nodes(const MlpConfig& c) noexcept {
    return (static_cast<std::size_t>(c.context) * c.embed) + Linear<T>::lane_nodes(hidden_options(c)) +
           Linear<T>::lane_nodes(output_options(c)) + kLaneCrossEntropyNodes;
  }
  /// Argument slots of lane_sample_nodes()'s sample on a tape of N lanes.
  template <std::size_t N>
  static constexpr std::size_t lane_sample_slots(const MlpConfig& c) noexcept {
    return (static_cast<std::size_t>(c.context) * burtorch::gather_slots(1U, N)) +
           (1U + (2U * static_cast<std::size_t>(c.context))) +
           Linear<T>::lane_slots(hidden_options(c)) + Linear<T>::lane_view_slots(output_options(c)) +
           burtorch::pick_slots(N);
  }
  /// The memory plan of lane batches of N lanes (exact: tests/test_lanes.cpp).
  template <std::size_t N>
  static constexpr LanePlan lane_plan(const MlpConfig& c, OptimizerKind optimizer) noexcept {
    return make_lane_plan<T, N>(parameters(c), lane_sample_nodes(c), lane_sample_slots<N>(c), optimizer);
  }

  /// The loss of N samples at once on a tape of N lanes, the parameters
  /// shared from their own tape through p (nn::shared_params): lane l's
  /// context is contexts[l][0 .. context) and its target targets[l].
  template <std::size_t N>
  Value<Lanes<T, N>> loss(Tape<Lanes<T, N>>& tape, const SharedParams<T>& p, const std::uint8_t* const* contexts,
                          const std::uint8_t* targets) const noexcept {
    if ((contexts == nullptr) || (targets == nullptr) || (config_.context == 0U)) {
      static_cast<void>(tape.report(Status::kInvalidArgument));
      return Value<Lanes<T, N>>(&tape, kNoIndex);
    }
    Index ids[N];  // BT-DEV-013
    // One gather per context position: the rows follow one another. The
    // hidden layer takes them as one run per position, so that a position
    // whose token every lane shares (the padding before a word's start) is
    // read as shared scalars (see matvec_shared).
    Index first = kNoIndex;
    for (Index q = 0U; q < config_.context; ++q) {
      for (std::size_t l = 0U; l < N; ++l) {
        ids[l] = (contexts[l] != nullptr) ? contexts[l][q] : kNoIndex;
      }
      const View row = embedding_.gather(tape, p, ids, 1U);
      first = (q == 0U) ? row.first : first;
    }
    if (tape.status() != Status::kOk) {
      return Value<Lanes<T, N>>(&tape, kNoIndex);
    }
    const View x{first, config_.context * config_.embed};
    const View logits = output_.forward(tape, p, hidden_.forward(tape, p, burtorch::view_list_rows(tape, x, config_.embed)));
    for (std::size_t l = 0U; l < N; ++l) {
      ids[l] = targets[l];
    }
    return cross_entropy(tape, logits, ids);
  }

 private:
  MlpConfig config_;
  View params_ = kNoView;
  Embedding<T> embedding_;
  Linear<T> hidden_;
  Linear<T> output_;
};

// ---------------------------------------------------------------------------
/// Sizes of a Gpt (the paper's small model).
struct GptConfig {
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
  static constexpr std::size_t kMaxLayers = 8U;  ///< largest GptConfig::layers

  /// The layers of a configuration, as create() builds them (nanoGPT's
  /// init): embeddings and weight matrices ~ N(0, 0.02^2), biases 0,
  /// LayerNorm gains 1 and biases 0.
  /// @{
  static constexpr EmbeddingOptions token_options(const GptConfig& c) noexcept {
    EmbeddingOptions o{};
    o.rows = c.vocab;
    o.dim = c.width;
    o.init = kWeightInit;
    o.name = BURTORCH_NAME("tok");
    return o;
  }
  static constexpr EmbeddingOptions position_options(const GptConfig& c) noexcept {
    EmbeddingOptions o = token_options(c);
    o.rows = c.block;
    o.name = BURTORCH_NAME("pos");
    return o;
  }
  static constexpr LayerNormOptions norm_options(const GptConfig& c, const char* gain_name,
                                                 const char* bias_name) noexcept {
    LayerNormOptions o{};
    o.width = c.width;
    o.eps = c.eps;
    o.gain_name = gain_name;
    o.bias_name = bias_name;
    return o;
  }
  static constexpr AttentionOptions attention_options(const GptConfig& c) noexcept {
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
  static constexpr LinearOptions ff1_options(const GptConfig& c) noexcept {
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
  static constexpr LinearOptions ff2_options(const GptConfig& c) noexcept {
    LinearOptions o{};
    o.in = 4U * c.width;
    o.out = c.width;
    o.weight_init = kWeightInit;
    o.bias_init = Init::zeros();
    o.weight_name = BURTORCH_NAME("ff2.W");
    o.bias_name = BURTORCH_NAME("ff2.b");
    return o;
  }
  static constexpr LinearOptions head_options(const GptConfig& c) noexcept {
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
  static constexpr std::size_t block_parameters(const GptConfig& c) noexcept {
    return (2U * LayerNorm<T>::parameters(norm_options(c, nullptr, nullptr))) +
           CausalSelfAttention<T>::parameters(attention_options(c)) + Linear<T>::parameters(ff1_options(c)) +
           Linear<T>::parameters(ff2_options(c));
  }
  /// All parameters of the model.
  static constexpr std::size_t parameters(const GptConfig& c) noexcept {
    return Embedding<T>::parameters(token_options(c)) + Embedding<T>::parameters(position_options(c)) +
           (c.layers * block_parameters(c)) + LayerNorm<T>::parameters(norm_options(c, nullptr, nullptr)) +
           Linear<T>::parameters(head_options(c));
  }
  /// A sequence of `steps` positions (<= block) up to the logits.
  static constexpr std::size_t logits_nodes(const GptConfig& c, std::size_t steps) noexcept {
    const std::size_t d = c.width;
    const std::size_t norm = LayerNorm<T>::nodes(norm_options(c, nullptr, nullptr));
    const std::size_t per_block = (steps * norm) + CausalSelfAttention<T>::nodes(attention_options(c), steps) +
                                  (steps * d) + (steps * norm) + (steps * Linear<T>::nodes(ff1_options(c))) +
                                  (steps * Linear<T>::nodes(ff2_options(c))) + (steps * d);
    return (steps * d) + (c.layers * per_block) + (steps * norm) + (steps * Linear<T>::nodes(head_options(c)));
  }
  /// Argument slots of logits_nodes()'s sequence.
  static constexpr std::size_t logits_slots(const GptConfig& c, std::size_t steps) noexcept {
    const std::size_t norm = LayerNorm<T>::slots(norm_options(c, nullptr, nullptr));
    const std::size_t per_block = (steps * norm) + CausalSelfAttention<T>::slots(attention_options(c), steps) +
                                  (steps * norm) + (steps * Linear<T>::view_slots(ff1_options(c))) +
                                  (steps * Linear<T>::view_slots(ff2_options(c)));
    return (c.layers * per_block) + (steps * norm) + (steps * Linear<T>::view_slots(head_options(c)));
  }
  /// Loss of a sequence: a cross-entropy per position and their mean (a list).
  static constexpr std::size_t sample_nodes(const GptConfig& c) noexcept {
    return logits_nodes(c, c.block) + (c.block * kCrossEntropyNodes) + 1U;
  }
  /// Slots of a full sequence's loss (the mean's list: one per position).
  static constexpr std::size_t sample_slots(const GptConfig& c) noexcept {
    return logits_slots(c, c.block) + c.block;
  }
  /// The model's memory plan for sequences of `block` positions.
  static constexpr MemoryPlan plan(const GptConfig& c, OptimizerKind optimizer) noexcept {
    return make_plan<T>(parameters(c), sample_nodes(c), sample_slots(c), optimizer);
  }

  /// Creates every parameter in the order of the file comment (see
  /// token_options() and the options after it); call on an empty tape. False
  /// if the tape is full or failed, or the configuration is out of range
  /// (layers, block, heads); params() is then kNoView.
  bool create(Tape<T>& tape, const GptConfig& c, Rng& rng) noexcept {
    config_ = c;
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
  const GptConfig& config() const noexcept { return config_; }

  /// logits[t] for each position t < steps of the token ids.
  bool logits(Tape<T>& tape, const std::uint8_t* tokens, Index steps, View* logits_out) const noexcept {
    if ((steps == 0U) || (steps > config_.block)) {
      static_cast<void>(tape.report(Status::kInvalidArgument));
      return false;
    }
    View x[kMaxSteps];
    View y[kMaxSteps];
    for (Index t = 0U; t < steps; ++t) {
      x[t] = add(tape, token_.row(tokens[t]), position_.row(t));
    }
    for (Index l = 0U; l < config_.layers; ++l) {
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

  /// Mean cross-entropy over the positions of tokens[0..steps) predicting
  /// targets[0..steps).
  Value<T> loss(Tape<T>& tape, const std::uint8_t* tokens, const std::uint8_t* targets, Index steps) const noexcept {
    View z[kMaxSteps];
    if (!logits(tape, tokens, steps, z)) {
      return Value<T>(&tape, kNoIndex);
    }
    Value<T> losses[kMaxSteps];
    for (Index t = 0U; t < steps; ++t) {
      losses[t] = cross_entropy(tape, z[t], targets[t]);
    }
    return reduce_mean(losses, steps);
  }

  /// A lane batch's sequence of `block` positions (nn::lane_batch): the
  /// embeddings gathered per lane, every layer over the shared weights.
  static constexpr std::size_t lane_sample_nodes(const GptConfig& c) noexcept {
    return embed_nodes(c) + (c.layers * block_lane_nodes(c)) + head_lane_nodes(c);
  }
  /// Argument slots of lane_sample_nodes()'s sequence on a tape of N lanes.
  template <std::size_t N>
  static constexpr std::size_t lane_sample_slots(const GptConfig& c) noexcept {
    return embed_lane_slots<N>(c) + (c.layers * block_lane_slots<N>(c)) + head_lane_slots<N>(c);
  }
  /// The memory plan of lane batches of N lanes (exact: tests/test_lanes.cpp).
  template <std::size_t N>
  static constexpr LanePlan lane_plan(const GptConfig& c, OptimizerKind optimizer) noexcept {
    return make_lane_plan<T, N>(parameters(c), lane_sample_nodes(c), lane_sample_slots<N>(c), optimizer);
  }

  /// The loss of N sequences at once on a tape of N lanes, the parameters
  /// shared from their own tape through p (nn::shared_params): lane l reads
  /// tokens[l][0 .. steps) and predicts targets[l][0 .. steps).
  template <std::size_t N>
  Value<Lanes<T, N>> loss(Tape<Lanes<T, N>>& tape, const SharedParams<T>& p, const std::uint8_t* const* tokens,
                          const std::uint8_t* const* targets, Index steps) const noexcept {
    using U = Lanes<T, N>;
    View x[kMaxSteps];
    if (!lane_arguments(tape, tokens, targets, steps) || !lane_embed(tape, p, tokens, steps, x)) {
      return Value<U>(&tape, kNoIndex);
    }
    for (Index l = 0U; l < config_.layers; ++l) {
      if (!lane_block(tape, p, l, x, steps)) {
        return Value<U>(&tape, kNoIndex);
      }
    }
    return lane_head(tape, p, x, targets, steps);
  }

  /// Gradient checkpointing (recomputation) for lane batches: the nodes of
  /// one checkpointed sweep (lane_sweep) of N sequences of `block`
  /// positions. The inputs of each block's two halves (attention,
  /// feed-forward) and the final norm's are kept as leaves, (2 x layers + 1)
  /// x block x width of them, and one phase is recorded at a time on top:
  /// the embeddings, one half of a block, or the final norm, head and losses.
  static constexpr std::size_t checkpoint_sample_nodes(const GptConfig& c) noexcept {
    const std::size_t seeds = (static_cast<std::size_t>(c.block) * c.width) + 1U;  // y * g terms and their sum
    const std::size_t phase = max_of(max_of(embed_nodes(c) + seeds, attention_half_nodes(c) + seeds),
                                     max_of(feed_forward_half_nodes(c) + seeds, head_lane_nodes(c) + 1U));  // + mask
    return (((2U * static_cast<std::size_t>(c.layers)) + 1U) * c.block * c.width) + phase;
  }
  /// Argument slots of checkpoint_sample_nodes()'s sweep on a tape of N lanes.
  template <std::size_t N>
  static constexpr std::size_t checkpoint_sample_slots(const GptConfig& c) noexcept {
    const std::size_t seeds = static_cast<std::size_t>(c.block) * c.width * Recorder<Lanes<T, N>>::kConstantSlots;
    return max_of(max_of(embed_lane_slots<N>(c) + seeds, attention_half_slots<N>(c) + seeds),
                  max_of(feed_forward_half_slots<N>(c) + seeds,
                         head_lane_slots<N>(c) + Recorder<Lanes<T, N>>::kConstantSlots));  // and the mask's constant
  }
  /// The memory plan of checkpointed lane batches of N lanes
  /// (nn::lane_batch_sweeps with lane_sweep; exact: tests/test_lanes.cpp):
  /// the lane tape holds half a block's graph instead of every block's.
  template <std::size_t N>
  static constexpr LanePlan checkpoint_plan(const GptConfig& c, OptimizerKind optimizer) noexcept {
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
  /// recorded; a lane tape too small: kCapacityExceeded); the caller rewinds
  /// the tape.
  template <std::size_t N>
  bool lane_sweep(Tape<Lanes<T, N>>& tape, const SharedParams<T>& p, const std::uint8_t* const* tokens,
                  const std::uint8_t* const* targets, Index steps, const Lanes<T, N>& mask,
                  Lanes<T, N>* losses) const noexcept {
    using U = Lanes<T, N>;
    if ((losses == nullptr) || !lane_arguments(tape, tokens, targets, steps)) {
      static_cast<void>(tape.report(Status::kInvalidArgument));
      return false;
    }
    const Index span = steps * config_.width;  // one half's input, position after position
    const Index halves = 2U * config_.layers;
    // The kept inputs: leaves first, so no backward sweep passes over them.
    const std::uint64_t leaves = (static_cast<std::uint64_t>(halves) + 1U) * span;
    if (leaves > (tape.usage().node_capacity - tape.size())) {
      static_cast<void>(tape.report(Status::kCapacityExceeded));
      return false;
    }
    const Index kept = static_cast<Index>(tape.size());
    for (std::uint64_t i = 0U; i < leaves; ++i) {
      static_cast<void>(tape.leaf(U(T(0))));
    }
    if (tape.status() != Status::kOk) {
      return false;
    }
    const Mark phase = tape.mark();
    View x[kMaxSteps];
    // Forward: each phase's outputs become the next one's kept input.
    bool ok = lane_embed(tape, p, tokens, steps, x) && keep(tape, x, steps, kept) && (tape.rewind(phase) == Status::kOk);
    for (Index h = 0U; ok && (h < halves); ++h) {
      kept_views(kept + (h * span), steps, x);
      ok = lane_half(tape, p, h, x, steps) && keep(tape, x, steps, kept + ((h + 1U) * span)) &&
           (tape.rewind(phase) == Status::kOk);
    }
    // The head and the losses, backward from loss * mask as lane_batch does.
    if (ok) {
      kept_views(kept + (halves * span), steps, x);
      const Value<U> loss = lane_head(tape, p, x, targets, steps);
      const Value<U> root = loss * mask;
      ok = (tape.status() == Status::kOk) && (tape.backward(root) == Status::kOk);
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

 private:
  // --- the lane sweep's parts (loss() and lane_sweep() share them) ---------
  static constexpr std::size_t max_of(std::size_t a, std::size_t b) noexcept { return (a > b) ? a : b; }
  static constexpr std::size_t embed_nodes(const GptConfig& c) noexcept {
    return static_cast<std::size_t>(c.block) * 3U * c.width;
  }
  // A block's two halves: the attention (its norm, the attention, the
  // residual) and the feed-forward (its norm, the two layers, the residual).
  static constexpr std::size_t attention_half_nodes(const GptConfig& c) noexcept {
    const std::size_t steps = c.block;
    const std::size_t norm = LayerNorm<T>::nodes(norm_options(c, nullptr, nullptr));
    return (steps * norm) + CausalSelfAttention<T>::lane_nodes(attention_options(c), steps) + (steps * c.width);
  }
  static constexpr std::size_t feed_forward_half_nodes(const GptConfig& c) noexcept {
    const std::size_t steps = c.block;
    const std::size_t norm = LayerNorm<T>::nodes(norm_options(c, nullptr, nullptr));
    return (steps * norm) + (steps * Linear<T>::lane_nodes(ff1_options(c))) +
           (steps * Linear<T>::lane_nodes(ff2_options(c))) + (steps * c.width);
  }
  static constexpr std::size_t block_lane_nodes(const GptConfig& c) noexcept {
    return attention_half_nodes(c) + feed_forward_half_nodes(c);
  }
  static constexpr std::size_t head_lane_nodes(const GptConfig& c) noexcept {
    const std::size_t steps = c.block;
    const std::size_t norm = LayerNorm<T>::nodes(norm_options(c, nullptr, nullptr));
    return (steps * norm) + (steps * Linear<T>::lane_nodes(head_options(c))) + (steps * kLaneCrossEntropyNodes) + 1U;
  }
  template <std::size_t N>
  static constexpr std::size_t embed_lane_slots(const GptConfig& c) noexcept {
    return static_cast<std::size_t>(c.block) * 2U * burtorch::gather_slots(1U, N);
  }
  template <std::size_t N>
  static constexpr std::size_t attention_half_slots(const GptConfig& c) noexcept {
    const std::size_t steps = c.block;
    return (steps * burtorch::kScaleShiftSharedSlots) +
           CausalSelfAttention<T>::template lane_slots<N>(attention_options(c), steps);
  }
  template <std::size_t N>
  static constexpr std::size_t feed_forward_half_slots(const GptConfig& c) noexcept {
    const std::size_t steps = c.block;
    return (steps * burtorch::kScaleShiftSharedSlots) +
           (steps * Linear<T>::lane_view_slots(ff1_options(c))) + (steps * Linear<T>::lane_view_slots(ff2_options(c)));
  }
  template <std::size_t N>
  static constexpr std::size_t block_lane_slots(const GptConfig& c) noexcept {
    return attention_half_slots<N>(c) + feed_forward_half_slots<N>(c);
  }
  template <std::size_t N>
  static constexpr std::size_t head_lane_slots(const GptConfig& c) noexcept {
    const std::size_t steps = c.block;
    return (steps * burtorch::kScaleShiftSharedSlots) + (steps * Linear<T>::lane_view_slots(head_options(c))) +
           (steps * burtorch::pick_slots(N)) + steps;
  }

  template <class U>
  bool lane_arguments(Tape<U>& tape, const std::uint8_t* const* tokens, const std::uint8_t* const* targets,
                      Index steps) const noexcept {
    // params_ is empty until create() succeeded (config_ may then hold sizes it refused).
    if ((params_.count == 0U) || (tokens == nullptr) || (targets == nullptr) || (steps == 0U) ||
        (steps > config_.block)) {
      static_cast<void>(tape.report(Status::kInvalidArgument));
      return false;
    }
    return true;
  }
  // x[t] = the token's row + the position's row, gathered per lane.
  template <std::size_t N>
  bool lane_embed(Tape<Lanes<T, N>>& tape, const SharedParams<T>& p, const std::uint8_t* const* tokens, Index steps,
                  View* x) const noexcept {
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
  // Block l over x[0 .. steps), in place: its two halves.
  template <std::size_t N>
  bool lane_block(Tape<Lanes<T, N>>& tape, const SharedParams<T>& p, Index l, View* x, Index steps) const noexcept {
    return lane_half(tape, p, 2U * l, x, steps) && lane_half(tape, p, (2U * l) + 1U, x, steps);
  }
  // Half h of the blocks over x[0 .. steps), in place: block h / 2's
  // attention (h even) or feed-forward (h odd), each with its norm and
  // residual.
  template <std::size_t N>
  bool lane_half(Tape<Lanes<T, N>>& tape, const SharedParams<T>& p, Index h, View* x, Index steps) const noexcept {
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
  // The final norm, the head and the mean cross-entropy over the positions.
  template <std::size_t N>
  Value<Lanes<T, N>> lane_head(Tape<Lanes<T, N>>& tape, const SharedParams<T>& p, const View* x,
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
  // x[t] = the kept leaves of position t from `first`.
  void kept_views(Index first, Index steps, View* x) const noexcept {
    for (Index t = 0U; t < steps; ++t) {
      x[t] = View{first + (t * config_.width), config_.width};
    }
  }
  // Copies the values of x[0 .. steps) into the kept leaves from `first`.
  template <class U>
  bool keep(Tape<U>& tape, const View* x, Index steps, Index first) const noexcept {
    if (tape.status() != Status::kOk) {
      return false;
    }
    U* const v = tape.values();
    for (Index t = 0U; t < steps; ++t) {
      for (Index j = 0U; j < config_.width; ++j) {
        v[first + (t * config_.width) + j] = v[x[t].first + j];
      }
    }
    return true;
  }
  // Backward from sum(x * g) over the outputs x[0 .. steps), g the
  // gradients of the kept leaves from `first`: each output's gradient is
  // exactly its g (one times g, added to zero).
  template <class U>
  bool seeded_backward(Tape<U>& tape, const View* x, Index steps, Index first) const noexcept {
    const U* const g = tape.grads();
    const Index terms = static_cast<Index>(tape.size());
    for (Index t = 0U; t < steps; ++t) {
      for (Index j = 0U; j < config_.width; ++j) {
        static_cast<void>(Value<U>(&tape, x[t].first + j) * g[first + (t * config_.width) + j]);
      }
    }
    const Value<U> root = burtorch::reduce(tape, Op::kSumR, burtorch::View{terms, steps * config_.width});
    return (tape.status() == Status::kOk) && (tape.backward(root) == Status::kOk);
  }

  struct Block {
    LayerNorm<T> ln1;
    CausalSelfAttention<T> attn;
    LayerNorm<T> ln2;
    Linear<T> ff1;
    Linear<T> ff2;
  };
  static constexpr Init kWeightInit = Init::normal(0.0, 0.02);

  GptConfig config_;
  View params_ = kNoView;
  Embedding<T> token_;
  Embedding<T> position_;
  Block blocks_[kMaxLayers];
  LayerNorm<T> final_norm_;
  Linear<T> head_;
};

// ---------------------------------------------------------------------------
namespace detail {
/// The samples of a serial batch: zeroes the gradients of `params`, then per
/// sample records its loss, runs backward and rewinds; returns the sum of
/// the losses in *total (the gradients hold the sum of theirs); false on
/// error (see serial_batch).
template <class T, class SampleLoss>
bool batch_sum(Tape<T>& tape, View params, std::size_t count, SampleLoss& sample_loss, T* total) noexcept {
  if (BURTORCH_UNLIKELY(!is_recorded(tape, params))) {
    static_cast<void>(tape.report(Status::kInvalidArgument));
    return false;
  }
  tape.zero_grad(params.first, params.count);
  const Mark start = tape.mark();
  T sum = T(0);
  for (std::size_t i = 0U; i < count; ++i) {
    const Value<T> loss = sample_loss(tape, i);
    if ((tape.status() != Status::kOk) || (tape.backward(loss) != Status::kOk)) {
      static_cast<void>(tape.rewind(start));
      return false;
    }
    sum += loss.value();
    static_cast<void>(tape.rewind(start));
  }
  *total = sum;
  return true;
}
/// A serial batch and `step(tape, params, 1/count)`: the mean loss, or NaN
/// (see serial_batch with an optimizer).
template <class T, class SampleLoss, class Step>
T batch_step(Tape<T>& tape, View params, std::size_t count, SampleLoss& sample_loss, Step step) noexcept {
  if (count == 0U) {
    static_cast<void>(tape.report(Status::kInvalidArgument));
    return std::numeric_limits<T>::quiet_NaN();
  }
  T total = T(0);
  if (!batch_sum(tape, params, count, sample_loss, &total)) {
    return std::numeric_limits<T>::quiet_NaN();
  }
  const Status stepped = step(tape, params, T(1) / static_cast<T>(count));
  if (stepped != Status::kOk) {
    static_cast<void>(tape.report(stepped));
    return std::numeric_limits<T>::quiet_NaN();
  }
  return total / static_cast<T>(count);
}
}  // namespace detail

/// A serial batch: for each of `count` samples, record its loss after the
/// parameters, backward, rewind; the gradients of `params` (model.params())
/// accumulate and are divided by `count` (the gradient of the mean loss).
/// Peak memory is one sample's, whatever the batch size.
/// `sample_loss(tape, i)` records the loss of sample i and returns it.
/// Returns the mean loss; NaN on error, the tape's status tells why (a
/// `params` that is empty or not recorded on the tape: kInvalidArgument,
/// recorded before any sample runs).
template <class T, class SampleLoss>
T serial_batch(Tape<T>& tape, View params, std::size_t count, SampleLoss&& sample_loss) noexcept {
  T total = T(0);
  if (count == 0U) {  // no mean of no samples: refused before the gradients are touched
    static_cast<void>(tape.report(Status::kInvalidArgument));
    return std::numeric_limits<T>::quiet_NaN();
  }
  if (!detail::batch_sum(tape, params, count, sample_loss, &total)) {
    return std::numeric_limits<T>::quiet_NaN();
  }
  scale_gradients(tape.grads() + params.first, params.count, T(1) / static_cast<T>(count));
  return total / static_cast<T>(count);
}

/// serial_batch() and the optimizer step after it, the batch's 1/count
/// folded into the step (Optimizer::step with a gradient scale): the
/// parameters and the optimizer's state end bitwise as after serial_batch()
/// then opt.step(tape, params), with one pass over the gradients fewer; the
/// gradients are left as the batch's sums (not divided by count). The rule
/// is chosen at run time (every rule's code is compiled in); the overload
/// with a template argument, serial_batch<nn::OptimizerKind::kSgd>(...),
/// compiles in only that rule's. Returns the mean loss; NaN if a sample
/// failed (the tape's status tells why; nothing updated) or the step was
/// refused (its reason is recorded on the tape with report(); nothing
/// updated). count == 0 is refused with kInvalidArgument.
template <class T, class SampleLoss>
T serial_batch(Tape<T>& tape, View params, std::size_t count, SampleLoss&& sample_loss, Optimizer<T>& opt) noexcept {
  return detail::batch_step(tape, params, count, sample_loss,
                            [&opt](Tape<T>& t, View p, T scale) noexcept { return opt.step(t, p, scale); });
}
/// The same with the update rule chosen at compile time,
/// serial_batch<nn::OptimizerKind::kSgd>(tape, params, count, sample_loss,
/// opt): only rule K's code is compiled in (Optimizer::step<K>); an
/// optimizer configured with another rule refuses the step (NaN,
/// kInvalidArgument on the tape, nothing updated).
template <OptimizerKind K, class T, class SampleLoss>
T serial_batch(Tape<T>& tape, View params, std::size_t count, SampleLoss&& sample_loss, Optimizer<T>& opt) noexcept {
  return detail::batch_step(tape, params, count, sample_loss, [&opt](Tape<T>& t, View p, T scale) noexcept {
    return opt.template step<K>(t, p, scale);
  });
}

/// The parameters of `tape` (every node it holds: the parameter region
/// first) as shared parameters of a tape of lanes.
template <class T>
inline SharedParams<T> shared_params(Tape<T>& tape) noexcept {
  SharedParams<T> p;
  p.values = tape.values();
  p.grads = tape.grads();
  p.count = static_cast<Index>(tape.size());
  return p;
}

namespace detail {
/// The sweeps of a lane batch: zeroes the gradients of `params`, then per
/// sweep of up to N samples calls sweep(lanes, p, first, active, mask,
/// &losses), which records the sweep, runs its backward (the mask's ones
/// and zeros on the lanes past the batch's end) and leaves lane l's loss in
/// losses.lane[l], then rewinds; *total = the lanes' losses added in sample
/// order (the gradients hold the sum of the samples'); false on error (see
/// lane_batch).
template <class T, std::size_t N, class Sweep>
bool lane_sweeps(Tape<T>& tape, View params, Tape<Lanes<T, N>>& lanes, std::size_t count, Sweep& sweep,
                 T* total) noexcept {
  using U = Lanes<T, N>;
  if (BURTORCH_UNLIKELY((count == 0U) || !is_recorded(tape, params))) {
    static_cast<void>(tape.report(Status::kInvalidArgument));
    return false;
  }
  tape.zero_grad(params.first, params.count);
  const SharedParams<T> shared = shared_params(tape);
  const Mark start = lanes.mark();
  T sum = T(0);
  for (std::size_t first = 0U; first < count; first += N) {
    const std::size_t active = ((count - first) < N) ? (count - first) : N;
    U mask(T(0));
    for (std::size_t l = 0U; l < active; ++l) {
      mask.lane[l] = T(1);
    }
    U losses(T(0));
    const bool swept = sweep(lanes, shared, first, active, mask, &losses) && (lanes.status() == Status::kOk);
    static_cast<void>(lanes.rewind(start));
    if (!swept) {
      return false;
    }
    for (std::size_t l = 0U; l < active; ++l) {
      sum += losses.lane[l];
    }
  }
  *total = sum;
  return true;
}
/// lane_sweeps with sweeps that record sample_loss's node, times the mask,
/// and run backward from it (nn::lane_batch).
template <class T, std::size_t N, class SampleLoss>
bool lane_sum(Tape<T>& tape, View params, Tape<Lanes<T, N>>& lanes, std::size_t count, SampleLoss& sample_loss,
              T* total) noexcept {
  using U = Lanes<T, N>;
  auto sweep = [&sample_loss](Tape<U>& t, const SharedParams<T>& p, std::size_t first, std::size_t active,
                              const U& mask, U* losses) noexcept {
    const Value<U> loss = sample_loss(t, p, first, active);
    const Value<U> root = loss * mask;
    if ((t.status() != Status::kOk) || (t.backward(root) != Status::kOk)) {
      return false;
    }
    *losses = loss.value();
    return true;
  };
  return lane_sweeps(tape, params, lanes, count, sweep, total);
}
/// The mean loss after a lane batch's sums, its gradients divided by count
/// (lane_batch, lane_batch_sweeps without an optimizer).
template <class T>
T lane_mean(Tape<T>& tape, View params, std::size_t count, bool summed, T total) noexcept {
  if (!summed) {
    return std::numeric_limits<T>::quiet_NaN();
  }
  scale_gradients(tape.grads() + params.first, params.count, T(1) / static_cast<T>(count));
  return total / static_cast<T>(count);
}
/// The mean loss and the step after a lane batch's sums (lane_batch with
/// an optimizer, lane_batch_sweeps).
template <class T>
T lane_step(Tape<T>& tape, View params, std::size_t count, bool summed, T total, Optimizer<T>& opt) noexcept {
  if (!summed) {
    return std::numeric_limits<T>::quiet_NaN();
  }
  const Status stepped = opt.step(tape, params, T(1) / static_cast<T>(count));
  if (stepped != Status::kOk) {
    static_cast<void>(tape.report(stepped));
    return std::numeric_limits<T>::quiet_NaN();
  }
  return total / static_cast<T>(count);
}
}  // namespace detail

/// A lane batch: serial_batch with N samples per sweep. The parameters stay
/// on `tape` (one scalar each); `lanes` is a tape of N lanes that records
/// one sweep's graph at a time, lane l computing sample first + l. For each
/// sweep of up to N samples (the last one may be partial), sample_loss(
/// lanes, p, first, active) records the losses of samples first .. first +
/// active - 1 in lanes 0 .. active - 1 (lanes from `active` on must compute
/// some valid sample, e.g. a copy of lane 0: their values are discarded and
/// their gradient is zero) and returns that node; the sweep's root is the
/// losses times a mask of ones and zeros (one node), then backward, which
/// adds every lane's parameter gradients to `tape`, and a rewind of
/// `lanes`. Then the gradients of `params` are divided by `count`, as
/// serial_batch does. Peak memory: the parameters, their gradients and N
/// samples' graph. Returns the mean loss (the lanes' losses added in sample
/// order); NaN on error, the status of the tape at fault says why (count 0,
/// params empty or not on `tape`: kInvalidArgument on `tape`, before any
/// sample). The result equals serial_batch's up to the order of
/// floating-point sums (docs/training.md, "Lane batches").
template <class T, std::size_t N, class SampleLoss>
T lane_batch(Tape<T>& tape, View params, Tape<Lanes<T, N>>& lanes, std::size_t count,
             SampleLoss&& sample_loss) noexcept {
  T total = T(0);
  const bool summed = detail::lane_sum(tape, params, lanes, count, sample_loss, &total);
  return detail::lane_mean(tape, params, count, summed, total);
}

/// lane_batch() and the optimizer step after it, the batch's 1/count folded
/// into the step as serial_batch(..., opt) does it (the gradients are left
/// as the batch's sums). Returns the mean loss; NaN if a sweep failed (the
/// status of the tape at fault tells why; nothing updated) or the step was
/// refused (its reason is recorded on `tape`; nothing updated).
template <class T, std::size_t N, class SampleLoss>
T lane_batch(Tape<T>& tape, View params, Tape<Lanes<T, N>>& lanes, std::size_t count, SampleLoss&& sample_loss,
             Optimizer<T>& opt) noexcept {
  T total = T(0);
  const bool summed = detail::lane_sum(tape, params, lanes, count, sample_loss, &total);
  return detail::lane_step(tape, params, count, summed, total, opt);
}

/// A lane batch whose sweeps run their own backward, e.g. gradient
/// checkpointing (Gpt::lane_sweep: half a block's graph in memory instead of
/// every block's). For each sweep of up to N samples, sweep(lanes, p,
/// first, active, mask, &losses) records samples first .. first + active
/// - 1 in lanes 0 .. active - 1 (the other lanes compute some valid sample),
/// adds the gradients of the lanes' losses times `mask` (ones on the active
/// lanes, zeros after) to the shared parameters p.grads, leaves lane l's
/// loss in losses->lane[l] and returns true, or false on error; the lane
/// tape is then rewound. Then the optimizer's step with the batch's 1/count
/// folded in, as lane_batch(..., opt). Returns the mean loss; NaN on error
/// (the status of the tape at fault says why; nothing updated).
template <class T, std::size_t N, class Sweep>
T lane_batch_sweeps(Tape<T>& tape, View params, Tape<Lanes<T, N>>& lanes, std::size_t count, Sweep&& sweep,
                    Optimizer<T>& opt) noexcept {
  T total = T(0);
  const bool summed = detail::lane_sweeps(tape, params, lanes, count, sweep, &total);
  return detail::lane_step(tape, params, count, summed, total, opt);
}
/// The same without the step: the gradients of `params` end as the batch's
/// mean (as lane_batch without an optimizer). Returns the mean loss; NaN on
/// error.
template <class T, std::size_t N, class Sweep>
T lane_batch_sweeps(Tape<T>& tape, View params, Tape<Lanes<T, N>>& lanes, std::size_t count, Sweep&& sweep) noexcept {
  T total = T(0);
  const bool summed = detail::lane_sweeps(tape, params, lanes, count, sweep, &total);
  return detail::lane_mean(tape, params, count, summed, total);
}

}  // namespace nn
}  // namespace burtorch

#endif  // BURTORCH_NN_MODELS_HPP
