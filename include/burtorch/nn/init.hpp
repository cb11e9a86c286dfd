// SPDX-License-Identifier: Apache-2.0
/// @file
/// Weight initialisation from the library's Rng: uniform, normal and
/// fan-in-scaled (Kaiming) with a gain per activation. Draws are made in
/// double and rounded to T, so float and double models start from the same
/// numbers (up to rounding) on every target.
#ifndef BURTORCH_NN_INIT_HPP
#define BURTORCH_NN_INIT_HPP

#include <cmath>
#include <cstddef>

#include "burtorch/nn/random.hpp"

namespace burtorch {
namespace nn {

/// The distribution of an Init.
enum class InitKind : unsigned char {
  kConstant,      ///< a
  kUniform,       ///< U(a, b)
  kNormal,        ///< N(mean a, stddev b)
  kFanInUniform,  ///< U(-bound, bound), bound = gain a * sqrt(3 / fan_in)
  kFanInNormal,   ///< N(0, (gain a / sqrt(fan_in))^2)
};

/// How to draw the initial values of a tensor of parameters (see draw()).
struct Init {
  InitKind kind = InitKind::kConstant;  ///< the distribution
  double a = 0.0;                       ///< first parameter (see InitKind)
  double b = 0.0;                       ///< second parameter (see InitKind)

  /// Every value `value`.
  static constexpr Init constant(double value) noexcept { return Init{InitKind::kConstant, value, 0.0}; }
  /// Every value 0.
  static constexpr Init zeros() noexcept { return constant(0.0); }
  /// Every value 1.
  static constexpr Init ones() noexcept { return constant(1.0); }
  /// Uniform in [lo, hi).
  static constexpr Init uniform(double lo, double hi) noexcept { return Init{InitKind::kUniform, lo, hi}; }
  /// Normal with the given mean and standard deviation.
  static constexpr Init normal(double mean, double stddev) noexcept { return Init{InitKind::kNormal, mean, stddev}; }
  /// Uniform in ±gain·sqrt(3 / fan_in) (Kaiming uniform).
  static constexpr Init fan_in_uniform(double gain) noexcept { return Init{InitKind::kFanInUniform, gain, 0.0}; }
  /// Normal with standard deviation gain / sqrt(fan_in) (Kaiming normal).
  static constexpr Init fan_in_normal(double gain) noexcept { return Init{InitKind::kFanInNormal, gain, 0.0}; }
};

/// Recommended gains (as torch.nn.init.calculate_gain).
/// @{
constexpr double kGainLinear = 1.0;
constexpr double kGainTanh = 5.0 / 3.0;
constexpr double kGainRelu = 1.4142135623730950488;
constexpr double kGainSigmoid = 1.0;
/// @}
/// The gain that makes fan_in_uniform torch.nn.Linear's default
/// initialisation, U(-1/sqrt(fan_in), 1/sqrt(fan_in)) (kaiming_uniform_ with
/// a = sqrt(5), and the bound torch gives the bias): 1/sqrt(3).
constexpr double kGainLinearDefault = 0.57735026918962576451;

/// One draw for a tensor whose rows have `fan_in` inputs.
inline double draw(const Init& init, std::size_t fan_in, Rng& rng) noexcept {
  const double fan = (fan_in == 0U) ? 1.0 : static_cast<double>(fan_in);
  double x = init.a;
  switch (init.kind) {
    case InitKind::kUniform:
      x = rng.uniform(init.a, init.b);
      break;
    case InitKind::kNormal:
      x = rng.normal(init.a, init.b);
      break;
    case InitKind::kFanInUniform: {
      const double bound = init.a * std::sqrt(3.0 / fan);
      x = rng.uniform(-bound, bound);
      break;
    }
    case InitKind::kFanInNormal:
      x = rng.normal() * (init.a / std::sqrt(fan));
      break;
    case InitKind::kConstant:
    default:
      break;
  }
  return x;
}

}  // namespace nn
}  // namespace burtorch

#endif  // BURTORCH_NN_INIT_HPP
