// SPDX-License-Identifier: Apache-2.0
/// @file
/// Layer normalisation: LayerNorm (torch.nn.LayerNorm over one vector) and
/// its options, written once over a weight source (nn/source.hpp).
#ifndef BURTORCH_NN_NORM_HPP
#define BURTORCH_NN_NORM_HPP

#include <cstddef>

#include "burtorch/nn/common.hpp"
#include "burtorch/nn/init.hpp"
#include "burtorch/nn/random.hpp"
#include "burtorch/nn/source.hpp"
#include "burtorch/core/ops.hpp"
#include "burtorch/core/tape.hpp"
#include "burtorch/core/views.hpp"

namespace burtorch {
namespace nn {

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
  /// Slots of forward(): one scale_shift descriptor, its size the weight
  /// source's (nn/source.hpp; on a tape of lanes: `slots<LaneParams<T>>(o)`).
  template <class Src = TapeParams>
  static constexpr std::size_t slots(const LayerNormOptions& /*o*/) noexcept {
    return Src::kScaleShiftSlots;
  }

  /// Appends the gains, then the biases, to the tape. False if the tape is
  /// full or failed (params() is then kNoView).
  bool create(Tape<T>& tape, const LayerNormOptions& o, Rng& rng) noexcept {
    n = o.width;
    eps = narrow_as<T>(o.eps);  // no soft-double code for a float model
    const Index g = make_params(tape, o.width, o.gain_init, o.width, rng, o.gain_name);
    const Index b = make_params(tape, o.width, o.bias_init, o.width, rng, o.bias_name);
    const bool ok = (g != kNoIndex) && (b != kNoIndex);
    gamma = ok ? g : kNoIndex;
    beta = ok ? b : kNoIndex;
    return ok;
  }

  /// The gains and biases on the tape (kNoView before a successful create()).
  View params() const noexcept { return (gamma != kNoIndex) ? View{gamma, 2U * n} : kNoView; }

  /// Records the normalised x (n nodes wide, n <= kMaxGather); kNoView on
  /// error, with nothing recorded (no node, no slot): an input of another
  /// width or a layer not created is kInvalidArgument; an input, or the
  /// gains and biases, not recorded on the tape (a layer created on another
  /// tape) kInvalidHandle; a tape too small kCapacityExceeded, the nodes
  /// recorded before it found out discarded (all_or_nothing).
  View forward(Tape<T>& tape, View x) const noexcept { return forward(tape, TapeParams{}, x); }
  /// The same with the gains and biases read from a source (nn/source.hpp),
  /// e.g. on a tape of N lanes, shared through LaneParams p
  /// (nn::lane_params). Errors as above; a source that does not hold them
  /// is kInvalidArgument, also before anything is recorded.
  template <class U, class Src>
  View forward(Tape<U>& tape, const Src& src, View x) const noexcept {
    const View v = params();
    Status error = Status::kOk;
    if ((gamma == kNoIndex) || (x.count != n) || (n > kMaxGather) || !source_covers(src, v.first, v.count)) {
      error = Status::kInvalidArgument;
    } else if (!is_recorded(tape, x) || !source_recorded(tape, src, v.first, v.count)) {
      error = Status::kInvalidHandle;
    } else {
      // checked: record
    }
    if (tape.report(error) != Status::kOk) {
      return kNoView;
    }
    return all_or_nothing(tape, kNoView, [&]() noexcept {
      const View scaled = normalize(tape, x);
      return (scaled.count != 0U) ? source_scale_shift(tape, src, gamma, scaled.first, beta, n) : kNoView;
    });
  }

 private:
  /// (x - mean) / sqrt(var + eps): all but the gain and bias (x checked).
  template <class U>
  View normalize(Tape<U>& tape, View x) const noexcept {
    const Value<U> mu = burtorch::reduce<Op::kMeanR>(tape, burtorch::View{x.first, n});
    const Value<U> rstd = inv_sqrt(burtorch::reduce<Op::kVarBiasedR>(tape, burtorch::View{x.first, n}) + U(eps));
    const View centered = burtorch::record_view(tape, n, [&](Index i) noexcept { return node(tape, x.first + i) - mu; });
    return burtorch::record_view(tape, n, [&](Index i) noexcept { return node(tape, centered.first + i) * rstd; });
  }
};

}  // namespace nn
}  // namespace burtorch

#endif  // BURTORCH_NN_NORM_HPP
