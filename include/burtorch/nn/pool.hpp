// SPDX-License-Identifier: Apache-2.0
/// @file
/// Pooling over channels-last activations (the layout of conv.hpp):
/// AvgPool1d/2d and MaxPool1d/2d. Each output (position, channel) is one
/// reduction node over the window's nodes of that channel: a mean, or the
/// maximum as PyTorch picks it (the first of equal maxima). In channels-last
/// order a window's nodes of one channel are C apart, so the reduction lists
/// them in argument slots (one per tap); with one channel and windows that
/// are runs of the tape it reads them in place (no slots).
///
/// Windows as torch.nn's pooling with its defaults: stride = kernel (0 in
/// the options means that), no padding, no dilation, floor mode (positions
/// past the last whole window are dropped). Pooling has no parameters:
/// build one from its options, `nn::AvgPool1d<float> pool{options};`. One
/// forward for every tape: on a tape of lanes (a lane batch) it records the
/// same reductions, lane by lane (the same nodes and slots as on a scalar
/// tape).
#ifndef BURTORCH_NN_POOL_HPP
#define BURTORCH_NN_POOL_HPP

#include <cstddef>
#include <cstdint>

#include "burtorch/ext/functions.hpp"
#include "burtorch/nn/conv.hpp"
#include "burtorch/nn/params.hpp"
#include "burtorch/core/tape.hpp"

namespace burtorch {
namespace nn {

/// Most taps (kernel_h * kernel_w) a pooling window may have: forward()
/// gathers a window's handles in a local array of this size.
constexpr std::size_t kMaxPoolWindow = 32U;

/// How to pool over 1-D activations: channels and kernel have no default.
struct Pool1dOptions {
  Index channels = 0U;  ///< C (pooling keeps the channels)
  Index kernel = 0U;    ///< positions per window
  Index stride = 0U;    ///< positions between windows; 0: the kernel (torch's default)
};

/// How to pool over 2-D activations: channels and kernel have no default.
struct Pool2dOptions {
  Index channels = 0U;  ///< C
  Index kernel_h = 0U;  ///< window rows
  Index kernel_w = 0U;  ///< window columns
  Index stride_h = 0U;  ///< rows between windows; 0: kernel_h
  Index stride_w = 0U;  ///< columns between windows; 0: kernel_w
};

namespace detail {

/// The windows of a 1-D pooling over `length` positions.
constexpr ConvGeometry pool_geometry(const Pool1dOptions& o, Index length) noexcept {
  ConvGeometry g;
  g.height = 1U;
  g.width = length;
  g.channels = o.channels;
  g.kernel_w = o.kernel;
  g.stride_w = (o.stride == 0U) ? o.kernel : o.stride;
  return g;
}
/// The windows of a 2-D pooling over `in`.
constexpr ConvGeometry pool_geometry(const Pool2dOptions& o, Size2d in) noexcept {
  ConvGeometry g;
  g.height = in.height;
  g.width = in.width;
  g.channels = o.channels;
  g.kernel_h = o.kernel_h;
  g.kernel_w = o.kernel_w;
  g.stride_h = (o.stride_h == 0U) ? o.kernel_h : o.stride_h;
  g.stride_w = (o.stride_w == 0U) ? o.kernel_w : o.stride_w;
  return g;
}

/// Input node of tap (i, j) of the window at output (row, col), channel c.
constexpr std::uint64_t pool_tap(const ConvGeometry& g, Index row, Index col, Index i, Index j, Index c) noexcept {
  const std::uint64_t r = (static_cast<std::uint64_t>(row) * g.stride_h) + i;
  const std::uint64_t x = (static_cast<std::uint64_t>(col) * g.stride_w) + j;
  return (((r * g.width) + x) * g.channels) + c;
}

/// True if a window's nodes of one channel are consecutive on the tape:
/// the reduction then reads them as a run and stores no list. The same for
/// every window (no padding): checked on the first.
constexpr bool pool_window_is_run(const ConvGeometry& g) noexcept {
  std::uint64_t k = 0U;
  bool run = true;
  for (Index i = 0U; i < g.kernel_h; ++i) {
    for (Index j = 0U; j < g.kernel_w; ++j) {
      run = run && (pool_tap(g, 0U, 0U, i, j, 0U) == k);
      ++k;
    }
  }
  return run;
}

/// Outputs of a pooling: positions times channels (0 if no window fits).
constexpr std::uint64_t pool_outputs(const ConvGeometry& g) noexcept {
  const Index rows = out_rows(g);
  const Index cols = out_cols(g);
  return ((rows == 0U) || (cols == 0U) || (input_nodes(g) == 0U))
             ? 0U
             : capped_product(capped_product(rows, cols), g.channels);
}
/// Nodes of a pooling's forward(): one per output.
constexpr std::size_t pool_nodes(const ConvGeometry& g) noexcept {
  return static_cast<std::size_t>(pool_outputs(g));
}
/// Slots of a pooling's forward(): a list of the taps per output, none if
/// the windows are runs.
constexpr std::size_t pool_slots(const ConvGeometry& g) noexcept {
  const std::uint64_t taps = static_cast<std::uint64_t>(g.kernel_h) * g.kernel_w;
  return pool_window_is_run(g) ? 0U : static_cast<std::size_t>(pool_outputs(g) * taps);
}

/// A pooling's forward pass: reduce(tape, xs, n) records one reduction
/// node over the handles xs[0..n). Checks everything first, recording
/// nothing on an error: an input of another width, no window fitting, more
/// than kMaxPoolWindow taps or no channels give kInvalidArgument; an input
/// not recorded kInvalidHandle; too little room kCapacityExceeded.
template <class T, class Reduce>
View pool_forward(Tape<T>& tape, const ConvGeometry& g, View x, Reduce reduce) noexcept {
  if (tape.status() != Status::kOk) {
    return kNoView;
  }
  const std::uint64_t outputs = pool_outputs(g);
  const std::uint64_t taps = static_cast<std::uint64_t>(g.kernel_h) * g.kernel_w;
  if ((outputs == 0U) || (outputs >= kNoIndex) || (taps > kMaxPoolWindow) || (input_nodes(g) != x.count)) {
    static_cast<void>(tape.report(Status::kInvalidArgument));
    return kNoView;
  }
  if (!is_recorded(tape, x)) {
    static_cast<void>(tape.report(Status::kInvalidHandle));
    return kNoView;
  }
  if (!has_room(tape, 0U, outputs, pool_slots(g))) {
    static_cast<void>(tape.report(Status::kCapacityExceeded));
    return kNoView;
  }
  const Index cols = out_cols(g);
  Value<T> xs[kMaxPoolWindow];
  return burtorch::record_view(tape, static_cast<Index>(outputs), [&](Index k) noexcept {
    const Index c = k % g.channels;
    const Index position = k / g.channels;
    const Index row = position / cols;
    const Index col = position % cols;
    std::size_t n = 0U;
    for (Index i = 0U; i < g.kernel_h; ++i) {
      for (Index j = 0U; j < g.kernel_w; ++j) {
        xs[n] = Value<T>(&tape, x.first + static_cast<Index>(pool_tap(g, row, col, i, j, c)));
        ++n;
      }
    }
    return reduce(tape, xs, n);
  });
}

/// An average pooling's outputs without a tape (values only: a frozen
/// backbone's, below stop_gradient): y[position * C + c] is the mean of the
/// window's values of channel c, summed in the mean node's order (four
/// partial sums, then the rest into the first: detail::sum_of), then
/// divided by the taps. V is a scalar or a lane type. False, nothing
/// written, where forward() refuses the geometry (no window, more than
/// kMaxPoolWindow taps) or x or y is null.
template <class V>
bool pool_evaluate_mean(const ConvGeometry& g, const V* x, V* y) noexcept {
  const std::uint64_t outputs = pool_outputs(g);
  const std::uint64_t taps = static_cast<std::uint64_t>(g.kernel_h) * g.kernel_w;
  if ((x == nullptr) || (y == nullptr) || (outputs == 0U) || (outputs >= kNoIndex) || (taps > kMaxPoolWindow)) {
    return false;
  }
  const Index cols = out_cols(g);
  std::uint64_t at[kMaxPoolWindow] = {};
  for (Index k = 0U; k < static_cast<Index>(outputs); ++k) {
    const Index position = k / g.channels;
    Index n = 0U;
    for (Index i = 0U; i < g.kernel_h; ++i) {
      for (Index j = 0U; j < g.kernel_w; ++j) {
        at[n] = pool_tap(g, position / cols, position % cols, i, j, k % g.channels);
        ++n;
      }
    }
    V s0(0.0F);
    V s1(0.0F);
    V s2(0.0F);
    V s3(0.0F);
    Index i = 0U;
    for (; (i + 4U) <= n; i += 4U) {
      s0 += x[at[i]];
      s1 += x[at[i + 1U]];
      s2 += x[at[i + 2U]];
      s3 += x[at[i + 3U]];
    }
    for (; i < n; ++i) {
      s0 += x[at[i]];
    }
    y[k] = ((s0 + s1) + (s2 + s3)) / V(static_cast<float>(n));
  }
  return true;
}

/// The mean of a window (AvgPool).
struct MeanOf {
  template <class T>
  Value<T> operator()(Tape<T>& tape, const Value<T>* xs, std::size_t n) const noexcept {
    return burtorch::reduce<Op::kMeanR>(tape, xs, n);
  }
};

/// The maximum of a window (MaxPool): the first of equal maxima, as
/// PyTorch's max pooling (reduce_max).
struct MaxOf {
  template <class T>
  Value<T> operator()(Tape<T>& /*tape*/, const Value<T>* xs, std::size_t n) const noexcept {
    return ::burtorch::reduce_max(xs, n);
  }
};

}  // namespace detail

/// Average pooling over `length` positions of channels-last 1-D activations
/// (torch.nn.AvgPool1d, no padding): output (t, c) is the mean of x[t *
/// stride + j][c] over the kernel's positions j.
template <class T>
struct AvgPool1d {
  Pool1dOptions options{};  ///< channels, kernel, stride

  /// Output positions for `length` input positions (0 if the kernel is longer).
  static constexpr Index output_length(const Pool1dOptions& o, Index length) noexcept {
    return detail::out_cols(detail::pool_geometry(o, length));
  }
  /// Nodes of forward(): one per output position and channel.
  static constexpr std::size_t nodes(const Pool1dOptions& o, Index length) noexcept {
    return detail::pool_nodes(detail::pool_geometry(o, length));
  }
  /// Slots of forward(): kernel per output (0 with one channel: windows are runs).
  static constexpr std::size_t slots(const Pool1dOptions& o, Index length) noexcept {
    return detail::pool_slots(detail::pool_geometry(o, length));
  }
  /// Records the pooling of x (length * channels nodes); returns
  /// output_length() positions of `channels` (kNoView on error; see
  /// detail::pool_forward).
  View forward(Tape<T>& tape, View x, Index length) const noexcept { return forward<T>(tape, x, length); }
  /// The same on any tape: on a tape of N lanes, lane by lane.
  template <class U>
  View forward(Tape<U>& tape, View x, Index length) const noexcept {
    return detail::pool_forward(tape, detail::pool_geometry(options, length), x, detail::MeanOf{});
  }
};

/// Average pooling over H x W positions of channels-last 2-D activations
/// (torch.nn.AvgPool2d, no padding).
template <class T>
struct AvgPool2d {
  Pool2dOptions options{};  ///< channels, kernel, stride

  /// Output positions for `in` (0 x 0 if the kernel does not fit).
  static constexpr Size2d output_size(const Pool2dOptions& o, Size2d in) noexcept {
    const detail::ConvGeometry g = detail::pool_geometry(o, in);
    return (detail::pool_outputs(g) == 0U) ? Size2d{} : Size2d{detail::out_rows(g), detail::out_cols(g)};
  }
  /// Nodes of forward(): one per output position and channel.
  static constexpr std::size_t nodes(const Pool2dOptions& o, Size2d in) noexcept {
    return detail::pool_nodes(detail::pool_geometry(o, in));
  }
  /// Slots of forward(): kernel_h * kernel_w per output, unless windows are runs.
  static constexpr std::size_t slots(const Pool2dOptions& o, Size2d in) noexcept {
    return detail::pool_slots(detail::pool_geometry(o, in));
  }
  /// Records the pooling of x (in.height * in.width * channels nodes).
  View forward(Tape<T>& tape, View x, Size2d in) const noexcept { return forward<T>(tape, x, in); }
  /// The pooled values of x (in.height * in.width * channels values) into y
  /// without a tape (detail::pool_evaluate_mean), the values forward()'s
  /// nodes would hold; V a scalar or a lane type. False where forward()
  /// refuses the geometry.
  template <class V>
  bool evaluate(const V* x, Size2d in, V* y) const noexcept {
    return detail::pool_evaluate_mean(detail::pool_geometry(options, in), x, y);
  }
  /// The same on any tape: on a tape of N lanes, lane by lane.
  template <class U>
  View forward(Tape<U>& tape, View x, Size2d in) const noexcept {
    return detail::pool_forward(tape, detail::pool_geometry(options, in), x, detail::MeanOf{});
  }
};

/// Max pooling over `length` positions of channels-last 1-D activations
/// (torch.nn.MaxPool1d, no padding, no dilation): output (t, c) is the
/// largest x[t * stride + j][c]; its gradient goes to the first of equal
/// maxima in the window (PyTorch's rule), a NaN in the window wins.
template <class T>
struct MaxPool1d {
  Pool1dOptions options{};  ///< channels, kernel, stride

  /// As AvgPool1d::output_length.
  static constexpr Index output_length(const Pool1dOptions& o, Index length) noexcept {
    return AvgPool1d<T>::output_length(o, length);
  }
  /// As AvgPool1d::nodes.
  static constexpr std::size_t nodes(const Pool1dOptions& o, Index length) noexcept {
    return AvgPool1d<T>::nodes(o, length);
  }
  /// As AvgPool1d::slots.
  static constexpr std::size_t slots(const Pool1dOptions& o, Index length) noexcept {
    return AvgPool1d<T>::slots(o, length);
  }
  /// Records the pooling of x (length * channels nodes); as AvgPool1d::forward.
  View forward(Tape<T>& tape, View x, Index length) const noexcept { return forward<T>(tape, x, length); }
  /// The same on any tape: on a tape of N lanes, lane by lane (ties and NaN too).
  template <class U>
  View forward(Tape<U>& tape, View x, Index length) const noexcept {
    return detail::pool_forward(tape, detail::pool_geometry(options, length), x, detail::MaxOf{});
  }
};

/// Max pooling over H x W positions of channels-last 2-D activations
/// (torch.nn.MaxPool2d, no padding, no dilation); ties as MaxPool1d.
template <class T>
struct MaxPool2d {
  Pool2dOptions options{};  ///< channels, kernel, stride

  /// As AvgPool2d::output_size.
  static constexpr Size2d output_size(const Pool2dOptions& o, Size2d in) noexcept {
    return AvgPool2d<T>::output_size(o, in);
  }
  /// As AvgPool2d::nodes.
  static constexpr std::size_t nodes(const Pool2dOptions& o, Size2d in) noexcept {
    return AvgPool2d<T>::nodes(o, in);
  }
  /// As AvgPool2d::slots.
  static constexpr std::size_t slots(const Pool2dOptions& o, Size2d in) noexcept {
    return AvgPool2d<T>::slots(o, in);
  }
  /// Records the pooling of x (in.height * in.width * channels nodes).
  View forward(Tape<T>& tape, View x, Size2d in) const noexcept { return forward<T>(tape, x, in); }
  /// The same on any tape: on a tape of N lanes, lane by lane (ties and NaN too).
  template <class U>
  View forward(Tape<U>& tape, View x, Size2d in) const noexcept {
    return detail::pool_forward(tape, detail::pool_geometry(options, in), x, detail::MaxOf{});
  }
};

}  // namespace nn
}  // namespace burtorch

#endif  // BURTORCH_NN_POOL_HPP
