// SPDX-License-Identifier: Apache-2.0
/// @file
/// Differentially private SGD's batch (Abadi et al. 2016, "Deep Learning
/// with Differential Privacy"): each sample's gradient clipped to L2 norm
/// at most C, the clipped gradients summed, Gaussian noise of standard
/// deviation sigma * C added to every coordinate, the result divided by
/// the batch size. The serial batch already computes one sample's gradient
/// at a time, so a per-sample gradient costs no per-sample memory: the
/// gradients of `params` hold one sample's at a time and a caller array of
/// params.count values holds the clipped sum (Opacus, for PyTorch, keeps a
/// gradient per sample of the batch; docs/fleet.md compares them).
#ifndef BURTORCH_NN_DP_HPP
#define BURTORCH_NN_DP_HPP

#include <cmath>
#include <cstddef>
#include <limits>

#include "burtorch/nn/random.hpp"
#include "burtorch/nn/params.hpp"
#include "burtorch/core/tape.hpp"

namespace burtorch {
namespace nn {

/// DP-SGD's two numbers.
template <class T>
struct DpOptions {
  T clip = T(1);   ///< C: each sample's gradient is scaled to an L2 norm of at most C (> 0)
  T noise = T(0);  ///< sigma: the noise multiplier (>= 0); the noise's standard deviation is sigma * C
};

/// A serial batch with DP-SGD's clipping and noise: for each of `count`
/// samples, zero the gradients of `params`, record its loss, backward,
/// rewind, and add g * min(1, C / |g|) to sum[0, params.count) (a caller
/// array, overwritten); then the gradients of `params` become
/// (sum + sigma C z) / count with z standard normal per coordinate from
/// `rng` (drawn in parameter order). *clipped (if not null) counts the
/// samples whose norm exceeded C. Returns the mean loss; NaN on error with
/// the reason on the tape (kInvalidArgument, recorded before any sample
/// runs: count 0, params not on the tape, a null sum, C not finite and
/// positive, sigma not finite and non-negative).
template <class T, class SampleLoss>
T dp_serial_batch(Tape<T>& tape, View params, std::size_t count, SampleLoss&& sample_loss, const DpOptions<T>& dp,
                  T* sum, Rng& rng, std::size_t* clipped = nullptr) noexcept {
  const bool options = std::isfinite(static_cast<double>(dp.clip)) && (dp.clip > T(0)) &&
                       std::isfinite(static_cast<double>(dp.noise)) && (dp.noise >= T(0));
  if ((count == 0U) || (sum == nullptr) || !options || !is_recorded(tape, params)) {
    static_cast<void>(tape.report(Status::kInvalidArgument));
    return std::numeric_limits<T>::quiet_NaN();
  }
  T* grads = tape.grads() + params.first;
  for (std::size_t i = 0U; i < params.count; ++i) {
    sum[i] = T(0);
  }
  const Mark start = tape.mark();
  T total = T(0);
  std::size_t over = 0U;
  for (std::size_t s = 0U; s < count; ++s) {
    tape.zero_grad(params.first, params.count);
    const Value<T> loss = sample_loss(tape, s);
    if ((tape.status() != Status::kOk) || (tape.backward(loss) != Status::kOk)) {
      static_cast<void>(tape.rewind(start));
      return std::numeric_limits<T>::quiet_NaN();
    }
    total += loss.value();
    static_cast<void>(tape.rewind(start));
    T squares = T(0);
    for (std::size_t i = 0U; i < params.count; ++i) {
      squares += grads[i] * grads[i];
    }
    const T norm = std::sqrt(squares);
    const bool clip = norm > dp.clip;
    const T factor = clip ? (dp.clip / norm) : T(1);
    over += clip ? 1U : 0U;
    for (std::size_t i = 0U; i < params.count; ++i) {
      sum[i] += factor * grads[i];
    }
  }
  const T stddev = dp.noise * dp.clip;
  const T inverse = T(1) / static_cast<T>(count);
  const bool noisy = dp.noise > T(0);
  for (std::size_t i = 0U; i < params.count; ++i) {
    const T z = noisy ? static_cast<T>(rng.normal()) : T(0);
    grads[i] = (sum[i] + (stddev * z)) * inverse;
  }
  if (clipped != nullptr) {
    *clipped = over;
  }
  return total / static_cast<T>(count);
}

}  // namespace nn
}  // namespace burtorch

#endif  // BURTORCH_NN_DP_HPP
