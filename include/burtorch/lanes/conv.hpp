// SPDX-License-Identifier: Apache-2.0
/// @file
/// Internal: the loops of a convolution over shared weights on a tape of
/// Lanes (lanes/ops.hpp's lane_conv: one sample per lane, the weights read
/// as shared scalars of an ordinary tape), and its descriptor.
///
/// A convolution is one small matrix product per output position (its
/// window's view list times the C_out x fan_in weights), all positions
/// sharing the weights. Here every position's outputs are rows of ONE op:
/// one head node before them, whose backward runs every position's
/// backward at once (the weights' gradient accumulated position after
/// position), so the outputs stay one channels-last run on the tape (as a
/// scalar tape's convolution leaves them) and the sweep dispatches once
/// per layer. The products are lanes/layer.hpp's and layer_grad.hpp's
/// (a block of rows in registers, the weights read once per N samples; the
/// weights' gradient from transposed tiles of the inputs). The runs of
/// zero padding are skipped (they add nothing and need no gradient), and
/// so is the input's gradient of a window that lists Tape::input nodes
/// only (the padding's zeros are recorded as inputs too).
#ifndef BURTORCH_LANES_CONV_HPP
#define BURTORCH_LANES_CONV_HPP

#include <cstddef>
#include <cstdint>

#include "burtorch/core/detail/math.hpp"
#include "burtorch/lanes/vector.hpp"
#include "burtorch/index.hpp"
#include "burtorch/lanes/lanes.hpp"
#include "burtorch/lanes/layer.hpp"
#include "burtorch/lanes/layer_grad.hpp"

namespace burtorch {
namespace detail {

// --- a convolution over shared weights --------------------------------------
// Descriptor of lane_conv at slot d: the first window's view list (the
// windows' lists follow one another in the slots, each 1 + 2 runs long),
// the windows, the rows per window (C_out), their width n (fan-in), the
// weights' and biases' offsets in the shared arrays (bias kNoIndex: none),
// the first zero node (kNoIndex: no padding), then the shared arrays. Node `head` (op
// kLaneConv) is recorded just before the windows' rows (kLaneConvRow,
// operand b = window * C_out + row).
constexpr Index kCsList = 0U;     ///< slot of the first window's view list
constexpr Index kCsWindows = 1U;  ///< output positions
constexpr Index kCsRows = 2U;     ///< C_out: rows per position
constexpr Index kCsWidth = 3U;    ///< n: inputs per row
constexpr Index kCsWeight = 4U;   ///< first weight (row-major C_out x n)
constexpr Index kCsBias = 5U;     ///< first bias, or kNoIndex
constexpr Index kCsZeros = 6U;    ///< first zero node of the padding, or kNoIndex
constexpr Index kCsParams = 7U;   ///< the shared arrays (store_params)
constexpr Index kCsSlots = kCsParams + (2U * kPointerSlots);  ///< slots of the descriptor

/// The slot of the view list after the one at `list`.
inline Index next_list(const Index* slots, Index list) noexcept {
  return list + 1U + (2U * list_views(&slots[list]));
}

/// out[b] = sum_k w[b * n + k] x[k] (+ bias[b]) for the kRows rows from w
/// over one window's runs (list), the zero runs (first node `zeros`)
/// skipped; in each lane the terms in k order, the bias last.
template <Index kRows, class S, std::size_t N>
inline void conv_rows(const Lanes<S, N>* v, const Index* list, Index zeros, const S* w, std::size_t n, const S* bias,
                      Lanes<S, N>* out) noexcept {
  if constexpr (kHelium<S, N>) {  // lanes/helium.hpp: the same sums, in Helium registers
    HeliumLanes<S, N>::template rows<kRows>(
        v, list, [zeros](Index first, Index /*r*/) noexcept { return first == zeros; }, w, n, nullptr, bias, out);
    return;
  }
  constexpr std::size_t kParts = registers_of<S, N>();
  constexpr std::size_t kWidth = part_lanes<S, N>();
  using V = typename VectorOf<S, kWidth>::Type;
  V acc[kRows][kParts] = {};
  const Index runs = list_views(list);
  std::size_t k = 0U;
  for (Index r = 0U; r < runs; ++r) {
    const Index first = list[1U + (2U * r)];
    const Index count = list[2U + (2U * r)];
    if (first != zeros) {
      matvec_segment<kRows>(&v[first], count, &w[k], n, acc);
    }
    k += count;
  }
  for (Index b = 0U; b < kRows; ++b) {
    for (std::size_t q = 0U; q < kParts; ++q) {
      if (bias != nullptr) {
        acc[b][q] += bias[b];
      }
      store_vector(&out[b].lane[q * kWidth], acc[b][q]);
    }
  }
}

/// The outputs of every window (descriptor at slot d) into out: window w's
/// C_out rows at out[w * C_out], conv_rows in blocks of matvec_block()
/// rows, then row by row.
template <class S, std::size_t N>
void lanes_conv(const Lanes<S, N>* v, const Index* slots, Index d, Lanes<S, N>* out) noexcept {
  constexpr Index kBlock = matvec_block<S, N>();
  const ParamArrays<S> p = load_params<S>(slots, d + kCsParams);
  const Index windows = slots[d + kCsWindows];
  const Index rows = slots[d + kCsRows];
  const Index n = slots[d + kCsWidth];
  const S* const w = &p.values[slots[d + kCsWeight]];
  const Index bias_at = slots[d + kCsBias];
  const S* const bias = (bias_at != kNoIndex) ? &p.values[bias_at] : nullptr;
  const Index zeros = slots[d + kCsZeros];
  Index list = slots[d + kCsList];
  for (Index win = 0U; win < windows; ++win) {
    Lanes<S, N>* const y = &out[static_cast<std::size_t>(win) * rows];
    Index o = 0U;
    for (; (o + kBlock) <= rows; o += kBlock) {
      conv_rows<kBlock>(v, &slots[list], zeros, &w[static_cast<std::size_t>(o) * n], n,
                        (bias != nullptr) ? &bias[o] : nullptr, &y[o]);
    }
    for (; o < rows; ++o) {
      conv_rows<1U>(v, &slots[list], zeros, &w[static_cast<std::size_t>(o) * n], n,
                    (bias != nullptr) ? &bias[o] : nullptr, &y[o]);
    }
    list = next_list(slots, list);
  }
}

/// The whole backward of a convolution over shared weights (descriptor at
/// slot d; the rows' gradients are those of the windows * C_out nodes after
/// `head`), window by window: the biases' gradients (each lane's term in
/// lane order), then per run that is not padding the input's gradient
/// (unless the window's list holds inputs only) and the weights'.
template <class S, std::size_t N>
void lanes_conv_backward(const Lanes<S, N>* v, Lanes<S, N>* grads, const Index* slots, Index d, Index head) noexcept {
  const ParamArrays<S> p = load_params<S>(slots, d + kCsParams);
  const Index windows = slots[d + kCsWindows];
  const Index rows = slots[d + kCsRows];
  const Index n = slots[d + kCsWidth];
  const std::size_t weight = slots[d + kCsWeight];
  const Index bias = slots[d + kCsBias];
  const Index zeros = slots[d + kCsZeros];
  Index list = slots[d + kCsList];
  for (Index win = 0U; win < windows; ++win) {
    const Lanes<S, N>* g = &grads[head + 1U + (win * rows)];
    if (bias != kNoIndex) {
      S* gb = &p.grads[bias];
      for (Index o = 0U; o < rows; ++o) {
        S acc = gb[o];
        for (std::size_t l = 0U; l < N; ++l) {
          acc += g[o].lane[l];
        }
        gb[o] = acc;
      }
    }
    const Index* at = &slots[list];
    const Index runs = list_views(at);
    const bool inputs = list_of_inputs(at);  // a window of inputs (and padding) gets no gradient
    std::size_t k = 0U;
    for (Index r = 0U; r < runs; ++r) {
      const Index first = at[1U + (2U * r)];
      const Index count = at[2U + (2U * r)];
      if (first != zeros) {
        if (!inputs) {
          lanes_matvec_input_grad(g, &p.values[weight + k], rows, n, &grads[first], count);
        }
        lanes_matvec_weight_grad(g, &v[first], rows, n, &p.grads[weight + k], count);
      }
      k += count;
    }
    list = next_list(slots, list);
  }
}

}  // namespace detail
}  // namespace burtorch

#endif  // BURTORCH_LANES_CONV_HPP
