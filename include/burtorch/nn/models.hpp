// SPDX-License-Identifier: Apache-2.0
/// @file
/// The paper's two models, built from layers.hpp, with their memory plans.
///
/// MakemoreMlp (paper §2.4, Bengio et al. 2003): a context of `context`
/// tokens, each an embedding row of `embed` parameters; the rows feed the
/// hidden layer as one segment list (no concatenation); tanh hidden layer of
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
/// constexpr nn::MemoryPlan kPlan = nn::make_plan<float>(
///     nn::Linear<float>::parameters(2, 8, true) + nn::Linear<float>::parameters(8, 1, true),
///     2 + nn::Linear<float>::nodes(8, nn::Activation::kTanh) + nn::Linear<float>::nodes(1, nn::Activation::kSigmoid) + 2,
///     nn::Linear<float>::view_slots(8) + nn::Linear<float>::view_slots(1), nn::OptimizerKind::kAdam);
/// static_assert(kPlan.bytes <= kRamForModel, "does not fit");
/// bt::FixedTape<float, kPlan.nodes, kPlan.slots, kPlan.parameters> tape;
/// float adam_state[kPlan.optimizer_bytes / sizeof(float)];
/// @endcode
/// examples/xor_nn builds exactly this and checks it against what a sample
/// records. A plan too small shows at run time as Status::kCapacityExceeded,
/// never as a write past the buffer.
///
/// Every sum and product is checked: a plan that does not fit this target's
/// size_t (or a tape an Index cannot address) has nodes, tape_bytes,
/// optimizer_bytes or bytes equal to Tape<T>::kTooLarge (the largest size_t),
/// never a wrapped small number, so `static_assert(plan.bytes <= budget)`
/// fails for it.
template <class T>
constexpr MemoryPlan make_plan(std::size_t parameters, std::size_t sample_nodes, std::size_t slots,
                               OptimizerKind optimizer) noexcept {
  constexpr std::size_t kTooLarge = Tape<T>::kTooLarge;
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

  /// d = V*E + (C*E + 1)*e + (e + 1)*V.
  static constexpr std::size_t parameters(const MlpConfig& c) noexcept {
    return Embedding<T>::parameters(c.vocab, c.embed) +
           Linear<T>::parameters(static_cast<std::size_t>(c.context) * c.embed, c.hidden, true) +
           Linear<T>::parameters(c.hidden, c.vocab, true);
  }
  /// One sample: segment list of the context rows, hidden layer, output
  /// layer (its input is one view), cross-entropy.
  static constexpr std::size_t logits_nodes(const MlpConfig& c) noexcept {
    return Linear<T>::nodes(c.hidden, Activation::kTanh) + Linear<T>::nodes(c.vocab, Activation::kIdentity);
  }
  /// logits_nodes() and the loss.
  static constexpr std::size_t sample_nodes(const MlpConfig& c) noexcept {
    return logits_nodes(c) + kCrossEntropyNodes;
  }
  /// The context's segment list and the two layers' descriptors.
  static constexpr std::size_t sample_slots(const MlpConfig& c) noexcept {
    return (1U + (2U * static_cast<std::size_t>(c.context))) + Linear<T>::slots(c.hidden) +
           Linear<T>::view_slots(c.vocab);
  }
  /// The model's memory plan (exact: tests/test_nn_plan.cpp).
  static constexpr MemoryPlan plan(const MlpConfig& c, OptimizerKind optimizer) noexcept {
    return make_plan<T>(parameters(c), sample_nodes(c), sample_slots(c), optimizer);
  }

  /// Creates every parameter; call on an empty tape (parameters first).
  /// Init: C ~ N(0, 1); W1 fan-in normal with tanh gain; b1 ~ U(-0.01, 0.01);
  /// W2 ~ N(0, 0.01^2); b2 = 0 (makemore's scaled initialisation).
  bool create(Tape<T>& tape, const MlpConfig& c, Rng& rng) noexcept {
    config_ = c;
    first_ = static_cast<Index>(tape.size());
    if ((c.context == 0U) || (c.context > kMaxContext)) {
      return false;
    }
    const bool ok =
        embedding_.create(tape, c.vocab, c.embed, Init::normal(0.0, 1.0), rng, BURTORCH_NAME("C")) &&
        hidden_.create(tape, c.context * c.embed, c.hidden, true, Activation::kTanh, Init::fan_in_normal(kGainTanh),
                       Init::uniform(-0.01, 0.01), rng, BURTORCH_NAME("W1"), BURTORCH_NAME("b1")) &&
        output_.create(tape, c.hidden, c.vocab, true, Activation::kIdentity, Init::normal(0.0, 0.01), Init::zeros(),
                       rng, BURTORCH_NAME("W2"), BURTORCH_NAME("b2"));
    return ok && (tape.size() == (first_ + parameters(c)));
  }

  /// Index of the first parameter on the tape (they are consecutive).
  Index first_parameter() const noexcept { return first_; }
  /// parameters(config()).
  std::size_t parameter_count() const noexcept { return parameters(config_); }
  /// The sizes given to create().
  const MlpConfig& config() const noexcept { return config_; }

  /// The logits for a context of config().context token ids.
  View logits(Tape<T>& tape, const std::uint8_t* context) const noexcept {
    Segment rows[kMaxContext];
    for (Index i = 0U; i < config_.context; ++i) {
      rows[i] = embedding_.row(context[i]);
    }
    const SegmentList x = tape.segments(rows, config_.context);
    return output_.forward(tape, hidden_.forward(tape, x));
  }

  /// The loss of one sample: cross-entropy of the logits against `target`.
  Value<T> loss(Tape<T>& tape, const std::uint8_t* context, std::uint8_t target) const noexcept {
    return cross_entropy(tape, logits(tape, context), target);
  }

 private:
  MlpConfig config_;
  Index first_ = 0U;
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

  /// Parameters of one block of width d.
  static constexpr std::size_t block_parameters(std::size_t d) noexcept {
    return LayerNorm<T>::parameters(d) + CausalSelfAttention<T>::parameters(d) + LayerNorm<T>::parameters(d) +
           Linear<T>::parameters(d, 4U * d, true) + Linear<T>::parameters(4U * d, d, true);
  }
  /// All parameters of the model.
  static constexpr std::size_t parameters(const GptConfig& c) noexcept {
    return Embedding<T>::parameters(c.vocab, c.width) + Embedding<T>::parameters(c.block, c.width) +
           (c.layers * block_parameters(c.width)) + LayerNorm<T>::parameters(c.width) +
           Linear<T>::parameters(c.width, c.vocab, true);
  }
  /// A sequence of `steps` positions (<= block) up to the logits.
  static constexpr std::size_t logits_nodes(const GptConfig& c, std::size_t steps) noexcept {
    const std::size_t d = c.width;
    const std::size_t per_block = (steps * LayerNorm<T>::nodes(d)) + CausalSelfAttention<T>::nodes(d, c.heads, steps) +
                                  (steps * d) + (steps * LayerNorm<T>::nodes(d)) +
                                  (steps * Linear<T>::nodes(4U * d, Activation::kRelu)) +
                                  (steps * Linear<T>::nodes(d, Activation::kIdentity)) + (steps * d);
    return (steps * d) + (c.layers * per_block) + (steps * LayerNorm<T>::nodes(d)) +
           (steps * Linear<T>::nodes(c.vocab, Activation::kIdentity));
  }
  /// Argument slots of logits_nodes()'s sequence.
  static constexpr std::size_t logits_slots(const GptConfig& c, std::size_t steps) noexcept {
    const std::size_t d = c.width;
    const std::size_t per_block = (steps * LayerNorm<T>::slots(d)) +
                                  CausalSelfAttention<T>::template slots<T>(d, c.heads, steps) +
                                  (steps * LayerNorm<T>::slots(d)) + (steps * Linear<T>::view_slots(4U * d)) +
                                  (steps * Linear<T>::view_slots(d));
    return (c.layers * per_block) + (steps * LayerNorm<T>::slots(d)) + (steps * Linear<T>::view_slots(c.vocab));
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

  /// Init (nanoGPT style): embeddings and weight matrices ~ N(0, 0.02^2),
  /// biases 0, LayerNorm gamma 1 and beta 0.
  bool create(Tape<T>& tape, const GptConfig& c, Rng& rng) noexcept {
    config_ = c;
    first_ = static_cast<Index>(tape.size());
    if ((c.layers > kMaxLayers) || (c.block > kMaxSteps) || (c.heads == 0U) || ((c.width % c.heads) != 0U)) {
      return false;
    }
    const Init w = Init::normal(0.0, 0.02);
    bool ok = token_.create(tape, c.vocab, c.width, w, rng, BURTORCH_NAME("tok")) &&
              position_.create(tape, c.block, c.width, w, rng, BURTORCH_NAME("pos"));
    const T eps = static_cast<T>(c.eps);
    for (Index l = 0U; ok && (l < c.layers); ++l) {
      Block& b = blocks_[l];
      ok = b.ln1.create(tape, c.width, eps, rng, BURTORCH_NAME("ln1.g"), BURTORCH_NAME("ln1.b")) &&
           b.attn.create(tape, c.width, c.heads, w, w, rng, BURTORCH_NAME("Wq"), BURTORCH_NAME("Wk"),
                         BURTORCH_NAME("Wv"), BURTORCH_NAME("proj.W"), BURTORCH_NAME("proj.b")) &&
           b.ln2.create(tape, c.width, eps, rng, BURTORCH_NAME("ln2.g"), BURTORCH_NAME("ln2.b")) &&
           b.ff1.create(tape, c.width, 4U * c.width, true, Activation::kRelu, w, Init::zeros(), rng,
                        BURTORCH_NAME("ff1.W"), BURTORCH_NAME("ff1.b")) &&
           b.ff2.create(tape, 4U * c.width, c.width, true, Activation::kIdentity, w, Init::zeros(), rng,
                        BURTORCH_NAME("ff2.W"), BURTORCH_NAME("ff2.b"));
    }
    ok = ok && final_norm_.create(tape, c.width, eps, rng, BURTORCH_NAME("lnf.g"), BURTORCH_NAME("lnf.b")) &&
         head_.create(tape, c.width, c.vocab, true, Activation::kIdentity, w, Init::zeros(), rng,
                      BURTORCH_NAME("head.W"), BURTORCH_NAME("head.b"));
    return ok && (tape.size() == (first_ + parameters(c)));
  }

  /// Index of the first parameter on the tape (they are consecutive).
  Index first_parameter() const noexcept { return first_; }
  /// parameters(config()).
  std::size_t parameter_count() const noexcept { return parameters(config_); }
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

 private:
  struct Block {
    LayerNorm<T> ln1;
    CausalSelfAttention<T> attn;
    LayerNorm<T> ln2;
    Linear<T> ff1;
    Linear<T> ff2;
  };
  GptConfig config_;
  Index first_ = 0U;
  Embedding<T> token_;
  Embedding<T> position_;
  Block blocks_[kMaxLayers];
  LayerNorm<T> final_norm_;
  Linear<T> head_;
};

// ---------------------------------------------------------------------------
/// A serial batch: for each of `count` samples, record its loss after the
/// parameters, backward, rewind; gradients of the parameter range accumulate
/// and are divided by `count` (the gradient of the mean loss). Peak memory is
/// one sample's, whatever the batch size. `sample_loss(tape, i)` records the
/// loss of sample i and returns it. Returns the mean loss (NaN on error; the
/// tape's status tells why).
template <class T, class SampleLoss>
T serial_batch(Tape<T>& tape, Index first_param, std::size_t param_count, std::size_t count,
               SampleLoss&& sample_loss) noexcept {
  tape.zero_grad(first_param, static_cast<Index>(param_count));
  const Mark start = tape.mark();
  T total = T(0);
  for (std::size_t i = 0U; i < count; ++i) {
    const Value<T> loss = sample_loss(tape, i);
    if ((tape.status() != Status::kOk) || (tape.backward(loss) != Status::kOk)) {
      static_cast<void>(tape.rewind(start));
      return std::numeric_limits<T>::quiet_NaN();
    }
    total += loss.value();
    static_cast<void>(tape.rewind(start));
  }
  scale_gradients(tape.grads() + first_param, param_count, T(1) / static_cast<T>(count));
  return total / static_cast<T>(count);
}

}  // namespace nn
}  // namespace burtorch

#endif  // BURTORCH_NN_MODELS_HPP
