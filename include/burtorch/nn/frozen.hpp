// SPDX-License-Identifier: Apache-2.0
/// @file
/// Frozen layers: FrozenLinear, FrozenConv1d and FrozenConv2d, whose weights
/// (and biases) are caller arrays in flash (burtorch/frozen/ops.hpp: FP32, FP16,
/// BF16 or int8 with a per-tensor scale), for a backbone that costs no RAM.
/// The weights are never on the tape: no RAM, no gradient, no optimizer
/// state (docs/training.md, "Fine-tuning"; nn/finetune.hpp).
///
/// The frozen convolutions' windows are the trainable layers' (nn/conv.hpp:
/// channels-last, zero padding by a run of zero leaves, one view list per
/// output position); each output position is one matvec_frozen over its
/// window's view list instead of one matvec: C_out consecutive rows sharing
/// one descriptor of kFrozenSlots slots, whose weights are read from the
/// array and never copied onto the tape. The weight matrix is [C_out][k *
/// C_in] ([C_out][kH * kW * C_in] in 2-D), row-major: exactly the
/// trainable layer's parameter order, so a trained Conv1d/Conv2d is frozen
/// by quantizing its weight run as it is (quantize_i8, quantize_f16).
///
/// The layers are aggregates that can be constexpr, so their description
/// stays in flash with the arrays:
/// @code
/// static constexpr std::int8_t kW[8 * 9] = {...};  // [C_out][3][3][C_in = 1]
/// static constexpr float kB[8] = {...};
/// static constexpr nn::FrozenConv2d<float> kConv{
///     {bt::frozen_i8(kW, 0.0123F), 8U, 9U}, {bt::frozen_f32(kB), 8U}, options};  // options: Conv2dOptions
/// bt::View h = kConv.forward<nn::Activation::kRelu>(tape, x, nn::Size2d{8U, 8U});  // options.act
/// burtorch::stop_gradient(tape);  // a frozen backbone needs no sweep
/// @endcode
/// The options' init and name fields are not used. Backward passes
/// gradients to the input only (there is nothing else to train); behind
/// stop_gradient(tape) it is not swept at all.
#ifndef BURTORCH_NN_FROZEN_HPP
#define BURTORCH_NN_FROZEN_HPP

#include <cstddef>
#include <cstdint>

#include "burtorch/frozen/ops.hpp"
#include "burtorch/nn/common.hpp"
#include "burtorch/nn/conv.hpp"
#include "burtorch/nn/conv_geometry.hpp"
#include "burtorch/nn/params.hpp"
#include "burtorch/scalar.hpp"
#include "burtorch/core/tape.hpp"
#include "burtorch/core/views.hpp"

namespace burtorch {
namespace nn {

/// y = act(W x + b) with W (and b) frozen in caller memory: the layer's
/// weights are never on the tape (matvec_frozen). An aggregate that
/// can be constexpr, so the description stays in flash with the arrays:
/// @code
/// static constexpr std::int8_t kW[16 * 2] = {...};
/// static constexpr std::uint16_t kB[16] = {...};  // FP16
/// static constexpr nn::FrozenLinear<float> kHidden{
///     {bt::frozen_i8(kW, 0.0123F), 16U, 2U}, {bt::frozen_f16(kB), 16U}, nn::Activation::kTanh};
/// @endcode
template <class T>
struct FrozenLinear {
  FrozenMatrix weight;                     ///< [out][in]: rows = out, cols = in
  FrozenVector bias;                       ///< size 0: no bias; else size out
  Activation act = Activation::kIdentity;  ///< applied to every output

  /// Inputs and outputs.
  /// @{
  constexpr Index in() const noexcept { return weight.cols; }
  constexpr Index out() const noexcept { return weight.rows; }
  /// @}
  /// Nodes of forward() (out, plus out with an activation) and slots (one
  /// shared descriptor; view_slots: plus a one-run view list for a View
  /// input). No parameters: nothing of the layer is on the tape before it.
  /// @{
  static constexpr std::size_t nodes(Index out, Activation act) noexcept {
    return (act == Activation::kIdentity) ? out : (2U * static_cast<std::size_t>(out));
  }
  static constexpr std::size_t slots() noexcept { return burtorch::kFrozenSlots; }
  static constexpr std::size_t view_slots() noexcept { return 3U + slots(); }
  /// @}

  /// Records act(W x + b) for an input of in() nodes stored as a view list;
  /// returns the out() output nodes (kNoView on error: see
  /// matvec_frozen; a call that fails part-way leaves nothing recorded).
  View forward(Tape<T>& tape, ViewList x) const noexcept {
    return all_or_nothing(tape, kNoView, [&]() noexcept {
      const View y = burtorch::matvec_frozen(tape, weight, x, (bias.size != 0U) ? &bias : nullptr);
      return (y.count != 0U) ? activate(tape, y, act) : kNoView;
    });
  }
  /// The same for an input that is one run of nodes: checked (accepts())
  /// before its view list is recorded.
  View forward(Tape<T>& tape, View x) const noexcept {
    return accepts(tape, x) ? all_or_nothing(tape, kNoView, [&]() noexcept {
      return forward(tape, burtorch::view_list(tape, &x, 1U));
    })
                            : kNoView;
  }
  /// True if x can be this layer's input: in() nodes wide (else
  /// kInvalidArgument on the tape) and recorded on it (else kInvalidHandle).
  bool accepts(Tape<T>& tape, View x) const noexcept {
    const Status error =
        (x.count != in()) ? Status::kInvalidArgument : (is_recorded(tape, x) ? Status::kOk : Status::kInvalidHandle);
    static_cast<void>(tape.report(error));
    return error == Status::kOk;
  }

  /// forward() with the activation chosen at compile time, as for Linear
  /// (A must be the layer's act, else kInvalidArgument and nothing
  /// recorded): only A's code is compiled in, so a firmware whose frozen
  /// layers use ReLU links no tanhf or expf for them.
  template <Activation A>
  View forward(Tape<T>& tape, ViewList x) const noexcept {
    if (act != A) {
      static_cast<void>(tape.report(Status::kInvalidArgument));
      return kNoView;
    }
    return all_or_nothing(tape, kNoView, [&]() noexcept {
      const View y = burtorch::matvec_frozen(tape, weight, x, (bias.size != 0U) ? &bias : nullptr);
      return (y.count != 0U) ? activate<A>(tape, y) : kNoView;
    });
  }
  /// @copydoc forward(Tape<T>&, ViewList) const
  template <Activation A>
  View forward(Tape<T>& tape, View x) const noexcept {
    if (act != A) {  // before the view list is recorded: a refusal leaves nothing
      static_cast<void>(tape.report(Status::kInvalidArgument));
      return kNoView;
    }
    return accepts(tape, x) ? all_or_nothing(tape, kNoView, [&]() noexcept {
      return forward<A>(tape, burtorch::view_list(tape, &x, 1U));
    })
                            : kNoView;
  }
};

namespace detail {

/// Slots of a frozen convolution's forward(): per position its view list
/// and one frozen descriptor; 0 if no window fits.
template <class T>
constexpr std::size_t frozen_conv_slots(const ConvGeometry& g) noexcept {
  const WindowPlan p = plan_windows(g);
  return static_cast<std::size_t>(p.list_slots + (static_cast<std::uint64_t>(burtorch::kFrozenSlots) * p.windows));
}

/// True if w and bias can be a frozen convolution of geometry g with
/// `out_channels` outputs: valid arrays, w of out_channels rows of kH * kW *
/// C_in columns, a bias of out_channels elements or none (size 0).
inline bool frozen_conv_valid(const ConvGeometry& g, Index out_channels, const FrozenMatrix& w,
                              const FrozenVector& bias) noexcept {
  const std::uint64_t cols = capped_product(capped_product(g.kernel_h, g.kernel_w), g.channels);
  const bool bias_ok = (bias.size == 0U) || ((bias.size == out_channels) && frozen_valid(bias.data));
  return frozen_valid(w.data) && (out_channels != 0U) && (w.rows == out_channels) && (cols < kNoIndex) &&
         (w.cols == cols) && bias_ok;
}

/// A frozen convolution's forward pass over the channels-last input x of
/// geometry g to out_channels channels: conv_forward's windows and checks,
/// each position one matvec_frozen. Everything is checked before anything
/// is recorded: arrays that do not describe the layer (see
/// frozen_conv_valid; also weights of another row count than
/// out_channels), an input
/// of another width, a geometry without windows or with windows of more
/// than kMaxWindowRuns runs give kInvalidArgument; an input not recorded
/// kInvalidHandle; too little room kCapacityExceeded. Returns the outputs
/// (kNoView on error).
/// `activate_outputs(View)` records the activation (act: the layer's, for
/// the count of nodes it takes).
template <class T, class Activate>
View frozen_conv_forward(Tape<T>& tape, const ConvGeometry& g, const FrozenMatrix& w, const FrozenVector& bias,
                         Index out_channels, Activation act, View x, Activate&& activate_outputs) noexcept {
  if (tape.status() != Status::kOk) {
    return kNoView;
  }
  const WindowPlan p = plan_windows(g);
  const std::uint64_t outputs = capped_product(p.windows, out_channels);
  if (!frozen_conv_valid(g, out_channels, w, bias) || (p.windows == 0U) || (p.max_runs > kMaxWindowRuns) ||
      (input_nodes(g) != x.count) || (outputs >= kNoIndex)) {
    static_cast<void>(tape.report(Status::kInvalidArgument));
    return kNoView;
  }
  if (!is_recorded(tape, x)) {
    static_cast<void>(tape.report(Status::kInvalidHandle));
    return kNoView;
  }
  const std::uint64_t interior = (act == Activation::kIdentity) ? outputs : (2U * outputs);
  const std::uint64_t slots = p.list_slots + (static_cast<std::uint64_t>(burtorch::kFrozenSlots) * p.windows);
  if (!has_room(tape, p.zero_width, interior, slots)) {
    static_cast<void>(tape.report(Status::kCapacityExceeded));
    return kNoView;
  }
  const FrozenVector* b = (bias.size != 0U) ? &bias : nullptr;
  const Index first = conv_positions(tape, g, p.zero_width, x, [&](ViewList window) noexcept {
    return burtorch::matvec_frozen(tape, w, window, b);
  });
  if (tape.status() != Status::kOk) {
    return kNoView;
  }
  return activate_outputs(View{first, static_cast<Index>(outputs)});
}

/// frozen_conv_forward with the activation chosen at run time: every
/// activation's code is compiled in.
template <class T>
View frozen_conv_forward(Tape<T>& tape, const ConvGeometry& g, const FrozenMatrix& w, const FrozenVector& bias,
                         Index out_channels, Activation act, View x) noexcept {
  return frozen_conv_forward(tape, g, w, bias, out_channels, act, x,
                             [&tape, act](View y) noexcept { return activate(tape, y, act); });
}

/// frozen_conv_forward with the activation A known at compile time (`act`,
/// the layer's, must be A: else kInvalidArgument and nothing recorded):
/// only A's code is compiled in.
template <Activation A, class T>
View frozen_conv_forward(Tape<T>& tape, const ConvGeometry& g, const FrozenMatrix& w, const FrozenVector& bias,
                         Index out_channels, Activation act, View x) noexcept {
  if (act != A) {
    static_cast<void>(tape.report(Status::kInvalidArgument));
    return kNoView;
  }
  return frozen_conv_forward(tape, g, w, bias, out_channels, A, x,
                             [&tape](View y) noexcept { return activate<A>(tape, y); });
}

/// Collects a window's runs (conv_window's sink) for frozen_conv_evaluate.
struct RunList {
  WindowRun runs[kMaxWindowRuns];  ///< the runs, in the weights' order
  std::size_t count = 0U;          ///< runs collected
  void run(const WindowRun& r) noexcept {
    if (count < kMaxWindowRuns) {
      runs[count] = r;
      ++count;
    }
  }
};

/// act(x) of one value (a scalar or a lane type: ScalarOps's functions).
template <class V>
inline V activated(V x, Activation act) noexcept {
  if (act == Activation::kRelu) {
    return ScalarOps<V>::relu(x);
  }
  if (act == Activation::kTanh) {
    return ScalarOps<V>::tanh(x);
  }
  if (act == Activation::kSigmoid) {
    return V(1) / (V(1) + ScalarOps<V>::exp(-x));
  }
  return x;
}

/// activated() with the activation known at compile time: only A's
/// function is compiled in.
template <Activation A, class V>
inline V activated(V x) noexcept {
  if constexpr (A == Activation::kRelu) {
    return ScalarOps<V>::relu(x);
  } else if constexpr (A == Activation::kTanh) {
    return ScalarOps<V>::tanh(x);
  } else if constexpr (A == Activation::kSigmoid) {
    return V(1) / (V(1) + ScalarOps<V>::exp(-x));
  } else {
    return x;
  }
}

/// One output of a frozen convolution before bias and activation: the
/// weights from `at` (one per input of the window, padding included) times
/// the window's inputs of x, the padding skipped.
template <class V, class Reader>
V frozen_window_dot(const Reader& weights, std::size_t at, const RunList& window, const V* x) noexcept {
  V acc(0.0F);
  for (std::size_t k = 0U; k < window.count; ++k) {
    const WindowRun& run = window.runs[k];
    const std::size_t offset = static_cast<std::size_t>(run.offset);
    for (std::size_t i = 0U; (!run.zeros) && (i < run.count); ++i) {
      acc += V(weights[at + i]) * x[offset + i];
    }
    at += static_cast<std::size_t>(run.count);
  }
  return acc;
}

/// A frozen convolution's outputs without a tape (values only: no node, no
/// gradient, as nothing below stop_gradient needs one): y[position *
/// out_channels + o] = act(sum of the window's terms + bias[o]) over the
/// channels-last input x of geometry g, the terms of each run in input
/// order, the padding skipped. V is a scalar or a lane type (each lane
/// another sample, each weight read once for all lanes). False, nothing
/// written, for arrays that do not describe the layer or a geometry
/// without windows or with windows of more than kMaxWindowRuns runs.
/// `activation(V)` is the layer's activation of one value.
template <class V, class Act>
bool frozen_conv_evaluate(const ConvGeometry& g, const FrozenMatrix& w, const FrozenVector& bias, Index out_channels,
                          const V* x, V* y, Act&& activation) noexcept {
  const WindowPlan p = plan_windows(g);
  if ((x == nullptr) || (y == nullptr) || !frozen_conv_valid(g, out_channels, w, bias) || (p.windows == 0U) ||
      (p.max_runs > kMaxWindowRuns)) {
    return false;
  }
  const Index rows = out_rows(g);
  const Index cols = out_cols(g);
  burtorch::detail::with_reader(w.data, [&](auto weights) noexcept {
    V* out = y;
    for (Index r = 0U; r < rows; ++r) {
      for (Index c = 0U; c < cols; ++c) {
        RunList window;
        conv_window(g, r, c, window);
        for (Index o = 0U; o < out_channels; ++o) {
          V acc = frozen_window_dot<V>(weights, static_cast<std::size_t>(o) * w.cols, window, x);
          if (bias.size != 0U) {
            acc += V(frozen_at(bias.data, o));
          }
          out[o] = activation(acc);
        }
        out += out_channels;
      }
    }
  });
  return true;
}

/// frozen_conv_evaluate with the activation chosen at run time.
template <class V>
bool frozen_conv_evaluate(const ConvGeometry& g, const FrozenMatrix& w, const FrozenVector& bias, Index out_channels,
                          Activation act, const V* x, V* y) noexcept {
  return frozen_conv_evaluate(g, w, bias, out_channels, x, y, [act](V v) noexcept { return activated(v, act); });
}

/// frozen_conv_evaluate with the activation A known at compile time (`act`,
/// the layer's, must be A: else false, nothing written).
template <Activation A, class V>
bool frozen_conv_evaluate(const ConvGeometry& g, const FrozenMatrix& w, const FrozenVector& bias, Index out_channels,
                          Activation act, const V* x, V* y) noexcept {
  return (act == A) &&
         frozen_conv_evaluate(g, w, bias, out_channels, x, y, [](V v) noexcept { return activated<A>(v); });
}

}  // namespace detail

/// A Conv1d over frozen weights: weight [C_out][k * C_in] (rows C_out),
/// bias C_out elements (size 0: none), options as Conv1d's (in_channels,
/// out_channels, kernel, stride, padding, dilation, act; the rest unused).
/// Output position t, channel o is act(b[o] + sum over taps j and channels
/// c of W[o][j * C_in + c] * x[t * stride - padding + j * dilation][c]).
template <class T>
struct FrozenConv1d {
  FrozenMatrix weight;     ///< [C_out][k][C_in]: rows = C_out, cols = k * C_in
  FrozenVector bias;       ///< size 0: no bias; else C_out
  Conv1dOptions options;   ///< geometry and activation

  /// As Conv1d::output_length.
  static constexpr Index output_length(const Conv1dOptions& o, Index length) noexcept {
    return Conv1d<T>::output_length(o, length);
  }
  /// As Conv1d::nodes: the zero leaves, C_out per position (twice with an activation).
  static constexpr std::size_t nodes(const Conv1dOptions& o, Index length) noexcept {
    return Conv1d<T>::nodes(o, length);
  }
  /// Per output position its window's view list (1 + 2 per run) and
  /// kFrozenSlots descriptor slots.
  static constexpr std::size_t slots(const Conv1dOptions& o, Index length) noexcept {
    return detail::frozen_conv_slots<T>(Conv1d<T>::geometry(o, length));
  }

  /// Records the convolution of x (length * in_channels nodes); returns
  /// output_length() positions of out_channels, channels-last. Errors as
  /// detail::frozen_conv_forward (kInvalidArgument also when the arrays'
  /// sizes are not the options' or out_channels differs from weight.rows).
  View forward(Tape<T>& tape, View x, Index length) const noexcept {
    return detail::frozen_conv_forward(tape, Conv1d<T>::geometry(options, length), weight, bias, options.out_channels, options.act, x);
  }
  /// forward() with the activation chosen at compile time, as for
  /// FrozenLinear (A must be options.act, else kInvalidArgument and nothing
  /// recorded): only A's code is compiled in, so a ReLU backbone links no
  /// tanhf or expf for it.
  template <Activation A>
  View forward(Tape<T>& tape, View x, Index length) const noexcept {
    return detail::frozen_conv_forward<A>(tape, Conv1d<T>::geometry(options, length), weight, bias,
                                          options.out_channels, options.act, x);
  }
  /// The outputs of x (length * in_channels values, channels-last) into y
  /// without a tape (detail::frozen_conv_evaluate: a frozen backbone below
  /// stop_gradient needs no graph); V float, double or a lane type (a lane
  /// batch: each weight read once for all lanes). False, nothing written,
  /// as forward() refuses the layer.
  template <class V>
  bool evaluate(const V* x, Index length, V* y) const noexcept {
    return detail::frozen_conv_evaluate(Conv1d<T>::geometry(options, length), weight, bias, options.out_channels,
                                        options.act, x, y);
  }
  /// evaluate() with the activation chosen at compile time (A must be
  /// options.act, else false, nothing written): only A's code is compiled in.
  template <Activation A, class V>
  bool evaluate(const V* x, Index length, V* y) const noexcept {
    return detail::frozen_conv_evaluate<A>(Conv1d<T>::geometry(options, length), weight, bias, options.out_channels,
                                           options.act, x, y);
  }
};

/// A Conv2d over frozen weights: weight [C_out][kH * kW * C_in], bias C_out
/// elements (size 0: none), options as Conv2d's.
template <class T>
struct FrozenConv2d {
  FrozenMatrix weight;     ///< [C_out][kH][kW][C_in]: rows = C_out, cols = kH * kW * C_in
  FrozenVector bias;       ///< size 0: no bias; else C_out
  Conv2dOptions options;   ///< geometry and activation

  /// As Conv2d::output_size.
  static constexpr Size2d output_size(const Conv2dOptions& o, Size2d in) noexcept {
    return Conv2d<T>::output_size(o, in);
  }
  /// As Conv2d::nodes.
  static constexpr std::size_t nodes(const Conv2dOptions& o, Size2d in) noexcept { return Conv2d<T>::nodes(o, in); }
  /// As FrozenConv1d::slots.
  static constexpr std::size_t slots(const Conv2dOptions& o, Size2d in) noexcept {
    return detail::frozen_conv_slots<T>(Conv2d<T>::geometry(o, in));
  }

  /// Records the convolution of x (in.height * in.width * in_channels
  /// nodes); returns output_size() positions of out_channels. Errors as
  /// FrozenConv1d::forward.
  View forward(Tape<T>& tape, View x, Size2d in) const noexcept {
    return detail::frozen_conv_forward(tape, Conv2d<T>::geometry(options, in), weight, bias, options.out_channels, options.act, x);
  }
  /// FrozenConv1d::forward<A>'s form.
  template <Activation A>
  View forward(Tape<T>& tape, View x, Size2d in) const noexcept {
    return detail::frozen_conv_forward<A>(tape, Conv2d<T>::geometry(options, in), weight, bias, options.out_channels,
                                          options.act, x);
  }
  /// As FrozenConv1d::evaluate over in.height * in.width positions.
  template <class V>
  bool evaluate(const V* x, Size2d in, V* y) const noexcept {
    return detail::frozen_conv_evaluate(Conv2d<T>::geometry(options, in), weight, bias, options.out_channels,
                                        options.act, x, y);
  }
  /// FrozenConv1d::evaluate<A>'s form.
  template <Activation A, class V>
  bool evaluate(const V* x, Size2d in, V* y) const noexcept {
    return detail::frozen_conv_evaluate<A>(Conv2d<T>::geometry(options, in), weight, bias, options.out_channels,
                                           options.act, x, y);
  }
};

}  // namespace nn
}  // namespace burtorch

#endif  // BURTORCH_NN_FROZEN_HPP
