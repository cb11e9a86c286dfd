// SPDX-License-Identifier: Apache-2.0
/// @file
/// The convolutions of conv.hpp on a tape of lanes (a lane batch: one sample
/// per lane, the weights shared from their own tape): every window's view
/// list as a scalar tape's convolution records it, then all output
/// positions as one lane_conv op (lanes/ops.hpp), and the memory plan of
/// that (conv_lane_nodes, conv_lane_slots). Conv1d and Conv2d call these
/// from their lane forward().
#ifndef BURTORCH_NN_CONV_LANES_HPP
#define BURTORCH_NN_CONV_LANES_HPP

#include <cstddef>
#include <cstdint>

#include "burtorch/index.hpp"
#include "burtorch/lanes/ops.hpp"
#include "burtorch/lanes/lanes.hpp"
#include "burtorch/nn/common.hpp"
#include "burtorch/nn/conv_geometry.hpp"
#include "burtorch/nn/params.hpp"
#include "burtorch/core/tape.hpp"
#include "burtorch/core/views.hpp"

namespace burtorch {
namespace nn {
namespace detail {

/// Nodes of a convolution's forward() on a tape of lanes: the zeros, the
/// head, the outputs (twice with an activation); 0 if no window fits.
constexpr std::size_t conv_lane_nodes(const ConvGeometry& g, Index out_channels, Activation act) noexcept {
  const std::size_t n = conv_nodes(g, out_channels, act);
  return (n == 0U) ? 0U : (n + 1U);
}
/// Slots of the same: every window's view list and one descriptor.
constexpr std::size_t conv_lane_slots(const ConvGeometry& g) noexcept {
  const WindowPlan p = plan_windows(g);
  return (p.windows == 0U) ? 0U : static_cast<std::size_t>(p.list_slots + kLaneConvSlots);
}

/// conv_forward on a tape of N lanes, the weights and biases shared from
/// their own tape through p: the padding's zeros recorded as inputs, every
/// window's view list, then one lane_conv over them all. Errors as
/// conv_forward (parameters outside p: kInvalidArgument); nothing recorded.
template <class T, std::size_t N>
View conv_forward_lanes(Tape<Lanes<T, N>>& tape, const LaneParams<T>& p, const ConvGeometry& g, Index weight,
                         Index out_channels, Index bias, Activation act, View x) noexcept {
  using U = Lanes<T, N>;
  if (tape.status() != Status::kOk) {
    return kNoView;
  }
  const WindowPlan plan = plan_windows(g);
  const std::uint64_t outputs = capped_product(plan.windows, out_channels);
  const std::uint64_t weights =
      capped_product(capped_product(capped_product(g.kernel_h, g.kernel_w), g.channels), out_channels);
  const bool params_ok = (weight != kNoIndex) && burtorch::detail::params_cover(p, weight, weights) &&
                         ((bias == kNoIndex) || burtorch::detail::params_cover(p, bias, out_channels));
  if (!params_ok || (out_channels == 0U) || (plan.windows == 0U) || (plan.max_runs > kMaxWindowRuns) ||
      (input_nodes(g) != x.count) || (outputs >= (kNoIndex - 1U))) {
    static_cast<void>(tape.report(Status::kInvalidArgument));
    return kNoView;
  }
  if (!is_recorded(tape, x)) {
    static_cast<void>(tape.report(Status::kInvalidHandle));
    return kNoView;
  }
  const std::uint64_t interior = 1U + ((act == Activation::kIdentity) ? outputs : (2U * outputs));
  if (!has_room(tape, plan.zero_width, interior, plan.list_slots + kLaneConvSlots)) {
    static_cast<void>(tape.report(Status::kCapacityExceeded));
    return kNoView;
  }
  View zeros = kNoView;
  if (plan.zero_width != 0U) {
    zeros = burtorch::record_view(tape, static_cast<Index>(plan.zero_width),
                                  [&tape](Index /*k*/) noexcept { return tape.input(U(T(0))); });
  }
  View runs[kMaxWindowRuns];
  ViewList first{};
  const Index rows = out_rows(g);
  const Index cols = out_cols(g);
  for (Index r = 0U; r < rows; ++r) {
    for (Index c = 0U; c < cols; ++c) {
      ViewSink sink{runs, 0U, zeros.first, x.first};
      conv_window(g, r, c, sink);
      const ViewList window = burtorch::view_list(tape, runs, sink.count);
      first = ((r == 0U) && (c == 0U)) ? window : first;
    }
  }
  if (tape.status() != Status::kOk) {
    return kNoView;
  }
  const View y = burtorch::lane_conv(tape, p, weight, out_channels, first, static_cast<Index>(plan.windows),
                                       zeros.first, bias);
  return (y.count != 0U) ? activate(tape, y, act) : kNoView;
}

}  // namespace detail
}  // namespace nn
}  // namespace burtorch

#endif  // BURTORCH_NN_CONV_LANES_HPP
