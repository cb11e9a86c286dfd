// SPDX-License-Identifier: Apache-2.0
/// @file
/// Internal: the loops of the lane ops other than a layer's (lanes/ops.hpp):
/// embedding rows chosen per lane (lane_gather), one element per lane
/// (pick: a cross-entropy's target), a layer norm's shared gain and bias
/// (lane_scale_shift), with their descriptors.
#ifndef BURTORCH_LANES_GATHER_HPP
#define BURTORCH_LANES_GATHER_HPP

#include <cstddef>
#include <cstdint>

#include "burtorch/index.hpp"
#include "burtorch/lanes/lanes.hpp"
#include "burtorch/lanes/layer.hpp"

namespace burtorch {
namespace detail {

// --- embedding rows chosen per lane ---------------------------------------
// Descriptor of lane_gather at slot d: the row width, the number of
// rows gathered, the shared arrays, then per gathered row p and lane l the
// offset of that lane's row in the shared arrays (slot d + kGsRows + p * N
// + l). Node b of the result is element b % width of row b / width.
constexpr Index kGsWidth = 0U;   ///< elements per row
constexpr Index kGsCount = 1U;   ///< rows gathered
constexpr Index kGsParams = 2U;  ///< the shared arrays
constexpr Index kGsRows = kGsParams + (2U * kPointerSlots);  ///< the rows' offsets, N per gathered row

/// Element e of gathered row p: lane l is the shared value at lane l's row.
template <class S, std::size_t N>
inline Lanes<S, N> lanes_gather_value(const S* values, const Index* offsets, Index e) noexcept {
  Lanes<S, N> out;
  for (std::size_t l = 0U; l < N; ++l) {
    out.lane[l] = values[offsets[l] + e];
  }
  return out;
}
/// Its backward: lane l's gradient goes to lane l's row, in lane order.
template <class S, std::size_t N>
inline void lanes_gather_backward(const Index* slots, Index d, Index b, const Lanes<S, N>& g) noexcept {
  const Index width = slots[d + kGsWidth];
  const Index row = (slots[d + kGsCount] == 1U) ? 0U : (b / width);  // one row: no division
  const Index e = b - (row * width);
  S* const grads = load_pointer<S>(slots, d + kGsParams + kPointerSlots);
  const Index* offsets = &slots[d + kGsRows + (row * static_cast<Index>(N))];
  for (std::size_t l = 0U; l < N; ++l) {
    grads[offsets[l] + e] += g.lane[l];
  }
}

// --- one element per lane: a cross-entropy's target ------------------------
// Descriptor of pick at slot d: the run's first node, then per lane
// the position in the run.
constexpr Index kPkFirst = 0U;  ///< the run's first node
constexpr Index kPkAt = 1U;     ///< the N positions

/// Lane l of x[at[l]] for each lane l.
template <class S, std::size_t N>
inline Lanes<S, N> lanes_pick_value(const Lanes<S, N>* v, Index first, const Index* at) noexcept {
  Lanes<S, N> out;
  for (std::size_t l = 0U; l < N; ++l) {
    out.lane[l] = v[first + at[l]].lane[l];
  }
  return out;
}
/// Its backward: lane l of the gradient goes to lane l of x[at[l]].
template <class S, std::size_t N>
inline void lanes_pick_backward(Lanes<S, N>* grads, const Index* slots, Index d, const Lanes<S, N>& g) noexcept {
  const Index first = slots[d + kPkFirst];
  for (std::size_t l = 0U; l < N; ++l) {
    grads[first + slots[d + kPkAt + static_cast<Index>(l)]].lane[l] += g.lane[l];
  }
}

// --- a layer norm's gain and bias, shared --------------------------------
// Descriptor of lane_scale_shift at slot d: the input run's first
// node, the gains' and biases' offsets in the shared arrays, the arrays.
constexpr Index kSsX = 0U;       ///< the input run's first node
constexpr Index kSsScale = 1U;   ///< first gain
constexpr Index kSsShift = 2U;   ///< first bias
constexpr Index kSsParams = 3U;  ///< the shared arrays
constexpr Index kSsSlots = kSsParams + (2U * kPointerSlots);  ///< slots of the descriptor

/// Element b: x[b] * scale[b] + shift[b] in every lane.
template <class S, std::size_t N>
inline Lanes<S, N> lanes_scale_shift_value(const Lanes<S, N>& x, S scale, S shift) noexcept {
  Lanes<S, N> out;
  for (std::size_t l = 0U; l < N; ++l) {
    out.lane[l] = (x.lane[l] * scale) + shift;
  }
  return out;
}
/// Its backward: the input's lanes get g * scale; the gain gets the lanes'
/// g * x and the bias the lanes' g, each summed in lane order.
template <class S, std::size_t N>
inline void lanes_scale_shift_backward(const Lanes<S, N>* v, Lanes<S, N>* grads, const Index* slots, Index d, Index b,
                                       const Lanes<S, N>& g) noexcept {
  const ParamArrays<S> p = load_params<S>(slots, d + kSsParams);
  const Index x = slots[d + kSsX] + b;
  const Index scale = slots[d + kSsScale] + b;
  const Index shift = slots[d + kSsShift] + b;
  S* const shared_grads = p.grads;
  const S s = p.values[scale];
  S gs = shared_grads[scale];
  S gb = shared_grads[shift];
  for (std::size_t l = 0U; l < N; ++l) {
    gs += g.lane[l] * v[x].lane[l];
    gb += g.lane[l];
    grads[x].lane[l] += g.lane[l] * s;
  }
  shared_grads[scale] = gs;
  shared_grads[shift] = gb;
}

}  // namespace detail
}  // namespace burtorch

#endif  // BURTORCH_LANES_GATHER_HPP
