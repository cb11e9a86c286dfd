// SPDX-License-Identifier: Apache-2.0
/// @file
/// Convolutions (Conv1d, Conv2d) over channels-last activations, recorded as
/// inner products of a weight run with a view list of the window: no copy
/// of an activation, no new op.
///
/// Layout. An activation is channels-last: a Conv1d input of `length`
/// positions and C channels is one View of length * C nodes, position t's
/// channels being the run [t * C, t * C + C); a Conv2d input of H x W
/// positions is H * W * C nodes, row-major over positions (node (y * W + x) *
/// C + c). Outputs have the same layout, so layers chain without copies.
///
/// One output position. The window of a Conv1d over k positions of a
/// channels-last input is ONE run of k * C_in nodes (with dilation, k runs of
/// C_in); a Conv2d window is kH runs of kW * C_in nodes. The weights are
/// stored [C_out][kH][kW][C_in] (PyTorch stores [C_out][C_in][kH][kW]), so
/// the weights of output channel o are one run in the window's order and all
/// C_out outputs of a position are ONE matvec over the window's view
/// list: C_out consecutive nodes sharing one 4-slot descriptor.
///
/// Zero padding without copies: a forward pass records once, before its
/// outputs, a run of zero-valued leaves as wide as the longest stretch of
/// padding any window reads; a border window lists [zeros, input, ...,
/// zeros] runs, so its weights stay one contiguous run. (Adjacent runs that
/// are adjacent on the tape are merged: a window with no padding and no
/// dilation is one run per kernel row, or a single run.)
///
/// Memory plan: parameters(o), nodes(o, size) and slots(o, size) are
/// constexpr and exact (a window walker shared with forward() counts the
/// runs: conv_geometry.hpp); add them up with nn::make_plan.
///
/// One forward over a weight source (nn/source.hpp): on a tape of N lanes
/// (one sample per lane) the weights are shared scalars of their own tape
/// (nn::lane_params), all output positions one lane_conv op (lanes/ops.hpp):
/// the same windows, the outputs in the same layout, one head node more and
/// one descriptor per layer instead of one per position
/// (nodes<LaneParams<T>>(), slots<LaneParams<T>>()).
#ifndef BURTORCH_NN_CONV_HPP
#define BURTORCH_NN_CONV_HPP

#include <cstddef>
#include <cstdint>

#include "burtorch/nn/common.hpp"
#include "burtorch/nn/conv_geometry.hpp"
#include "burtorch/nn/init.hpp"
#include "burtorch/nn/linear.hpp"
#include "burtorch/nn/random.hpp"
#include "burtorch/nn/params.hpp"
#include "burtorch/nn/source.hpp"
#include "burtorch/core/tape.hpp"
#include "burtorch/core/views.hpp"

namespace burtorch {
namespace nn {

namespace detail {

/// The windows of a convolution, checked by its caller: records
/// `zero_width` zeros (the padding's: zero() makes each), then for each
/// output position, row by row, its window's view list over x and the
/// zeros, and calls window(list). Returns the zeros.
template <class T, class Zero, class Window>
View conv_windows(Tape<T>& tape, const ConvGeometry& g, std::uint64_t zero_width, View x, Zero zero,
                  Window window) noexcept {
  View zeros = kNoView;
  if (zero_width != 0U) {
    zeros = burtorch::record_view(tape, static_cast<Index>(zero_width), [&zero](Index /*k*/) noexcept { return zero(); });
  }
  View runs[kMaxWindowRuns];
  const Index rows = out_rows(g);
  const Index cols = out_cols(g);
  for (Index r = 0U; r < rows; ++r) {
    for (Index c = 0U; c < cols; ++c) {
      ViewSink sink{runs, 0U, zeros.first, x.first};
      conv_window(g, r, c, sink);
      window(burtorch::view_list(tape, runs, sink.count));
    }
  }
  return zeros;
}

/// The output positions of a convolution on an ordinary tape, checked by
/// its caller: zero leaves, then per position its window's view list and
/// position(window), which records that position's outputs (a matvec) and
/// returns them. Returns the first output node.
template <class T, class Position>
Index conv_positions(Tape<T>& tape, const ConvGeometry& g, std::uint64_t zero_width, View x,
                     Position position) noexcept {
  Index first = kNoIndex;
  static_cast<void>(conv_windows(
      tape, g, zero_width, x, [&tape]() noexcept { return tape.leaf(T(0)); },
      [&](ViewList window) noexcept {
        const View y = position(window);
        first = (first == kNoIndex) ? y.first : first;
      }));
  return first;
}

/// A convolution's forward pass over the channels-last input x of geometry
/// g (see the file comment), its weights read from the source src
/// (nn/source.hpp): one matvec per position, or (Src::kConvOneOp) one
/// source_conv over every window. Checks everything before recording
/// anything: an uncreated layer, weights the source does not hold, an input
/// of another width, a geometry without windows or with windows of more
/// than kMaxWindowRuns runs give kInvalidArgument; an input or a parameter
/// not recorded (a tape reset since create()) kInvalidHandle; too little
/// room kCapacityExceeded. Returns the outputs (kNoView on error).
/// `activate_outputs(View)` records the activation (act: the layer's, for
/// the count of nodes it takes).
template <class T, class Src, class Activate>
View conv_forward(Tape<T>& tape, const Src& src, const ConvGeometry& g, Index weight, Index out_channels, Index bias,
                  Activation act, View x, Activate&& activate_outputs) noexcept {
  if (tape.status() != Status::kOk) {
    return kNoView;
  }
  const WindowPlan p = plan_windows(g);
  const std::uint64_t outputs = capped_product(p.windows, out_channels);
  const std::uint64_t weights =
      capped_product(capped_product(capped_product(g.kernel_h, g.kernel_w), g.channels), out_channels);
  const bool held = (weight != kNoIndex) && source_covers(src, weight, weights) &&
                    ((bias == kNoIndex) || source_covers(src, bias, out_channels));
  if (!held || (out_channels == 0U) || (p.windows == 0U) || (p.max_runs > kMaxWindowRuns) ||
      (input_nodes(g) != x.count) || (outputs >= (kNoIndex - Src::kConvHead))) {
    static_cast<void>(tape.report(Status::kInvalidArgument));
    return kNoView;
  }
  const bool params_recorded = source_recorded(tape, src, weight, weights) &&
                               ((bias == kNoIndex) || source_recorded(tape, src, bias, out_channels));
  if (!is_recorded(tape, x) || !params_recorded) {
    static_cast<void>(tape.report(Status::kInvalidHandle));
    return kNoView;
  }
  const std::uint64_t interior = Src::kConvHead + ((act == Activation::kIdentity) ? outputs : (2U * outputs));
  if (!has_room(tape, p.zero_width, interior, p.list_slots + Src::kConvSlots + (Src::kConvWindowSlots * p.windows))) {
    static_cast<void>(tape.report(Status::kCapacityExceeded));
    return kNoView;
  }
  Index first = kNoIndex;
  ViewList first_window{};
  const View zeros = conv_windows(
      tape, g, p.zero_width, x, [&tape, &src]() noexcept { return source_zero(tape, src); },
      [&](ViewList window) noexcept {
        if constexpr (Src::kConvOneOp) {
          first_window = (first == kNoIndex) ? window : first_window;
          first = 0U;
        } else {
          const View y = source_matvec(tape, src, weight, out_channels, window, bias);
          first = (first == kNoIndex) ? y.first : first;
        }
      });
  if (tape.status() != Status::kOk) {
    return kNoView;
  }
  View y = View{first, static_cast<Index>(outputs)};
  if constexpr (Src::kConvOneOp) {
    y = source_conv(tape, src, weight, out_channels, first_window, static_cast<Index>(p.windows), zeros.first, bias);
  }
  return (y.count != 0U) ? activate_outputs(y) : kNoView;
}

/// conv_forward with the activation chosen at run time: every activation's
/// code is compiled in.
template <class T, class Src>
View conv_forward(Tape<T>& tape, const Src& src, const ConvGeometry& g, Index weight, Index out_channels, Index bias,
                  Activation act, View x) noexcept {
  return conv_forward(tape, src, g, weight, out_channels, bias, act, x,
                      [&tape, act](View y) noexcept { return activate(tape, y, act); });
}

/// conv_forward with the activation A known at compile time (`act`, the
/// layer's, must be A: else kInvalidArgument and nothing recorded): only
/// A's code is compiled in.
template <Activation A, class T, class Src>
View conv_forward(Tape<T>& tape, const Src& src, const ConvGeometry& g, Index weight, Index out_channels, Index bias,
                  Activation act, View x) noexcept {
  if (act != A) {
    static_cast<void>(tape.report(Status::kInvalidArgument));
    return kNoView;
  }
  return conv_forward(tape, src, g, weight, out_channels, bias, A, x,
                      [&tape](View y) noexcept { return activate<A>(tape, y); });
}

/// Creates a convolution's parameters: out * fan_in weights, then (if
/// `with_bias`) out biases. Returns the first weight (kNoIndex on error);
/// *bias_first receives the first bias (kNoIndex without).
template <class T>
Index conv_params(Tape<T>& tape, std::uint64_t out, std::uint64_t fan_in, bool with_bias, const Init& weight_init,
                  const Init& bias_init, const char* weight_name, const char* bias_name, Rng& rng,
                  Index* bias_first) noexcept {
  *bias_first = kNoIndex;
  const std::uint64_t count = capped_product(out, fan_in);
  if ((out == 0U) || (fan_in == 0U) || (count >= kNoIndex)) {
    static_cast<void>(tape.report(Status::kInvalidArgument));
    return kNoIndex;
  }
  const Index w = make_params(tape, static_cast<std::size_t>(count), weight_init, static_cast<std::size_t>(fan_in),
                              rng, weight_name);
  const Index b = with_bias ? make_params(tape, static_cast<std::size_t>(out), bias_init,
                                          static_cast<std::size_t>(fan_in), rng, bias_name)
                            : kNoIndex;
  const bool ok = (tape.status() == Status::kOk) && (w != kNoIndex);
  *bias_first = ok ? b : kNoIndex;
  return ok ? w : kNoIndex;
}

}  // namespace detail

/// How to build a Conv1d. Only the channels and the kernel have no default;
/// the rest is torch.nn.Conv1d's: stride 1, no padding, no dilation, a
/// bias, weights and biases drawn from U(-1/sqrt(fan_in), 1/sqrt(fan_in))
/// with fan_in = in_channels * kernel (kaiming_uniform_ with a = sqrt(5)).
/// Padding is zero padding on both sides (any amount, as PyTorch's).
struct Conv1dOptions {
  Index in_channels = 0U;                                       ///< C_in
  Index out_channels = 0U;                                      ///< C_out
  Index kernel = 0U;                                            ///< k: positions per window
  Index stride = 1U;                                            ///< positions between windows
  Index padding = 0U;                                           ///< zero positions at each end
  Index dilation = 1U;                                          ///< spacing of the kernel's taps
  Activation act = Activation::kIdentity;                       ///< applied to every output
  bool bias = true;                                             ///< false: no bias parameters
  Init weight_init = Init::fan_in_uniform(kGainLinearDefault);  ///< weights (fan-in C_in * k)
  Init bias_init = Init::fan_in_uniform(kGainLinearDefault);    ///< biases (fan-in C_in * k)
  const char* weight_name = nullptr;                            ///< name of every weight (Tape::param)
  const char* bias_name = nullptr;                              ///< name of every bias
};

/// A 1-D convolution over `length` positions of in_channels channels-last
/// (see the file comment): output position t, channel o is
/// act(b[o] + sum over taps j and channels c of W[o][j][c] * x[t * stride -
/// padding + j * dilation][c]), zero outside the input. Weights stored
/// [C_out][k][C_in], then the C_out biases.
template <class T>
struct Conv1d {
  Index weight = kNoIndex;  ///< first weight ([C_out][k][C_in])
  Index bias = kNoIndex;    ///< first bias (kNoIndex: none)
  Conv1dOptions options{};  ///< what create() was given

  /// The windows of an input of `length` positions.
  static constexpr detail::ConvGeometry geometry(const Conv1dOptions& o, Index length) noexcept {
    detail::ConvGeometry g;
    g.height = 1U;
    g.width = length;
    g.channels = o.in_channels;
    g.kernel_w = o.kernel;
    g.stride_w = o.stride;
    g.pad_w = o.padding;
    g.dilation_w = o.dilation;
    return g;
  }
  /// Output positions for `length` input positions (torch's formula; 0 if
  /// no window fits).
  static constexpr Index output_length(const Conv1dOptions& o, Index length) noexcept {
    return detail::out_cols(geometry(o, length));
  }
  /// C_out * k * C_in weights (+ C_out biases).
  static constexpr std::size_t parameters(const Conv1dOptions& o) noexcept {
    const std::size_t w = static_cast<std::size_t>(o.out_channels) * o.kernel * o.in_channels;
    return w + (o.bias ? o.out_channels : 0U);
  }
  /// Nodes of forward() over `length` positions: the zero leaves of the
  /// padding, then C_out per output position (twice with an activation);
  /// with the weights read from a source of type Src (nn/source.hpp), its
  /// head nodes too (on a tape of lanes: `nodes<LaneParams<T>>(o, length)`).
  template <class Src = TapeParams>
  static constexpr std::size_t nodes(const Conv1dOptions& o, Index length) noexcept {
    return detail::conv_nodes<Src>(geometry(o, length), o.out_channels, o.act);
  }
  /// Slots of forward() over `length` positions: per output position its
  /// window's view list (1 + 2 per run) and a 4-slot matvec descriptor; a
  /// source with one op over every window (Src::kConvOneOp) one descriptor.
  template <class Src = TapeParams>
  static constexpr std::size_t slots(const Conv1dOptions& o, Index length) noexcept {
    return detail::conv_slots<Src>(geometry(o, length));
  }
  /// The most runs one window lists (forward() refuses more than kMaxWindowRuns).
  static constexpr std::size_t max_window_runs(const Conv1dOptions& o, Index length) noexcept {
    return static_cast<std::size_t>(detail::plan_windows(geometry(o, length)).max_runs);
  }

  /// Appends the weights (from o.weight_init), then the biases (o.bias_init).
  /// False if the tape is full or failed or a size is 0 or too large
  /// (kInvalidArgument); params() is then kNoView.
  bool create(Tape<T>& tape, const Conv1dOptions& o, Rng& rng) noexcept {
    options = o;
    weight = kNoIndex;
    bias = kNoIndex;
    if ((o.stride == 0U) || (o.dilation == 0U)) {
      static_cast<void>(tape.report(Status::kInvalidArgument));
      return false;
    }
    const std::uint64_t fan_in = detail::capped_product(o.in_channels, o.kernel);
    weight = detail::conv_params(tape, o.out_channels, fan_in, o.bias, o.weight_init, o.bias_init, o.weight_name,
                                 o.bias_name, rng, &bias);
    return weight != kNoIndex;
  }

  /// The weights, then the biases (kNoView before a successful create()).
  View params() const noexcept {
    return (weight != kNoIndex) ? View{weight, static_cast<Index>(parameters(options))} : kNoView;
  }

  /// Records the convolution of x, `length` positions of in_channels
  /// (x.count == length * in_channels); returns output_length() positions
  /// of out_channels, channels-last. kInvalidArgument (nothing recorded) for
  /// another width, a layer not created, or no window fitting the input.
  View forward(Tape<T>& tape, View x, Index length) const noexcept { return forward(tape, TapeParams{}, x, length); }
  /// The same with the weights read from a source (nn/source.hpp), e.g. on
  /// a tape of N lanes (one sample per lane) this layer's parameters on
  /// their own tape, shared through LaneParams p (nn::lane_params): read
  /// once per N samples, their gradients summed over the lanes. Errors as
  /// above (weights the source does not hold: kInvalidArgument).
  template <class U, class Src>
  View forward(Tape<U>& tape, const Src& src, View x, Index length) const noexcept {
    return detail::conv_forward(tape, src, geometry(options, length), weight, options.out_channels, bias, options.act,
                                x);
  }
  /// forward() with the activation chosen at compile time (A must be
  /// options.act, else kInvalidArgument and nothing recorded): only A's
  /// code is compiled in, so a ReLU model links no tanhf or expf for it,
  /// e.g. `conv.forward<nn::Activation::kRelu>(tape, x, length)`.
  template <Activation A>
  View forward(Tape<T>& tape, View x, Index length) const noexcept {
    return forward<A>(tape, TapeParams{}, x, length);
  }
  /// forward<A>() over a source.
  template <Activation A, class U, class Src>
  View forward(Tape<U>& tape, const Src& src, View x, Index length) const noexcept {
    return detail::conv_forward<A>(tape, src, geometry(options, length), weight, options.out_channels, bias,
                                   options.act, x);
  }
};

/// How to build a Conv2d: torch.nn.Conv2d's defaults as for Conv1dOptions
/// (fan_in = in_channels * kernel_h * kernel_w), per axis.
struct Conv2dOptions {
  Index in_channels = 0U;                                       ///< C_in
  Index out_channels = 0U;                                      ///< C_out
  Index kernel_h = 0U;                                          ///< kernel rows
  Index kernel_w = 0U;                                          ///< kernel columns
  Index stride_h = 1U;                                          ///< rows between windows
  Index stride_w = 1U;                                          ///< columns between windows
  Index padding_h = 0U;                                         ///< zero rows above and below
  Index padding_w = 0U;                                         ///< zero columns left and right
  Index dilation_h = 1U;                                        ///< spacing of the kernel's rows
  Index dilation_w = 1U;                                        ///< spacing of the kernel's columns
  Activation act = Activation::kIdentity;                       ///< applied to every output
  bool bias = true;                                             ///< false: no bias parameters
  Init weight_init = Init::fan_in_uniform(kGainLinearDefault);  ///< weights (fan-in C_in * kH * kW)
  Init bias_init = Init::fan_in_uniform(kGainLinearDefault);    ///< biases (fan-in C_in * kH * kW)
  const char* weight_name = nullptr;                            ///< name of every weight (Tape::param)
  const char* bias_name = nullptr;                              ///< name of every bias
};

/// A 2-D convolution over H x W positions of in_channels, channels-last
/// (node (y * W + x) * C_in + c). Weights stored [C_out][kH][kW][C_in], then
/// the C_out biases; outputs channels-last over the output positions.
template <class T>
struct Conv2d {
  Index weight = kNoIndex;  ///< first weight ([C_out][kH][kW][C_in])
  Index bias = kNoIndex;    ///< first bias (kNoIndex: none)
  Conv2dOptions options{};  ///< what create() was given

  /// The windows of an input of `in` positions.
  static constexpr detail::ConvGeometry geometry(const Conv2dOptions& o, Size2d in) noexcept {
    detail::ConvGeometry g;
    g.height = in.height;
    g.width = in.width;
    g.channels = o.in_channels;
    g.kernel_h = o.kernel_h;
    g.kernel_w = o.kernel_w;
    g.stride_h = o.stride_h;
    g.stride_w = o.stride_w;
    g.pad_h = o.padding_h;
    g.pad_w = o.padding_w;
    g.dilation_h = o.dilation_h;
    g.dilation_w = o.dilation_w;
    return g;
  }
  /// Output positions for `in` (torch's formula per axis; 0 x 0 if no window fits).
  static constexpr Size2d output_size(const Conv2dOptions& o, Size2d in) noexcept {
    const detail::ConvGeometry g = geometry(o, in);
    const Index rows = detail::out_rows(g);
    const Index cols = detail::out_cols(g);
    return ((rows == 0U) || (cols == 0U)) ? Size2d{} : Size2d{rows, cols};
  }
  /// C_out * kH * kW * C_in weights (+ C_out biases).
  static constexpr std::size_t parameters(const Conv2dOptions& o) noexcept {
    const std::size_t w = static_cast<std::size_t>(o.out_channels) * o.kernel_h * o.kernel_w * o.in_channels;
    return w + (o.bias ? o.out_channels : 0U);
  }
  /// Nodes of forward() over `in`: as Conv1d::nodes.
  template <class Src = TapeParams>
  static constexpr std::size_t nodes(const Conv2dOptions& o, Size2d in) noexcept {
    return detail::conv_nodes<Src>(geometry(o, in), o.out_channels, o.act);
  }
  /// Slots of forward() over `in`: as Conv1d::slots.
  template <class Src = TapeParams>
  static constexpr std::size_t slots(const Conv2dOptions& o, Size2d in) noexcept {
    return detail::conv_slots<Src>(geometry(o, in));
  }
  /// The most runs one window lists (forward() refuses more than kMaxWindowRuns).
  static constexpr std::size_t max_window_runs(const Conv2dOptions& o, Size2d in) noexcept {
    return static_cast<std::size_t>(detail::plan_windows(geometry(o, in)).max_runs);
  }

  /// As Conv1d::create.
  bool create(Tape<T>& tape, const Conv2dOptions& o, Rng& rng) noexcept {
    options = o;
    weight = kNoIndex;
    bias = kNoIndex;
    if ((o.stride_h == 0U) || (o.stride_w == 0U) || (o.dilation_h == 0U) || (o.dilation_w == 0U)) {
      static_cast<void>(tape.report(Status::kInvalidArgument));
      return false;
    }
    const std::uint64_t fan_in = detail::capped_product(detail::capped_product(o.kernel_h, o.kernel_w), o.in_channels);
    weight = detail::conv_params(tape, o.out_channels, fan_in, o.bias, o.weight_init, o.bias_init, o.weight_name,
                                 o.bias_name, rng, &bias);
    return weight != kNoIndex;
  }

  /// The weights, then the biases (kNoView before a successful create()).
  View params() const noexcept {
    return (weight != kNoIndex) ? View{weight, static_cast<Index>(parameters(options))} : kNoView;
  }

  /// Records the convolution of x, in.height * in.width positions of
  /// in_channels; returns output_size() positions of out_channels,
  /// channels-last. Errors as Conv1d::forward.
  View forward(Tape<T>& tape, View x, Size2d in) const noexcept { return forward(tape, TapeParams{}, x, in); }
  /// The same with the weights read from a source, as Conv1d's.
  template <class U, class Src>
  View forward(Tape<U>& tape, const Src& src, View x, Size2d in) const noexcept {
    return detail::conv_forward(tape, src, geometry(options, in), weight, options.out_channels, bias, options.act, x);
  }
  /// Conv1d::forward<A>'s form.
  template <Activation A>
  View forward(Tape<T>& tape, View x, Size2d in) const noexcept {
    return forward<A>(tape, TapeParams{}, x, in);
  }
  /// Conv1d::forward<A>'s form over a source.
  template <Activation A, class U, class Src>
  View forward(Tape<U>& tape, const Src& src, View x, Size2d in) const noexcept {
    return detail::conv_forward<A>(tape, src, geometry(options, in), weight, options.out_channels, bias, options.act,
                                   x);
  }
};

/// A channels-last activation read as one vector: the view itself, no node
/// recorded. Its order is (position, channel): element t * C + c for 1-D,
/// (y * W + x) * C + c for 2-D, so a Linear after it sees that order, where
/// torch.flatten of an (N, C, L) tensor gives c * L + t (a PyTorch model's
/// weights are permuted accordingly: tools/golden/nn/make_conv.py).
constexpr View flatten(View x) noexcept { return x; }

}  // namespace nn
}  // namespace burtorch

#endif  // BURTORCH_NN_CONV_HPP
