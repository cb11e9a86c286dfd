// SPDX-License-Identifier: Apache-2.0
/// @file
/// LaneParams, the parameters of an ordinary tape read by a tape of Lanes as
/// shared scalars, and LaneParams as a layer's weight source
/// (nn/source.hpp): what the layers record when they read their weights
/// from it (lanes/ops.hpp's lane_matvec, lane_conv, lane_scale_shift,
/// lane_gather), so that each layer's one forward runs on a tape of lanes.
#ifndef BURTORCH_LANES_SOURCE_HPP
#define BURTORCH_LANES_SOURCE_HPP

#include <cstddef>
#include <cstdint>

#include "burtorch/index.hpp"
#include "burtorch/lanes/conv.hpp"
#include "burtorch/lanes/gather.hpp"
#include "burtorch/lanes/layer.hpp"
#include "burtorch/core/tape.hpp"

namespace burtorch {

/// Parameters that a tape of Lanes reads as shared scalars: the values and
/// gradients of the parameters of an ordinary tape (nn::lane_params makes
/// one), addressed by their index there. The lane ops broadcast a
/// parameter to every lane and their backward adds the lanes' gradients to
/// it. The arrays must stay where they are while nodes that read them are
/// recorded.
template <class S>
struct LaneParams {
  const S* values = nullptr;  ///< the parameters' values
  S* grads = nullptr;         ///< their gradients: backward adds to them
  Index count = 0U;           ///< how many there are
  // As a layer's weight source (nn/source.hpp): what a layer records beside its rows.
  static constexpr bool kFusedRows = false;          ///< a Linear's activation: a node of its own per output
  static constexpr std::size_t kMatvecHead = 1U;     ///< lane_matvec's head node
  static constexpr std::size_t kMatvecSlots = detail::kMsSlots;      ///< lane_matvec's slots
  static constexpr std::size_t kScaleShiftSlots = detail::kSsSlots;  ///< lane_scale_shift's slots
  static constexpr bool kConvOneOp = true;           ///< a convolution: one lane_conv over every window
  static constexpr std::size_t kConvHead = 1U;       ///< lane_conv's head node
  static constexpr std::size_t kConvSlots = detail::kCsSlots;  ///< lane_conv's slots
  static constexpr std::size_t kConvWindowSlots = 0U;          ///< slots per window beside its view list
};

namespace detail {
/// True if p has both arrays and [first, first + count) lies inside it
/// (64-bit: no wrap for any Index arguments).
template <class S>
inline bool params_cover(const LaneParams<S>& p, std::uint64_t first, std::uint64_t count) noexcept {
  return (p.values != nullptr) && (p.grads != nullptr) && (count != 0U) && (count <= p.count) &&
         (first <= (p.count - count));
}
}  // namespace detail

/// The weight source's functions (nn/source.hpp), found by
/// argument-dependent lookup: p holds [first, first + count).
template <class S>
inline bool source_covers(const LaneParams<S>& p, std::uint64_t first, std::uint64_t count) noexcept {
  return detail::params_cover(p, first, count);
}
/// The weights are not on the tape of lanes: nothing to check there.
template <class T, class S>
inline bool source_recorded(const Tape<T>& /*tape*/, const LaneParams<S>& /*p*/, std::uint64_t /*first*/,
                            std::uint64_t /*count*/) noexcept {
  return true;
}
/// A zero of a convolution's padding: an input in every lane.
template <class T, class S>
inline Value<T> source_zero(Tape<T>& tape, const LaneParams<S>& /*p*/) noexcept {
  return tape.input(T(S(0)));
}
/// A layer's rows: lane_matvec.
template <class T, class S>
inline View source_matvec(Tape<T>& tape, const LaneParams<S>& p, Index w, Index rows, ViewList x, Index bias) noexcept {
  return lane_matvec(tape, p, w, rows, x, bias);
}
/// Every window of a convolution at once: lane_conv.
template <class T, class S>
inline View source_conv(Tape<T>& tape, const LaneParams<S>& p, Index w, Index rows, ViewList first, Index windows,
                        Index zeros, Index bias) noexcept {
  return lane_conv(tape, p, w, rows, first, windows, zeros, bias);
}
/// A gain and a bias: lane_scale_shift.
template <class T, class S>
inline View source_scale_shift(Tape<T>& tape, const LaneParams<S>& p, Index gain, Index x_first, Index bias,
                               Index n) noexcept {
  return lane_scale_shift(tape, p, gain, x_first, bias, n);
}
/// Rows of a table chosen per lane: lane_gather.
template <class T, class S>
inline View source_gather(Tape<T>& tape, const LaneParams<S>& p, Index table, Index rows, Index dim, const Index* ids,
                          Index count) noexcept {
  return lane_gather(tape, p, table, rows, dim, ids, count);
}

}  // namespace burtorch

#endif  // BURTORCH_LANES_SOURCE_HPP
