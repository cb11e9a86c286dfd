// SPDX-License-Identifier: Apache-2.0
/// @file
/// Weight sources: how a layer reads its weights. A layer's forward is
/// written once, over a source: TapeParams, the parameters of the tape it
/// records on (the layers' ordinary form), or a source another floor
/// provides, such as the lanes extension's LaneParams (a tape of lanes
/// reading the parameters of an ordinary tape as shared scalars). A source
/// is a type with the members below (what its layers record beside their
/// rows, for the layers' sizing functions) and these free functions, found
/// by argument-dependent lookup:
///
///   source_covers(src, first, count)          the source holds these weights
///   source_recorded(tape, src, first, count)  they are recorded on the tape
///   source_zero(tape, src)                    a zero of a convolution's padding
///   source_matvec(tape, src, w, rows, x, bias)    a layer's rows (matvec)
///   source_conv(tape, src, w, rows, first, windows, zeros, bias)  a whole
///                                             convolution (if kConvOneOp)
///   source_scale_shift(tape, src, g, x, b, n) a gain and bias (scale_shift)
///   source_gather(tape, src, table, rows, dim, ids, count)  rows of a table
///
/// so that a layer header names no source but the tape's own, and the lane
/// form of a layer exists where the lanes extension is included.
#ifndef BURTORCH_NN_SOURCE_HPP
#define BURTORCH_NN_SOURCE_HPP

#include <cstddef>
#include <cstdint>

#include "burtorch/index.hpp"
#include "burtorch/nn/params.hpp"
#include "burtorch/core/tape.hpp"
#include "burtorch/core/views.hpp"

namespace burtorch {
namespace nn {

/// The weight source of an ordinary tape: the layer's parameters on the
/// tape it records on.
struct TapeParams {
  static constexpr bool kFusedRows = true;          ///< a Linear's activation is fused into its rows
  static constexpr std::size_t kMatvecHead = 0U;    ///< nodes a matvec records beside its rows
  static constexpr std::size_t kMatvecSlots = 4U;   ///< slots of a matvec (core/views.hpp)
  static constexpr std::size_t kScaleShiftSlots = 3U;  ///< slots of a scale_shift (core/views.hpp)
  static constexpr bool kConvOneOp = false;          ///< a convolution: one matvec per window
  static constexpr std::size_t kConvHead = 0U;       ///< nodes a convolution records beside its rows
  static constexpr std::size_t kConvSlots = 0U;      ///< slots a convolution records once
  static constexpr std::size_t kConvWindowSlots = 4U;  ///< slots per window beside its view list (a matvec)
};

/// The tape's own parameters cover every layer created on it.
inline constexpr bool source_covers(const TapeParams& /*src*/, std::uint64_t /*first*/,
                                    std::uint64_t /*count*/) noexcept {
  return true;
}
/// [first, first + count) is recorded on the tape (not reset since).
template <class T>
inline bool source_recorded(const Tape<T>& tape, const TapeParams& /*src*/, std::uint64_t first,
                            std::uint64_t count) noexcept {
  return (first < kNoIndex) && (count < kNoIndex) && is_recorded(tape, View{static_cast<Index>(first), static_cast<Index>(count)});
}
/// A zero of a convolution's padding: a leaf.
template <class T>
inline Value<T> source_zero(Tape<T>& tape, const TapeParams& /*src*/) noexcept {
  return tape.leaf(T(0));
}

/// A layer's rows over the tape's own weights: burtorch::matvec.
template <class T>
inline View source_matvec(Tape<T>& tape, const TapeParams& /*src*/, Index w, Index rows, ViewList x,
                          Index bias) noexcept {
  return burtorch::matvec(tape, w, rows, x, bias);
}

/// A gain and bias over the tape's own parameters: burtorch::scale_shift.
template <class T>
inline View source_scale_shift(Tape<T>& tape, const TapeParams& /*src*/, Index gain, Index x_first, Index bias,
                               Index n) noexcept {
  return burtorch::scale_shift(tape, gain, x_first, bias, n);
}

}  // namespace nn
}  // namespace burtorch

#endif  // BURTORCH_NN_SOURCE_HPP
