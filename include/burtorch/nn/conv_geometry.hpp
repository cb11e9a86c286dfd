// SPDX-License-Identifier: Apache-2.0
/// @file
/// Where the windows of a convolution or pooling lie, computed without a
/// tape: the geometry of an input and a kernel (detail::ConvGeometry), the
/// output extent per axis (torch's formula), the runs each window lists
/// (conv_window, merged where they continue each other) and the walk over
/// all windows that the memory plans count (plan_windows, conv_nodes,
/// conv_slots). The layers that record them are conv.hpp's and pool.hpp's.
#ifndef BURTORCH_NN_CONV_GEOMETRY_HPP
#define BURTORCH_NN_CONV_GEOMETRY_HPP

#include <cstddef>
#include <cstdint>

#include "burtorch/index.hpp"
#include "burtorch/nn/common.hpp"
#include "burtorch/nn/source.hpp"
#include "burtorch/core/tape.hpp"

namespace burtorch {
namespace nn {

/// Most runs one convolution window may list (a local array of views bounds
/// the stack): forward() refuses a geometry whose windows need more
/// (max_window_runs()). Without dilation a window takes at most 3 runs per
/// kernel row (zeros, input, zeros); with it, one per tap.
constexpr std::size_t kMaxWindowRuns = 32U;

/// The positions of a 2-D activation (its channels come from the layer).
struct Size2d {
  Index height = 0U;  ///< rows
  Index width = 0U;   ///< columns
};

namespace detail {

/// Where the windows of a convolution or pooling lie: input positions and
/// channels, and per axis the kernel, stride, zero padding and dilation.
struct ConvGeometry {
  Index height = 0U;      ///< input rows (1 for 1-D)
  Index width = 0U;       ///< input columns (the positions of 1-D)
  Index channels = 0U;    ///< input channels
  Index kernel_h = 1U;    ///< kernel rows
  Index kernel_w = 1U;    ///< kernel columns
  Index stride_h = 1U;    ///< stride between rows of windows
  Index stride_w = 1U;    ///< stride between columns of windows
  Index pad_h = 0U;       ///< zero rows above and below
  Index pad_w = 0U;       ///< zero columns left and right
  Index dilation_h = 1U;  ///< spacing of the kernel's rows
  Index dilation_w = 1U;  ///< spacing of the kernel's columns
};

/// a * b, or kNoIndex if that is kNoIndex or more (the operands too).
constexpr std::uint64_t capped_product(std::uint64_t a, std::uint64_t b) noexcept {
  const std::uint64_t x = (a < kNoIndex) ? a : kNoIndex;
  const std::uint64_t y = (b < kNoIndex) ? b : kNoIndex;
  const std::uint64_t n = x * y;  // < 2^64: both are at most 2^32 - 1
  return (n < kNoIndex) ? n : kNoIndex;
}

/// Output positions along one axis, as torch.nn.Conv1d/2d computes them:
/// floor((in + 2 pad - dilation (kernel - 1) - 1) / stride) + 1; 0 if no
/// window fits, a zero size or an output count an Index cannot hold.
constexpr Index conv_extent(Index in, Index kernel, Index stride, Index pad, Index dilation) noexcept {
  if ((in == 0U) || (kernel == 0U) || (stride == 0U) || (dilation == 0U)) {
    return 0U;
  }
  const std::uint64_t span = (static_cast<std::uint64_t>(dilation) * (kernel - 1U)) + 1U;
  const std::uint64_t padded = static_cast<std::uint64_t>(in) + (2U * static_cast<std::uint64_t>(pad));
  if (padded < span) {
    return 0U;
  }
  const std::uint64_t n = ((padded - span) / stride) + 1U;
  return (n < kNoIndex) ? static_cast<Index>(n) : 0U;
}
/// Output rows of g.
constexpr Index out_rows(const ConvGeometry& g) noexcept {
  return conv_extent(g.height, g.kernel_h, g.stride_h, g.pad_h, g.dilation_h);
}
/// Output columns of g.
constexpr Index out_cols(const ConvGeometry& g) noexcept {
  return conv_extent(g.width, g.kernel_w, g.stride_w, g.pad_w, g.dilation_w);
}
/// Nodes of an input of g (0 if it cannot be addressed).
constexpr std::uint64_t input_nodes(const ConvGeometry& g) noexcept {
  const std::uint64_t n = capped_product(capped_product(g.height, g.width), g.channels);
  return (n < kNoIndex) ? n : 0U;
}

/// One run of a window's list: `count` zeros, or `count` input nodes from
/// input node `offset`.
struct WindowRun {
  bool zeros = false;        ///< zero padding (else input)
  std::uint64_t offset = 0U;  ///< first input node (input runs)
  std::uint64_t count = 0U;   ///< nodes
};

/// Merges runs that continue each other (zeros after zeros, input nodes
/// that follow on the tape) before passing them to the sink.
template <class Sink>
struct RunMerger {
  Sink* sink;            ///< receives the merged runs: sink->run(WindowRun)
  WindowRun pending{};   ///< the run being extended

  constexpr void add(bool zeros, std::uint64_t offset, std::uint64_t count) noexcept {
    const bool continues = (pending.count != 0U) && (pending.zeros == zeros) &&
                           (zeros || ((pending.offset + pending.count) == offset));
    if (continues) {
      pending.count += count;
    } else {
      finish();
      pending = WindowRun{zeros, offset, count};
    }
  }
  constexpr void finish() noexcept {
    if (pending.count != 0U) {
      sink->run(pending);
      pending.count = 0U;
    }
  }
};

/// The runs of the window of output position (row, col), in the weights'
/// order (kernel row, kernel column, channel), merged, into sink.run().
template <class Sink>
constexpr void conv_window(const ConvGeometry& g, Index row, Index col, Sink& sink) noexcept {
  RunMerger<Sink> merger{&sink};
  const std::int64_t row0 = (static_cast<std::int64_t>(row) * g.stride_h) - static_cast<std::int64_t>(g.pad_h);
  const std::int64_t col0 = (static_cast<std::int64_t>(col) * g.stride_w) - static_cast<std::int64_t>(g.pad_w);
  const std::uint64_t row_nodes = static_cast<std::uint64_t>(g.kernel_w) * g.channels;
  for (Index i = 0U; i < g.kernel_h; ++i) {
    const std::int64_t r = row0 + (static_cast<std::int64_t>(i) * g.dilation_h);
    if ((r < 0) || (r >= static_cast<std::int64_t>(g.height))) {
      merger.add(true, 0U, row_nodes);
    } else {
      for (Index j = 0U; j < g.kernel_w; ++j) {
        const std::int64_t c = col0 + (static_cast<std::int64_t>(j) * g.dilation_w);
        if ((c < 0) || (c >= static_cast<std::int64_t>(g.width))) {
          merger.add(true, 0U, g.channels);
        } else {
          const std::uint64_t position = (static_cast<std::uint64_t>(r) * g.width) + static_cast<std::uint64_t>(c);
          merger.add(false, position * g.channels, g.channels);
        }
      }
    }
  }
  merger.finish();
}

/// Counts a window's runs and its longest zero run.
struct RunCounter {
  std::uint64_t runs = 0U;        ///< runs listed
  std::uint64_t widest_zeros = 0U;  ///< longest zero run
  constexpr void run(const WindowRun& r) noexcept {
    ++runs;
    widest_zeros = (r.zeros && (r.count > widest_zeros)) ? r.count : widest_zeros;
  }
};

/// What the windows of a geometry take, from a walk over all of them.
struct WindowPlan {
  std::uint64_t windows = 0U;     ///< output positions
  std::uint64_t zero_width = 0U;  ///< zero leaves a forward pass records
  std::uint64_t list_slots = 0U;  ///< slots of all windows' view lists (1 + 2 per run each)
  std::uint64_t max_runs = 0U;    ///< most runs of one window
};

/// Walks every window of g (none if no window fits).
constexpr WindowPlan plan_windows(const ConvGeometry& g) noexcept {
  WindowPlan p;
  const Index rows = out_rows(g);
  const Index cols = out_cols(g);
  if ((input_nodes(g) == 0U) || (rows == 0U) || (cols == 0U)) {
    return p;
  }
  for (Index r = 0U; r < rows; ++r) {
    for (Index c = 0U; c < cols; ++c) {
      RunCounter counter;
      conv_window(g, r, c, counter);
      p.list_slots += 1U + (2U * counter.runs);
      p.max_runs = (counter.runs > p.max_runs) ? counter.runs : p.max_runs;
      p.zero_width = (counter.widest_zeros > p.zero_width) ? counter.widest_zeros : p.zero_width;
    }
  }
  p.windows = static_cast<std::uint64_t>(rows) * cols;
  return p;
}

/// Nodes of a convolution's forward() with its weights read from a source
/// of type Src (nn/source.hpp): the zeros, then out_channels outputs per
/// position (twice that with an activation) and the source's head nodes;
/// 0 if no window fits.
template <class Src = TapeParams>
constexpr std::size_t conv_nodes(const ConvGeometry& g, Index out_channels, Activation act) noexcept {
  const WindowPlan p = plan_windows(g);
  const std::uint64_t outputs = capped_product(p.windows, out_channels);
  const std::uint64_t n = p.zero_width + Src::kConvHead + ((act == Activation::kIdentity) ? outputs : (2U * outputs));
  return (p.windows == 0U) ? 0U : static_cast<std::size_t>(n);
}
/// Slots of the same: per position its view list (and, on an ordinary
/// tape, a 4-slot matvec descriptor), and the source's own; 0 if no window
/// fits.
template <class Src = TapeParams>
constexpr std::size_t conv_slots(const ConvGeometry& g) noexcept {
  const WindowPlan p = plan_windows(g);
  const std::uint64_t n = p.list_slots + Src::kConvSlots + (Src::kConvWindowSlots * p.windows);
  return (p.windows == 0U) ? 0U : static_cast<std::size_t>(n);
}

/// True if the tape has room for `leaves` more leaves, then `interior` more
/// interior nodes (which cannot go into the parameter region) and `slots`
/// more argument slots.
template <class T>
inline bool has_room(const Tape<T>& tape, std::uint64_t leaves, std::uint64_t interior, std::uint64_t slots) noexcept {
  const std::uint64_t after_leaves = static_cast<std::uint64_t>(tape.size()) + leaves;
  const std::uint64_t start = (after_leaves > tape.usage().params) ? after_leaves : tape.usage().params;
  return (start <= tape.usage().node_capacity) && (interior <= (tape.usage().node_capacity - start)) &&
         (slots <= (tape.usage().slot_capacity - tape.usage().slots));
}

/// Turns a window's runs into views: zero runs read the zero leaves from
/// `zeros`, input runs the input from `input`.
struct ViewSink {
  View* out;       ///< kMaxWindowRuns views
  Index count;     ///< views written
  Index zeros;     ///< first zero leaf
  Index input;     ///< first input node
  void run(const WindowRun& r) noexcept {
    if (count < kMaxWindowRuns) {
      const Index first = r.zeros ? zeros : (input + static_cast<Index>(r.offset));
      out[count] = View{first, static_cast<Index>(r.count)};
      ++count;
    }
  }
};

}  // namespace detail

}  // namespace nn
}  // namespace burtorch

#endif  // BURTORCH_NN_CONV_GEOMETRY_HPP
