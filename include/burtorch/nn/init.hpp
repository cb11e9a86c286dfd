// SPDX-License-Identifier: Apache-2.0
/// @file
/// Weight initialisation from the library's Rng: uniform, normal and
/// fan-in-scaled (Kaiming) with a gain per activation. A double model's
/// draws are made in double (draw()); a float model's in float
/// (draw_float(): no double arithmetic, so a single-precision firmware
/// links no soft-double code for its initialisation). Both use only
/// integer operations and IEEE-754 +, -, *, / and sqrt: the same seed gives
/// the same numbers on every target.
#ifndef BURTORCH_NN_INIT_HPP
#define BURTORCH_NN_INIT_HPP

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "burtorch/config.hpp"
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

/// A double rounded to the nearest float (ties to even; overflow to
/// infinity, NaN kept), in integer arithmetic on the encodings: what
/// static_cast<float>(x) gives, without soft-double code on a target
/// whose FPU (or none) has no double precision.
inline float narrow_to_float(double x) noexcept {
  std::uint64_t d = 0U;
  std::memcpy(&d, &x, sizeof(d));  // BT-DEV-010
  const std::uint32_t sign = static_cast<std::uint32_t>(d >> 32U) & 0x80000000U;
  const int biased = static_cast<int>((d >> 52U) & 0x7FFU);
  std::uint64_t m = d & ((std::uint64_t{1} << 52U) - 1U);
  std::uint32_t f = sign;  // zero, and what a double below float's range rounds to
  if (biased == 0x7FF) {
    f |= 0x7F800000U | ((m != 0U) ? (0x400000U | static_cast<std::uint32_t>(m >> 29U)) : 0U);
  } else if (biased != 0) {
    m |= std::uint64_t{1} << 52U;     // x = m * 2^(biased - 1075)
    const int e = biased - 896;        // float's biased exponent
    if (e >= 255) {
      f |= 0x7F800000U;
    } else {
      // q = m / 2^shift rounded: 24 bits for a normal float, fewer below.
      const int wanted = (e >= 1) ? 29 : (29 + 1 - e);
      const unsigned shift = (wanted > 63) ? 63U : static_cast<unsigned>(wanted);
      std::uint64_t q = m >> shift;
      const std::uint64_t rest = m & ((std::uint64_t{1} << shift) - 1U);
      const std::uint64_t half = std::uint64_t{1} << (shift - 1U);
      if ((rest > half) || ((rest == half) && ((q & 1U) != 0U))) {
        ++q;  // a carry into the exponent (up to infinity) is right as it is
      }
      f |= (e >= 1) ? ((static_cast<std::uint32_t>(e - 1) << 23U) + static_cast<std::uint32_t>(q))
                    : static_cast<std::uint32_t>(q);
    }
  } else {
    // a double subnormal: below half of float's smallest subnormal
  }
  float out = 0.0F;
  std::memcpy(&out, &f, sizeof(out));  // BT-DEV-010
  return out;
}

/// draw() in single precision, for a float model: the same distributions
/// from the same Rng, computed in float (Init's parameters narrowed by
/// narrow_to_float(), Rng::uniform_float(), Rng::normal_float()), so no
/// double arithmetic is linked for it. Its values differ from
/// static_cast<float>(draw(...)) in the last bits of float, and a normal
/// draw may take another pair of uniforms.
inline float draw_float(const Init& init, std::size_t fan_in, Rng& rng) noexcept {
  const float fan = (fan_in == 0U) ? 1.0F : static_cast<float>(static_cast<std::uint32_t>(fan_in));
  const float a = narrow_to_float(init.a);
  const float b = narrow_to_float(init.b);
  float x = a;
  switch (init.kind) {
    case InitKind::kUniform:
      x = rng.uniform_float(a, b);
      break;
    case InitKind::kNormal:
      x = a + (b * rng.normal_float());
      break;
    case InitKind::kFanInUniform: {
      const float bound = a * std::sqrt(3.0F / fan);
      x = rng.uniform_float(-bound, bound);
      break;
    }
    case InitKind::kFanInNormal:
      x = rng.normal_float() * (a / std::sqrt(fan));
      break;
    case InitKind::kConstant:
    default:
      break;
  }
  return x;
}

/// The float bounds [lo, hi) of a uniform Init (kUniform, or kFanInUniform
/// over `fan_in` inputs) as draw_float() computes them, when the optimiser
/// knows the Init and fan_in (BURTORCH_KNOWN: an inline caller given
/// constexpr options): then the narrowing and the square root fold at
/// compile time, and draws of rng.uniform_float(lo, hi) are draw_float()'s
/// bit for bit without its switch, narrow_to_float() or the normal
/// distribution's code. `known` is false otherwise (another kind, values
/// known only at run time, an unoptimised build): draw with draw_float().
struct KnownUniform {
  float lo = 0.0F;     ///< lower bound
  float hi = 0.0F;     ///< upper bound
  bool known = false;  ///< lo and hi are set
};
/// The KnownUniform of `init` over `fan_in` inputs: its bounds when the
/// optimiser knows both and the kind is uniform, else `known` false.
BURTORCH_ALWAYS_INLINE inline KnownUniform known_uniform(const Init& init, std::size_t fan_in) noexcept {
  KnownUniform u;
  if (BURTORCH_KNOWN(init.kind) && BURTORCH_KNOWN(init.a) && BURTORCH_KNOWN(init.b) && BURTORCH_KNOWN(fan_in)) {
    // static_cast<float> is narrow_to_float() (both round to nearest, ties
    // to even), here folded by the compiler.
    if (init.kind == InitKind::kUniform) {
      u.lo = static_cast<float>(init.a);
      u.hi = static_cast<float>(init.b);
      u.known = true;
    } else if (init.kind == InitKind::kFanInUniform) {
      const float fan = (fan_in == 0U) ? 1.0F : static_cast<float>(static_cast<std::uint32_t>(fan_in));
      const float bound = static_cast<float>(init.a) * std::sqrt(3.0F / fan);
      u.lo = -bound;
      u.hi = bound;
      u.known = true;
    } else {
      // another kind: draw_float()
    }
  }
  return u;
}

/// A double option (an Init's parameter, LayerNorm's eps) in T's
/// precision: narrow_to_float() for float, a conversion for any other type.
/// The same value as static_cast<T>(x), with no soft-double code in a
/// float model's firmware.
template <class T>
inline T narrow_as(double x) noexcept {
  if constexpr (std::is_same<T, float>::value) {
    return narrow_to_float(x);
  } else {
    return static_cast<T>(x);
  }
}

/// One draw for a parameter of type T: draw_float() for float, draw()
/// (rounded to T) for any other type.
template <class T>
inline T draw_as(const Init& init, std::size_t fan_in, Rng& rng) noexcept {
  if constexpr (std::is_same<T, float>::value) {
    return draw_float(init, fan_in, rng);
  } else {
    return static_cast<T>(draw(init, fan_in, rng));
  }
}

}  // namespace nn
}  // namespace burtorch

#endif  // BURTORCH_NN_INIT_HPP
