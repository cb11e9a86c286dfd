// SPDX-License-Identifier: Apache-2.0
/// @file
/// Layers and losses on the tape. A layer owns no memory: it remembers where
/// its parameters start on the tape (they are ordinary leaves, created once,
/// before any sample) and records its forward pass as nodes. Activations are
/// passed around as Views: runs of consecutive nodes. Inputs made of several
/// runs (16 embedding rows, 6 attention heads) go to inner products as a
/// ViewList, read in place, never copied.
///
/// A layer is built by create(tape, options, rng) from an options struct
/// (LinearOptions, EmbeddingOptions, LayerNormOptions, AttentionOptions:
/// aggregates whose defaults are PyTorch's) and tells where its parameters
/// are with params(). It also states, as constexpr functions of the same
/// options, exactly how many parameters it creates and how many nodes and
/// argument slots one forward pass records: the memory plans of models.hpp
/// (nn::make_plan) add them up.
#ifndef BURTORCH_NN_LAYERS_HPP
#define BURTORCH_NN_LAYERS_HPP

#include <cmath>
#include <cstddef>

#include "burtorch/nn/init.hpp"
#include "burtorch/nn/random.hpp"
#include "burtorch/fused.hpp"
#include "burtorch/lane_ops.hpp"
#include "burtorch/lanes.hpp"
#include "burtorch/nn/view.hpp"
#include "burtorch/ops.hpp"
#include "burtorch/record.hpp"
#include "burtorch/tape.hpp"
#include "burtorch/views.hpp"

namespace burtorch {
namespace nn {

/// Widest vector the layers reduce at once: a layer norm's width, the
/// logits of cross_entropy, the predictions of mse (read in place with
/// burtorch::reduce over a view, so the stack does not grow with it).
constexpr std::size_t kMaxGather = 128U;
/// Attention limits (they size local arrays, so they bound stack use):
/// positions in a sequence, heads, and the width of one head.
/// @{
constexpr std::size_t kMaxSteps = 32U;
constexpr std::size_t kMaxHeads = 16U;
constexpr std::size_t kMaxHeadSize = 64U;
/// @}

/// The function a Linear applies to its outputs.
enum class Activation : unsigned char {
  kIdentity,  ///< none: act(x) = x
  kTanh,      ///< tanh
  kRelu,      ///< max(x, 0)
  kSigmoid,   ///< 1 / (1 + exp(-x))
};

/// Argument slots a constant of type T takes (x * c stores c).
template <class T>
constexpr std::size_t constant_slots() noexcept {
  return Recorder<T>::kConstantSlots;
}

/// The handle of node `i` of `tape`.
template <class T>
inline Value<T> node(Tape<T>& tape, Index i) noexcept {
  return Value<T>(&tape, i);
}

/// Handles of the nodes of a view, into out[0..v.count); false if too wide.
template <class T>
inline bool gather(Tape<T>& tape, View v, Value<T>* out, std::size_t capacity) noexcept {
  if (v.count > capacity) {
    return false;
  }
  for (Index i = 0U; i < v.count; ++i) {
    out[i] = Value<T>(&tape, v.first + i);
  }
  return true;
}

/// Appends `count` parameters drawn from `init` (rows of `fan_in` inputs).
/// Returns the first index, or kNoIndex if the tape is full or failed.
template <class T>
inline Index make_params(Tape<T>& tape, std::size_t count, const Init& init, std::size_t fan_in, Rng& rng,
                         const char* name) noexcept {
  if (count >= kNoIndex) {
    static_cast<void>(tape.report(Status::kInvalidArgument));
    return kNoIndex;
  }
  const View made = burtorch::record_view(tape, static_cast<Index>(count), [&](Index /*k*/) noexcept {
    return tape.param(static_cast<T>(draw(init, fan_in, rng)), name);
  });
  return made.first;
}

/// One unary node per element of x; the results form a new view.
template <class T>
inline View activate(Tape<T>& tape, View x, Activation act) noexcept {
  if (act == Activation::kIdentity) {
    return x;
  }
  return burtorch::record_view(tape, x.count, [&](Index i) noexcept {
    const Value<T> v = node(tape, x.first + i);
    Value<T> y;
    if (act == Activation::kTanh) {
      y = tanh(v);
    } else if (act == Activation::kRelu) {
      y = relu(v);
    } else {
      y = sigmoid(v);
    }
    return y;
  });
}

/// The rows of act(W x + b) for an activation known at compile time: a
/// matvec with the activation fused into its rows (matvec<Act>), one
/// node per output; only A's code is compiled in (a ReLU firmware links
/// no tanhf or expf for it).
template <Activation A, class T>
inline View linear_rows(Tape<T>& tape, Index w, Index rows, ViewList x, Index bias) noexcept {
  if constexpr (A == Activation::kIdentity) {
    return burtorch::matvec(tape, w, rows, x, bias);
  } else if constexpr (A == Activation::kRelu) {
    return burtorch::matvec<Op::kRelu>(tape, w, rows, x, bias);
  } else if constexpr (A == Activation::kTanh) {
    return burtorch::matvec<Op::kTanh>(tape, w, rows, x, bias);
  } else {
    static_assert(A == Activation::kSigmoid, "an Activation");
    return burtorch::matvec<Op::kSigmoid>(tape, w, rows, x, bias);
  }
}

/// How to build a Linear. Only `in` and `out` have no default; the rest is
/// torch.nn.Linear's: a bias, no activation, weights and biases drawn from
/// U(-1/sqrt(in), 1/sqrt(in)). Set the members you need by name:
/// @code
/// nn::LinearOptions hidden;
/// hidden.in = 2U;
/// hidden.out = 8U;
/// hidden.act = nn::Activation::kTanh;
/// hidden.weight_init = nn::Init::fan_in_uniform(nn::kGainTanh);
/// @endcode
struct LinearOptions {
  Index in = 0U;                                                ///< inputs (the fan-in of every row)
  Index out = 0U;                                               ///< outputs
  Activation act = Activation::kIdentity;                       ///< applied to every output
  bool bias = true;                                             ///< false: no bias parameters
  Init weight_init = Init::fan_in_uniform(kGainLinearDefault);  ///< weights (fan-in `in`)
  Init bias_init = Init::fan_in_uniform(kGainLinearDefault);    ///< biases (fan-in `in`)
  const char* weight_name = nullptr;                            ///< name of every weight (Tape::param)
  const char* bias_name = nullptr;                              ///< name of every bias
};

/// y = act(W x + b), W stored row-major [out][in]: row o is one range of
/// `in` parameters, so each output is one inner product of a parameter range
/// with the (possibly segmented) input, the activation fused into it (one
/// node per output). A Neuron is a Linear with out = 1.
template <class T>
struct Linear {
  Index weight = kNoIndex;  ///< first weight on the tape (row-major [out][in])
  Index bias = kNoIndex;  ///< kNoIndex: no bias
  Index in = 0U;                           ///< inputs
  Index out = 0U;                          ///< outputs
  Activation act = Activation::kIdentity;  ///< applied to every output

  /// in * out weights (+ out biases).
  static constexpr std::size_t parameters(const LinearOptions& o) noexcept {
    return (static_cast<std::size_t>(o.in) * o.out) + (o.bias ? o.out : 0U);
  }
  /// Nodes and slots of forward() on a ViewList: one node per output (the
  /// activation is fused into the rows); the outputs share one matvec
  /// descriptor, whatever their number.
  static constexpr std::size_t nodes(const LinearOptions& o) noexcept { return o.out; }
  /// @copydoc nodes
  static constexpr std::size_t slots(const LinearOptions& /*o*/) noexcept { return 4U; }
  /// The same for forward() on a View (one extra one-run view list).
  static constexpr std::size_t view_slots(const LinearOptions& o) noexcept { return 3U + slots(o); }

  /// Appends the layer's parameters to the tape: in * out weights drawn from
  /// o.weight_init, then (if o.bias) out biases from o.bias_init. False if
  /// the tape is full or failed; the layer then has no parameters (params()
  /// is kNoView).
  bool create(Tape<T>& tape, const LinearOptions& o, Rng& rng) noexcept {
    in = o.in;
    out = o.out;
    act = o.act;
    const Index w = make_params(tape, static_cast<std::size_t>(o.in) * o.out, o.weight_init, o.in, rng, o.weight_name);
    const Index b = o.bias ? make_params(tape, o.out, o.bias_init, o.in, rng, o.bias_name) : kNoIndex;
    const bool ok = (tape.status() == Status::kOk) && (w != kNoIndex);
    weight = ok ? w : kNoIndex;
    bias = ok ? b : kNoIndex;
    return ok;
  }

  /// The layer's parameters on the tape: weights, then biases (kNoView
  /// before a successful create()).
  View params() const noexcept {
    const Index count = (in * out) + ((bias != kNoIndex) ? out : 0U);
    return (weight != kNoIndex) ? View{weight, count} : kNoView;
  }

  /// Records act(W x + b) for an input of `in` nodes stored as a segment
  /// list; returns the `out` output nodes (kNoView on error). The
  /// activation is chosen at run time, so the code of every activation is
  /// compiled in; forward<A>() compiles only A's.
  View forward(Tape<T>& tape, ViewList x) const noexcept {
    View y = kNoView;
    if (x.total != in) {
      static_cast<void>(tape.report(Status::kInvalidArgument));
    } else if (act == Activation::kRelu) {
      y = linear_rows<Activation::kRelu>(tape, weight, out, x, bias);
    } else if (act == Activation::kTanh) {
      y = linear_rows<Activation::kTanh>(tape, weight, out, x, bias);
    } else if (act == Activation::kSigmoid) {
      y = linear_rows<Activation::kSigmoid>(tape, weight, out, x, bias);
    } else {
      y = linear_rows<Activation::kIdentity>(tape, weight, out, x, bias);
    }
    return y;
  }

  /// The same for an input that is one run of nodes.
  View forward(Tape<T>& tape, View x) const noexcept { return forward(tape, burtorch::view_list(tape, &x, 1U)); }

  /// forward() with the activation chosen at compile time (A must be the
  /// layer's act, else kInvalidArgument and nothing recorded): only A's code
  /// is compiled in, e.g. `hidden.forward<nn::Activation::kRelu>(tape, x)`.
  template <Activation A>
  View forward(Tape<T>& tape, ViewList x) const noexcept {
    if ((x.total != in) || (act != A)) {
      static_cast<void>(tape.report(Status::kInvalidArgument));
      return kNoView;
    }
    return linear_rows<A>(tape, weight, out, x, bias);
  }
  /// @copydoc forward(Tape<T>&, ViewList) const
  template <Activation A>
  View forward(Tape<T>& tape, View x) const noexcept {
    return forward<A>(tape, burtorch::view_list(tape, &x, 1U));
  }

  /// Nodes and slots of the lane forward() (a lane batch, see below): the
  /// outputs' head node (matvec_shared), the outputs, and the
  /// activation's nodes (on a tape of lanes the activation is a node of its
  /// own per output).
  static constexpr std::size_t lane_nodes(const LinearOptions& o) noexcept {
    return 1U + ((o.act == Activation::kIdentity) ? o.out : (2U * static_cast<std::size_t>(o.out)));
  }
  /// @copydoc lane_nodes
  static constexpr std::size_t lane_slots(const LinearOptions& /*o*/) noexcept { return detail::kMsSlots; }
  /// The same on a View (one extra one-run view list).
  static constexpr std::size_t lane_view_slots(const LinearOptions& o) noexcept { return 3U + lane_slots(o); }

  /// The layer on a tape of N lanes (one sample per lane) whose weights are
  /// this layer's parameters on their own tape, shared through p
  /// (nn::shared_params): read once per N samples, their gradients summed
  /// over the lanes.
  template <std::size_t N>
  View forward(Tape<Lanes<T, N>>& tape, const SharedParams<T>& p, ViewList x) const noexcept {
    if (x.total != in) {
      static_cast<void>(tape.report(Status::kInvalidArgument));
      return kNoView;
    }
    const View y = burtorch::matvec_shared(tape, p, weight, out, x, bias);
    return (y.count != 0U) ? activate(tape, y, act) : kNoView;
  }
  /// The same for an input that is one run of nodes.
  template <std::size_t N>
  View forward(Tape<Lanes<T, N>>& tape, const SharedParams<T>& p, View x) const noexcept {
    return forward(tape, p, burtorch::view_list(tape, &x, 1U));
  }
};

/// How to build an Embedding (torch.nn.Embedding's N(0, 1) by default).
struct EmbeddingOptions {
  Index rows = 0U;                     ///< rows of the table (token ids 0..rows-1)
  Index dim = 0U;                      ///< width of a row
  Init init = Init::normal(0.0, 1.0);  ///< every entry (fan-in `dim`)
  const char* name = nullptr;          ///< name of every entry (Tape::param)
};

/// A lookup table of `rows` vectors of `dim` parameters; row r is a view.
template <class T>
struct Embedding {
  Index table = kNoIndex;  ///< first parameter of row 0
  Index rows = 0U;         ///< rows of the table
  Index dim = 0U;          ///< width of a row

  /// rows * dim.
  static constexpr std::size_t parameters(const EmbeddingOptions& o) noexcept {
    return static_cast<std::size_t>(o.rows) * o.dim;
  }

  /// Appends the table's parameters to the tape, row by row. False if the
  /// tape is full or failed (params() is then kNoView).
  bool create(Tape<T>& tape, const EmbeddingOptions& o, Rng& rng) noexcept {
    rows = o.rows;
    dim = o.dim;
    table = make_params(tape, parameters(o), o.init, o.dim, rng, o.name);
    return table != kNoIndex;
  }
  /// The table on the tape (kNoView before a successful create()).
  View params() const noexcept { return (table != kNoIndex) ? View{table, rows * dim} : kNoView; }
  /// Row r as a view of the table (no nodes recorded); kNoView if r >= rows.
  View row(Index r) const noexcept { return (r < rows) ? View{table + (r * dim), dim} : kNoView; }

  /// On a tape of N lanes: `count` rows per lane, as count * dim nodes (row
  /// q of lane l is table row ids[q * N + l]); the table is shared through p
  /// (nn::shared_params) and each lane's gradient goes to its own row.
  /// kNoView (kInvalidArgument) for an id >= rows.
  template <std::size_t N>
  View gather(Tape<Lanes<T, N>>& tape, const SharedParams<T>& p, const Index* ids, Index count) const noexcept {
    return burtorch::gather_shared(tape, p, table, rows, dim, ids, count);
  }
};

/// How to build a LayerNorm (torch.nn.LayerNorm's defaults: eps 1e-5,
/// gains 1, biases 0).
struct LayerNormOptions {
  Index width = 0U;                   ///< elements normalised together
  double eps = 1e-5;                  ///< added to the variance (rounded to T)
  Init gain_init = Init::ones();      ///< gains (fan-in `width`)
  Init bias_init = Init::zeros();     ///< biases (fan-in `width`)
  const char* gain_name = nullptr;    ///< name of every gain (Tape::param)
  const char* bias_name = nullptr;    ///< name of every bias
};

/// y = (x - mean) / sqrt(var + eps) * gamma + beta over one vector
/// (biased variance, as torch.nn.LayerNorm).
template <class T>
struct LayerNorm {
  Index gamma = kNoIndex;  ///< first gain parameter
  Index beta = kNoIndex;   ///< first bias parameter
  Index n = 0U;            ///< width
  T eps = T(1e-5);         ///< added to the variance

  /// Gains and biases: 2 * width.
  static constexpr std::size_t parameters(const LayerNormOptions& o) noexcept {
    return 2U * static_cast<std::size_t>(o.width);
  }
  /// Nodes of forward(): mean, variance, rsqrt, then per element centre, scale, gain and bias.
  static constexpr std::size_t nodes(const LayerNormOptions& o) noexcept {
    return 4U + (3U * static_cast<std::size_t>(o.width));
  }
  /// Slots of forward(): one 3-slot scale_shift descriptor.
  static constexpr std::size_t slots(const LayerNormOptions& /*o*/) noexcept { return 3U; }

  /// Appends the gains, then the biases, to the tape. False if the tape is
  /// full or failed (params() is then kNoView).
  bool create(Tape<T>& tape, const LayerNormOptions& o, Rng& rng) noexcept {
    n = o.width;
    eps = static_cast<T>(o.eps);
    const Index g = make_params(tape, o.width, o.gain_init, o.width, rng, o.gain_name);
    const Index b = make_params(tape, o.width, o.bias_init, o.width, rng, o.bias_name);
    const bool ok = (g != kNoIndex) && (b != kNoIndex);
    gamma = ok ? g : kNoIndex;
    beta = ok ? b : kNoIndex;
    return ok;
  }

  /// The gains and biases on the tape (kNoView before a successful create()).
  View params() const noexcept { return (gamma != kNoIndex) ? View{gamma, 2U * n} : kNoView; }

  /// Records the normalised x (n nodes wide, n <= kMaxGather); kNoView on error.
  View forward(Tape<T>& tape, View x) const noexcept {
    const View scaled = normalize(tape, x);
    return (scaled.count != 0U) ? burtorch::scale_shift(tape, gamma, scaled.first, beta, n) : kNoView;
  }
  /// The same on a tape of N lanes, the gains and biases shared through p
  /// (nn::shared_params). Slots: kScaleShiftSharedSlots.
  template <std::size_t N>
  View forward(Tape<Lanes<T, N>>& tape, const SharedParams<T>& p, View x) const noexcept {
    const View scaled = normalize(tape, x);
    return (scaled.count != 0U) ? burtorch::scale_shift_shared(tape, p, gamma, scaled.first, beta, n) : kNoView;
  }

 private:
  /// (x - mean) / sqrt(var + eps): all but the gain and bias.
  template <class U>
  View normalize(Tape<U>& tape, View x) const noexcept {
    if ((x.count != n) || (n > kMaxGather)) {
      static_cast<void>(tape.report(Status::kInvalidArgument));
      return kNoView;
    }
    const Value<U> mu = burtorch::reduce(tape, Op::kMeanR, burtorch::View{x.first, n});
    const Value<U> rstd = inv_sqrt(burtorch::reduce(tape, Op::kVarBiasedR, burtorch::View{x.first, n}) + U(eps));
    const View centered = burtorch::record_view(tape, n, [&](Index i) noexcept { return node(tape, x.first + i) - mu; });
    return burtorch::record_view(tape, n, [&](Index i) noexcept { return node(tape, centered.first + i) * rstd; });
  }
};

/// Element-wise x + y of two views of one width (residual connections).
template <class T>
inline View add(Tape<T>& tape, View x, View y) noexcept {
  if (x.count != y.count) {
    static_cast<void>(tape.report(Status::kInvalidArgument));
    return kNoView;
  }
  return burtorch::record_view(tape, x.count,
                          [&](Index i) noexcept { return node(tape, x.first + i) + node(tape, y.first + i); });
}

/// Softmax cross-entropy of logits with a target class, max-shifted:
/// log(sum(exp(z))) - z[target]. Two nodes, no slots.
template <class T>
inline Value<T> cross_entropy(Tape<T>& tape, View logits, Index target) noexcept {
  if ((target >= logits.count) || (logits.count > kMaxGather)) {
    static_cast<void>(tape.report(Status::kInvalidArgument));
    return Value<T>(&tape, kNoIndex);
  }
  // Read in place: no array of handles on the stack.
  return burtorch::reduce(tape, Op::kLogSumExpR, burtorch::View{logits.first, logits.count}) - node(tape, logits.first + target);
}
/// Nodes cross_entropy() records.
constexpr std::size_t kCrossEntropyNodes = 2U;

/// The same on a tape of N lanes, a target per lane (targets[0..N)): the
/// target's logit is picked per lane (pick). Three nodes,
/// pick_slots(N) slots.
template <class S, std::size_t N>
inline Value<Lanes<S, N>> cross_entropy(Tape<Lanes<S, N>>& tape, View logits, const Index* targets) noexcept {
  if ((targets == nullptr) || (logits.count > kMaxGather)) {
    static_cast<void>(tape.report(Status::kInvalidArgument));
    return Value<Lanes<S, N>>(&tape, kNoIndex);
  }
  return burtorch::reduce(tape, Op::kLogSumExpR, burtorch::View{logits.first, logits.count}) - burtorch::pick(tape, logits, targets);
}
/// Nodes the lane cross_entropy() records.
constexpr std::size_t kLaneCrossEntropyNodes = 3U;

/// Mean squared error mean((pred - target)^2) (torch.nn.MSELoss()).
/// pred.count + 1 nodes, no slots.
template <class T>
inline Value<T> mse(Tape<T>& tape, View pred, const T* target) noexcept {
  if ((target == nullptr) || (pred.count == 0U) || (pred.count > kMaxGather)) {
    static_cast<void>(tape.report(Status::kInvalidArgument));
    return Value<T>(&tape, kNoIndex);
  }
  const View diff = burtorch::record_view(tape, pred.count, [&](Index i) noexcept { return node(tape, pred.first + i) - target[i]; });
  return (diff.count != 0U) ? burtorch::reduce(tape, Op::kMeanSqR, burtorch::View{diff.first, diff.count}) : Value<T>(&tape, kNoIndex);
}

/// How to build a CausalSelfAttention. Only `width` has no default; the
/// projections draw from torch.nn.Linear's U(-1/sqrt(width), 1/sqrt(width))
/// and the output projection's bias is 0 (as torch.nn.MultiheadAttention's).
struct AttentionOptions {
  Index width = 0U;                                             ///< d: model width
  Index heads = 1U;                                             ///< h: heads (must divide d)
  Init weight_init = Init::fan_in_uniform(kGainLinearDefault);  ///< Wq, Wk, Wv (fan-in d)
  Init proj_init = Init::fan_in_uniform(kGainLinearDefault);    ///< the output projection's weights
  Init proj_bias_init = Init::zeros();                          ///< the output projection's bias
  const char* q_name = nullptr;                                 ///< names (Tape::param) of Wq,
  const char* k_name = nullptr;                                 ///< Wk,
  const char* v_name = nullptr;                                 ///< Wv,
  const char* proj_weight_name = nullptr;                       ///< the projection's weights
  const char* proj_bias_name = nullptr;                         ///< and its bias
};

/// Causal multi-head self-attention over a sequence of up to kMaxSteps
/// positions: per head h, out_t = sum_{j<=t} softmax_j(q_t . k_j / sqrt(hs)) v_j,
/// the heads' outputs (each a view of hs nodes) feed the output projection
/// as one view list (the split-tensor trick: no concatenation).
/// Wq, Wk, Wv are [width][width] without bias (row h*hs + d is dimension d of
/// head h); the projection is a Linear with bias.
template <class T>
struct CausalSelfAttention {
  Index wq = kNoIndex;  ///< first parameter of Wq [width][width]
  Index wk = kNoIndex;  ///< first parameter of Wk
  Index wv = kNoIndex;  ///< first parameter of Wv
  Linear<T> proj;       ///< output projection (with bias)
  Index width = 0U;     ///< d
  Index heads = 0U;     ///< h (divides d)

  /// Wq, Wk, Wv and the projection: 4 d^2 + d.
  static constexpr std::size_t parameters(const AttentionOptions& o) noexcept {
    return (4U * static_cast<std::size_t>(o.width) * o.width) + o.width;
  }
  /// Nodes of forward() over `steps` positions.
  static constexpr std::size_t nodes(const AttentionOptions& o, std::size_t steps) noexcept {
    // q, k, v, scaled q and projection: 5d per position; per position t and
    // head: t+1 scores, shifts and exps, one sum, hs products and quotients.
    const std::size_t d = o.width;
    const std::size_t h = o.heads;
    return (5U * d * steps) + (h * ((3U * steps * (steps + 1U)) / 2U)) + (h * steps * (1U + (2U * (d / h))));
  }
  /// Argument slots of forward() over `steps` positions.
  static constexpr std::size_t slots(const AttentionOptions& o, std::size_t steps) noexcept {
    const std::size_t d = o.width;
    const std::size_t h = o.heads;
    return (3U * steps)                                         // one-run list per input position
           + (8U * steps)                                       // q and k: a matvec each (4 slots) per position
           + (3U * d * steps)                                   // v: an inner product per output
           + (constant_slots<T>() * d * steps)                  // q * scale
           + (h * ((3U * steps * (steps + 1U)) / 2U))           // scores
           + (h * steps * 3U * (d / h))                         // weighted values
           + (steps * (1U + (2U * h)))                          // heads as a view list
           + (4U * steps);                                      // projection: a matvec per position
  }

  /// Appends Wq, Wk, Wv (from o.weight_init), then the projection's weights
  /// (o.proj_init) and bias (o.proj_bias_init). False if the tape is full or
  /// failed, or o.heads does not divide o.width (kInvalidArgument recorded);
  /// params() is then kNoView.
  bool create(Tape<T>& tape, const AttentionOptions& o, Rng& rng) noexcept {
    width = o.width;
    heads = o.heads;
    wq = kNoIndex;
    if ((o.heads == 0U) || ((o.width % o.heads) != 0U)) {
      static_cast<void>(tape.report(Status::kInvalidArgument));
      return false;
    }
    const std::size_t dd = static_cast<std::size_t>(o.width) * o.width;
    const Index q = make_params(tape, dd, o.weight_init, o.width, rng, o.q_name);
    wk = make_params(tape, dd, o.weight_init, o.width, rng, o.k_name);
    wv = make_params(tape, dd, o.weight_init, o.width, rng, o.v_name);
    LinearOptions p;
    p.in = o.width;
    p.out = o.width;
    p.weight_init = o.proj_init;
    p.bias_init = o.proj_bias_init;
    p.weight_name = o.proj_weight_name;
    p.bias_name = o.proj_bias_name;
    const bool ok = proj.create(tape, p, rng) && (q != kNoIndex) && (wk != kNoIndex) && (wv != kNoIndex);
    wq = ok ? q : kNoIndex;
    return ok;
  }

  /// Wq, Wk, Wv and the projection on the tape (kNoView before a successful
  /// create()).
  View params() const noexcept {
    return (wq != kNoIndex) ? View{wq, (4U * width * width) + width} : kNoView;
  }

  /// The head size of a forward pass over `steps` positions; 0 after
  /// kInvalidArgument on the tape if create() never ran (or failed: heads 0,
  /// no division by it) or steps or the sizes are out of range.
  template <class S>
  Index head_size(Tape<S>& tape, Index steps) const noexcept {
    const Index hs = (heads != 0U) ? (width / heads) : 0U;
    if ((heads == 0U) || (hs == 0U) || (steps == 0U) || (steps > kMaxSteps) || (hs > kMaxHeadSize) ||
        (heads > kMaxHeads)) {
      static_cast<void>(tape.report(Status::kInvalidArgument));
      return 0U;
    }
    return hs;
  }

  /// x[0..steps): views of `width` nodes; out[0..steps) receives the outputs.
  // NOLINTNEXTLINE(readability-function-cognitive-complexity): attention's loops, kept in one place
  bool forward(Tape<T>& tape, const View* x, Index steps, View* out) const noexcept {
    const Index hs = head_size(tape, steps);
    if (hs == 0U) {
      return false;
    }
    ViewList lists[kMaxSteps];
    for (Index t = 0U; t < steps; ++t) {
      lists[t] = burtorch::view_list(tape, &x[t], 1U);
    }
    // q[t] = view q_first + t*width, likewise k; v is stored transposed so
    // that dimension d of head h over positions is one run: v_first +
    // (h*hs + d)*steps + t. (So v is one inner product per output, not a
    // matvec per position: a matvec's rows are consecutive nodes.)
    // Each matvec's rows follow the previous one's: position t's q starts
    // at q_raw.first + t * width.
    View q_raw = kNoView;
    for (Index t = 0U; t < steps; ++t) {
      const View q = burtorch::matvec(tape, wq, width, lists[t], kNoIndex);
      q_raw = (t == 0U) ? q : q_raw;
    }
    View k_all = kNoView;
    for (Index t = 0U; t < steps; ++t) {
      const View k = burtorch::matvec(tape, wk, width, lists[t], kNoIndex);
      k_all = (t == 0U) ? k : k_all;
    }
    View v_all = kNoView;
    for (Index r = 0U; r < width; ++r) {
      const View v = burtorch::record_view(tape, steps, [&](Index t) noexcept { return burtorch::inner_product(tape, wv + (r * width), lists[t], nullptr); });
      v_all = (r == 0U) ? v : v_all;
    }
    const T scale = T(1) / std::sqrt(static_cast<T>(hs));
    const View q_all = burtorch::record_view(tape, steps * width, [&](Index i) noexcept { return node(tape, q_raw.first + i) * scale; });
    if (tape.status() != Status::kOk) {
      return false;
    }
    const Index k_first = k_all.first;
    const Index v_first = v_all.first;
    const Index q_first = q_all.first;
    for (Index t = 0U; t < steps; ++t) {
      View head_views[kMaxHeads];
      for (Index h = 0U; h < heads; ++h) {
        head_views[h] = attend(
            tape, q_first + (t * width) + (h * hs), hs, t, [&](Index j) noexcept { return k_first + (j * width) + (h * hs); },
            [&](Index d, View exps) noexcept {
              return burtorch::inner_product(tape, burtorch::View{exps.first, t + 1U}, burtorch::View{v_first + (((h * hs) + d) * steps), t + 1U}, nullptr);
            });
        if (tape.status() != Status::kOk) {
          return false;
        }
      }
      out[t] = proj.forward(tape, burtorch::view_list(tape, head_views, heads));
    }
    return tape.status() == Status::kOk;
  }

  /// Nodes of the lane forward() over `steps` positions: forward()'s, plus
  /// the head node of each position's four layers (matvec_shared).
  static constexpr std::size_t lane_nodes(const AttentionOptions& o, std::size_t steps) noexcept {
    return nodes(o, steps) + (4U * steps);
  }
  /// Argument slots of the lane forward() over `steps` positions on a tape
  /// of N lanes of T.
  template <std::size_t N>
  static constexpr std::size_t lane_slots(const AttentionOptions& o, std::size_t steps) noexcept {
    const std::size_t d = o.width;
    const std::size_t h = o.heads;
    const std::size_t hs = (h != 0U) ? (d / h) : 0U;
    const std::size_t pairs = (steps * (steps + 1U)) / 2U;
    return (3U * steps)                                         // one-run list per input position
           + (static_cast<std::size_t>(4U * detail::kMsSlots) * steps)  // q, k, v and the projection per position
           + (constant_slots<Lanes<T, N>>() * d * steps)        // q * scale
           + (h * 3U * pairs)                                   // scores
           + (h * hs * ((3U * steps) + pairs - 1U))             // weighted values: descriptor + list of the values
           + (steps * (1U + (2U * h)));                         // heads as a view list
  }

  /// The same on a tape of N lanes (one sequence per lane), the weights
  /// shared through p (nn::shared_params). q, k and v are one shared-weight
  /// layer per position; the weighted values are inner products of the
  /// softmax weights with a list of the positions' values.
  template <std::size_t N>
  // NOLINTNEXTLINE(readability-function-cognitive-complexity): attention's loops, kept in one place
  bool forward(Tape<Lanes<T, N>>& tape, const SharedParams<T>& p, const View* x, Index steps, View* out) const noexcept {
    using U = Lanes<T, N>;
    const Index hs = head_size(tape, steps);
    if (hs == 0U) {
      return false;
    }
    ViewList lists[kMaxSteps];
    for (Index t = 0U; t < steps; ++t) {
      lists[t] = burtorch::view_list(tape, &x[t], 1U);
    }
    View q_raw[kMaxSteps];
    View k_at[kMaxSteps];
    View v_at[kMaxSteps];
    for (Index t = 0U; t < steps; ++t) {
      q_raw[t] = burtorch::matvec_shared(tape, p, wq, width, lists[t], kNoIndex);
    }
    for (Index t = 0U; t < steps; ++t) {
      k_at[t] = burtorch::matvec_shared(tape, p, wk, width, lists[t], kNoIndex);
    }
    for (Index t = 0U; t < steps; ++t) {
      v_at[t] = burtorch::matvec_shared(tape, p, wv, width, lists[t], kNoIndex);
    }
    const T scale = T(1) / std::sqrt(static_cast<T>(hs));
    View q_at[kMaxSteps];
    for (Index t = 0U; t < steps; ++t) {
      q_at[t] = burtorch::record_view(tape, width, [&](Index i) noexcept { return node(tape, q_raw[t].first + i) * U(scale); });
    }
    if (tape.status() != Status::kOk) {
      return false;
    }
    for (Index t = 0U; t < steps; ++t) {
      View head_views[kMaxHeads];
      for (Index h = 0U; h < heads; ++h) {
        head_views[h] = attend(
            tape, q_at[t].first + (h * hs), hs, t, [&](Index j) noexcept { return k_at[j].first + (h * hs); },
            [&](Index d, View exps) noexcept {
              Value<U> weights[kMaxSteps];
              Value<U> values[kMaxSteps];
              for (Index j = 0U; j <= t; ++j) {
                weights[j] = node(tape, exps.first + j);
                values[j] = node(tape, v_at[j].first + (h * hs) + d);
              }
              return burtorch::inner_product(tape, weights, values, t + 1U, nullptr);
            });
        if (tape.status() != Status::kOk) {
          return false;
        }
      }
      out[t] = proj.forward(tape, p, burtorch::view_list(tape, head_views, heads));
    }
    return tape.status() == Status::kOk;
  }

 private:
  /// One head at position t: the scores of the query (the run of hs nodes
  /// from q) against the keys (key(j): the first node of position j's key,
  /// j <= t), their softmax shifted by the largest score (a constant, which
  /// the softmax's gradient ignores exactly; lane by lane on a tape of
  /// lanes), and the weighted values weighted(d, exps) divided by the sum.
  /// Returns the hs outputs.
  template <class U, class Key, class Weighted>
  static View attend(Tape<U>& tape, Index q, Index hs, Index t, Key key, Weighted weighted) noexcept {
    U top = U(0);
    const View scores = burtorch::record_view(tape, t + 1U, [&](Index j) noexcept {
      const Value<U> s = burtorch::inner_product(tape, burtorch::View{q, hs}, burtorch::View{key(j), hs}, nullptr);
      top = (j == 0U) ? s.value() : ScalarOps<U>::max(top, s.value());
      return s;
    });
    // Under the maximum's shift the largest exponent is 0: no overflow.
    const View shifted = burtorch::record_view(tape, t + 1U, [&](Index j) noexcept { return node(tape, scores.first + j) - top; });
    const View exps = burtorch::record_view(tape, t + 1U, [&](Index j) noexcept { return exp(node(tape, shifted.first + j)); });
    const Value<U> total = burtorch::reduce(tape, Op::kSumR, burtorch::View{exps.first, exps.count});
    const View values = burtorch::record_view(tape, hs, [&](Index d) noexcept { return weighted(d, exps); });
    return burtorch::record_view(tape, hs, [&](Index d) noexcept { return node(tape, values.first + d) / total; });
  }
};

}  // namespace nn
}  // namespace burtorch

#endif  // BURTORCH_NN_LAYERS_HPP
