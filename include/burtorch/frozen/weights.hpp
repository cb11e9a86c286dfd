// SPDX-License-Identifier: Apache-2.0
/// @file
/// Frozen weights: read-only arrays the caller owns (flash, a `static const`
/// array), stored as FP32, FP16, BF16 or int8 with a per-tensor scale, read
/// by matvec_frozen (frozen/ops.hpp) without ever being copied onto the tape.
/// They have no gradient, no optimizer state and cost no RAM. This header
/// is the formats alone (no tape): a host program that exports weights for
/// firmware needs only it.
///
///   static constexpr std::int8_t kW1[16 * 2] = {...};   // in flash
///   static constexpr std::uint16_t kB1[16] = {...};     // FP16 bit patterns
///   constexpr burtorch::FrozenMatrix kHidden{burtorch::frozen_i8(kW1, 0.0123F), 16U, 2U};
///   constexpr burtorch::FrozenVector kHiddenBias{burtorch::frozen_f16(kB1), 16U};
///   burtorch::View h = burtorch::matvec_frozen(tape, kHidden, x, &kHiddenBias);
///
/// Every weight is dequantized to float in software (the same bits on every
/// target, no FP16 hardware needed), then converted to the tape's scalar T,
/// where the inner products are computed:
///
///   kF32   the float itself
///   kF16   IEEE 754 binary16: exact (every FP16 value is a float), subnormals
///          included; +-inf stays +-inf; a NaN stays a NaN with its sign and
///          payload, quiet bit set
///   kBF16  bfloat16, the top half of a float: exact (bits << 16)
///   kI8    scale * q, q in [-128, 127], rounded once to float
///
/// The conversions back (float or double to FP16/BF16, round to nearest,
/// ties to even; int8 symmetric per-tensor quantization) are here too, for a
/// host program that exports trained weights as arrays to compile into
/// firmware.
#ifndef BURTORCH_FROZEN_WEIGHTS_HPP
#define BURTORCH_FROZEN_WEIGHTS_HPP

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "burtorch/config.hpp"
#include "burtorch/index.hpp"
#include "burtorch/status.hpp"

namespace burtorch {

/// How a frozen array stores its weights.
enum class WeightFormat : std::uint8_t {
  kF32 = 0U,   ///< float
  kF16 = 1U,   ///< IEEE 754 binary16 bit patterns (std::uint16_t)
  kBF16 = 2U,  ///< bfloat16 bit patterns (std::uint16_t)
  kI8 = 3U,    ///< std::int8_t q; the weight is scale * q
};

/// A read-only array of weights in one format: the pointer of that format
/// is set, the others are null. Build it with frozen_f32(), frozen_f16(),
/// frozen_bf16() or frozen_i8(); all are constexpr, so a `static constexpr`
/// description of a `static constexpr` array stays in flash.
struct FrozenArray {
  WeightFormat format = WeightFormat::kF32;  ///< which pointer holds the weights
  const float* f32 = nullptr;                ///< kF32 weights
  const std::uint16_t* bits16 = nullptr;     ///< kF16 or kBF16 bit patterns
  const std::int8_t* i8 = nullptr;           ///< kI8 quantized weights
  float scale = 1.0F;                        ///< kI8: weight = scale * q
};

/// A frozen weight matrix, row-major: weight (r, c) is element r * cols + c.
struct FrozenMatrix {
  FrozenArray data;  ///< the weights
  Index rows = 0U;   ///< outputs
  Index cols = 0U;   ///< inputs
};

/// A frozen vector (a frozen layer's bias).
struct FrozenVector {
  FrozenArray data;  ///< the elements
  Index size = 0U;   ///< how many
};

/// @{
/// The description of an array of weights in one format (not copied: the
/// array must outlive every node that reads it).
constexpr FrozenArray frozen_f32(const float* weights) noexcept {
  return FrozenArray{WeightFormat::kF32, weights, nullptr, nullptr, 1.0F};
}
constexpr FrozenArray frozen_f16(const std::uint16_t* bits) noexcept {
  return FrozenArray{WeightFormat::kF16, nullptr, bits, nullptr, 1.0F};
}
constexpr FrozenArray frozen_bf16(const std::uint16_t* bits) noexcept {
  return FrozenArray{WeightFormat::kBF16, nullptr, bits, nullptr, 1.0F};
}
constexpr FrozenArray frozen_i8(const std::int8_t* q, float scale) noexcept {
  return FrozenArray{WeightFormat::kI8, nullptr, nullptr, q, scale};
}
/// @}

// --- conversions --------------------------------------------------------------

/// The float of an IEEE 754 binary16 bit pattern: exact for every finite
/// value (subnormals included) and for +-inf; a NaN keeps its sign and
/// payload and gets the quiet bit (as Arm's and x86's conversions do).
inline float f16_to_float(std::uint16_t h) noexcept {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000U) << 16U;
  const std::uint32_t exponent = (static_cast<std::uint32_t>(h) >> 10U) & 0x1FU;
  std::uint32_t mantissa = static_cast<std::uint32_t>(h) & 0x3FFU;
  std::uint32_t bits = sign;
  if (exponent == 0x1FU) {
    bits |= 0x7F800000U | (mantissa << 13U) | ((mantissa != 0U) ? 0x00400000U : 0U);
  } else if (exponent != 0U) {
    bits |= ((exponent + 112U) << 23U) | (mantissa << 13U);  // rebias: 127 - 15
  } else if (mantissa != 0U) {
    // Subnormal, mantissa * 2^-24: shift the leading one up to bit 10 (at
    // most 10 steps); each step lowers the exponent of 2^-14 (biased 113).
    std::uint32_t biased = 113U;
    while ((mantissa & 0x400U) == 0U) {
      mantissa <<= 1U;
      --biased;
    }
    bits |= (biased << 23U) | ((mantissa & 0x3FFU) << 13U);
  } else {
    // +-0
  }
  float f = 0.0F;
  std::memcpy(&f, &bits, sizeof(f));  // BT-DEV-010
  return f;
}

/// The float of a bfloat16 bit pattern: its bits are a float's upper half.
inline float bf16_to_float(std::uint16_t b) noexcept {
  const std::uint32_t bits = static_cast<std::uint32_t>(b) << 16U;
  float f = 0.0F;
  std::memcpy(&f, &bits, sizeof(f));  // BT-DEV-010
  return f;
}

namespace detail {
/// x rounded to a binary format of kExp exponent bits and kFrac fraction
/// bits (at most 15 bits together), to nearest, ties to even, straight from
/// the double's bits (a float converts to double exactly, so there is no
/// double rounding): overflow gives +-inf, underflow +-0 or a subnormal; a
/// NaN stays a NaN with its sign and top payload bits, quiet bit set.
template <unsigned kExp, unsigned kFrac>
inline std::uint16_t round_to_small_float(double x) noexcept {
  static_assert((kExp + kFrac) < 16U, "a sign bit, kExp and kFrac bits fit in 16 bits");
  constexpr std::uint32_t kBias = (1U << (kExp - 1U)) - 1U;
  constexpr std::uint32_t kInf = ((1U << kExp) - 1U) << kFrac;
  constexpr unsigned kDrop = 52U - kFrac;  // fraction bits of a double that do not fit
  std::uint64_t bits = 0U;
  std::memcpy(&bits, &x, sizeof(bits));  // BT-DEV-010
  const std::uint32_t sign = static_cast<std::uint32_t>(bits >> 63U) << (kExp + kFrac);
  const std::uint32_t exponent = static_cast<std::uint32_t>(bits >> 52U) & 0x7FFU;
  const std::uint64_t mantissa = bits & ((static_cast<std::uint64_t>(1U) << 52U) - 1U);
  std::uint32_t out = 0U;  // the magnitude's bits
  if (exponent == 0x7FFU) {
    const std::uint32_t quiet = (mantissa != 0U) ? ((1U << (kFrac - 1U)) | static_cast<std::uint32_t>(mantissa >> kDrop)) : 0U;
    out = kInf | quiet;
  } else if (exponent == 0U) {
    out = 0U;  // zero or a double subnormal: far below the smallest subnormal here
  } else if ((exponent + kBias - 1024U) >= (2U * kBias)) {
    // The biased exponent here, exponent - 1023 + bias, is outside [1, 2 *
    // bias]: above the largest binade (inf) or below the smallest normal one
    // (a subnormal or zero); the subtraction wraps for the low ones.
    if (exponent > (1023U + kBias)) {
      out = kInf;
    } else {
      // Value sig * 2^(e - 52) with e < 1 - bias; the subnormal unit is
      // 2^(1 - bias - kFrac): keep sig >> shift.
      const std::uint64_t sig = mantissa | (static_cast<std::uint64_t>(1U) << 52U);
      const std::uint32_t shift = kDrop + ((1023U - kBias + 1U) - exponent);
      if (shift <= 53U) {
        const std::uint64_t q = sig >> shift;
        const std::uint64_t rest = sig & ((static_cast<std::uint64_t>(1U) << shift) - 1U);
        const std::uint64_t half = static_cast<std::uint64_t>(1U) << (shift - 1U);
        const bool up = (rest > half) || ((rest == half) && ((q & 1U) != 0U));
        out = static_cast<std::uint32_t>(q) + (up ? 1U : 0U);  // 1 << kFrac: the smallest normal
      }
    }
  } else {
    const std::uint64_t sig = mantissa | (static_cast<std::uint64_t>(1U) << 52U);
    const std::uint64_t q = sig >> kDrop;  // with the implicit bit: [2^kFrac, 2^(kFrac+1))
    const std::uint64_t rest = sig & ((static_cast<std::uint64_t>(1U) << kDrop) - 1U);
    const std::uint64_t half = static_cast<std::uint64_t>(1U) << (kDrop - 1U);
    const bool up = (rest > half) || ((rest == half) && ((q & 1U) != 0U));
    const std::uint32_t biased = (exponent + kBias) - 1023U;
    // (biased - 1) << kFrac plus q (implicit bit included): a carry out of
    // the fraction moves to the next binade, the largest one's to inf.
    out = ((biased - 1U) << kFrac) + static_cast<std::uint32_t>(q) + (up ? 1U : 0U);
  }
  return static_cast<std::uint16_t>(sign | out);
}
}  // namespace detail

/// x as IEEE 754 binary16, rounded to nearest, ties to even (|x| >= 65520
/// gives inf; NaN a quiet NaN of the same sign).
inline std::uint16_t f16_from_double(double x) noexcept { return detail::round_to_small_float<5U, 10U>(x); }
/// @copydoc f16_from_double
inline std::uint16_t f16_from_float(float x) noexcept { return f16_from_double(static_cast<double>(x)); }
/// x as bfloat16, rounded to nearest, ties to even (NaN: a quiet NaN of
/// the same sign).
inline std::uint16_t bf16_from_double(double x) noexcept { return detail::round_to_small_float<8U, 7U>(x); }
/// @copydoc bf16_from_double
inline std::uint16_t bf16_from_float(float x) noexcept { return bf16_from_double(static_cast<double>(x)); }

namespace detail {
/// The largest finite float, as a double.
constexpr double kFloatMax = static_cast<double>(std::numeric_limits<float>::max());
/// The smallest normal float.
constexpr float kFloatMinNormal = std::numeric_limits<float>::min();

/// True if w is a float or a double the export functions accept: finite.
template <class W>
inline bool finite_weight(W w) noexcept {
  static_assert(std::is_same<W, float>::value || std::is_same<W, double>::value,
                "weights are exported from float or double arrays");
  return std::isfinite(w);
}

/// True if `bits`, a result of round_to_small_float<kExp, kFrac>, is an
/// infinity or a NaN: the input overflowed the format (or was not finite).
template <unsigned kExp, unsigned kFrac>
constexpr bool small_float_not_finite(std::uint16_t bits) noexcept {
  constexpr std::uint32_t kInf = ((1U << kExp) - 1U) << kFrac;
  return (static_cast<std::uint32_t>(bits) & kInf) == kInf;
}

/// out[i] = w[i] rounded to the format (nearest, ties to even), written
/// only if every w[i] is finite and rounds to a finite value.
template <unsigned kExp, unsigned kFrac, class W>
inline Status quantize_small_float(const W* w, std::size_t n, std::uint16_t* out) noexcept {
  if ((n != 0U) && ((w == nullptr) || (out == nullptr))) {
    return Status::kInvalidArgument;
  }
  for (std::size_t i = 0U; i < n; ++i) {
    if (!finite_weight(w[i]) ||
        small_float_not_finite<kExp, kFrac>(round_to_small_float<kExp, kFrac>(static_cast<double>(w[i])))) {
      return Status::kInvalidArgument;
    }
  }
  for (std::size_t i = 0U; i < n; ++i) {
    out[i] = round_to_small_float<kExp, kFrac>(static_cast<double>(w[i]));
  }
  return Status::kOk;
}
}  // namespace detail

/// @{
/// out[i] = w[i] in FP16 (or BF16): the value of the format nearest w[i],
/// ties to even, so |out[i] - w[i]| is at most half the format's spacing at
/// w[i] (below the smallest normal, half the smallest subnormal): a host
/// program's export of trained float or double weights. Nothing is written
/// and kInvalidArgument is returned for null pointers with n > 0, a weight
/// that is NaN or infinite, or one too large for the format (FP16: |w| >=
/// 65520; BF16: |w| >= 2^128 - 2^119), which would round to infinity. (The
/// scalar conversions above convert those too, to IEEE's results.)
template <class W>
inline Status quantize_f16(const W* w, std::size_t n, std::uint16_t* out) noexcept {
  return detail::quantize_small_float<5U, 10U>(w, n, out);
}
template <class W>
inline Status quantize_bf16(const W* w, std::size_t n, std::uint16_t* out) noexcept {
  return detail::quantize_small_float<8U, 7U>(w, n, out);
}
/// @}

namespace detail {
/// x rounded to the nearest integer, ties to even, for |x| < 2^52: from floor
/// and the exact remainder (std::nearbyint of a double does not assemble for
/// the Cortex-M55 with GCC 12, and it would depend on the rounding mode).
inline double round_half_even(double x) noexcept {
  const double q = std::floor(x);
  const double rest = x - q;  // exact, in [0, 1)
  // Up above one half, and at exactly one half when q is odd.
  const bool up = (rest > 0.5) || ((rest == 0.5) && (std::fmod(q, 2.0) != 0.0));  // BT-DEV-004: exact tie, parity
  return up ? (q + 1.0) : q;
}
}  // namespace detail

/// Symmetric per-tensor int8 quantization of float or double weights:
/// *scale = max|w| / 127 rounded to float (1 if every w is 0; at least the
/// smallest normal float, 2^-126, so that tiny weights keep the bound
/// below; one float step less if 127 * scale would pass the largest float),
/// out[i] = w[i] / scale rounded to nearest, ties to even (computed
/// exactly), in [-127, 127]. So |scale * out[i] - w[i]| <= scale / 2 for
/// every weight (exactly; the dequantized float scale * out[i] adds its own
/// rounding) and every scale * out[i] is a finite float. Nothing is written
/// and kInvalidArgument is returned for null pointers, n == 0, a weight that
/// is NaN or infinite, or one whose magnitude exceeds the largest float (a
/// double: int8 weights are read back as floats).
template <class W>
inline Status quantize_i8(const W* w, std::size_t n, std::int8_t* out, float* scale) noexcept {
  if ((w == nullptr) || (out == nullptr) || (scale == nullptr) || (n == 0U)) {
    return Status::kInvalidArgument;
  }
  double top = 0.0;
  for (std::size_t i = 0U; i < n; ++i) {
    if (!detail::finite_weight(w[i])) {
      return Status::kInvalidArgument;
    }
    const double x = std::fabs(static_cast<double>(w[i]));
    if (x > detail::kFloatMax) {
      return Status::kInvalidArgument;
    }
    top = (x > top) ? x : top;
  }
  float s = 1.0F;
  if (top > 0.0) {
    s = static_cast<float>(top / 127.0);  // at most the largest float / 127: defined
    s = (s < detail::kFloatMinNormal) ? detail::kFloatMinNormal : s;
    if ((static_cast<double>(s) * 127.0) > detail::kFloatMax) {
      s = std::nextafter(s, 0.0F);  // rounded up past the largest float / 127
    }
  }
  // w / s rounded in a double, then to an integer, is w / s rounded to an
  // integer: unless w is a midpoint s * (k + 1/2), it lies at least one of
  // its own units from it, which puts the quotient more than half a unit of
  // the quotient from k + 1/2 (s is a normal float, |w / s| < 128), so the
  // division cannot round onto the midpoint.
  const double sd = static_cast<double>(s);
  for (std::size_t i = 0U; i < n; ++i) {
    double q = detail::round_half_even(static_cast<double>(w[i]) / sd);
    // |w[i]| / s < 127.5 by the choice of s; the clamp keeps the
    // conversion defined whatever the arithmetic.
    q = (q > 127.0) ? 127.0 : ((q < -127.0) ? -127.0 : q);
    out[i] = static_cast<std::int8_t>(q);
  }
  *scale = s;
  return Status::kOk;
}

/// True if `a` names weights: a known format, its pointer set and (int8) a
/// finite scale.
inline bool frozen_valid(const FrozenArray& a) noexcept {
  bool ok = false;
  switch (a.format) {
    case WeightFormat::kF32:
      ok = a.f32 != nullptr;
      break;
    case WeightFormat::kF16:
    case WeightFormat::kBF16:
      ok = a.bits16 != nullptr;
      break;
    case WeightFormat::kI8:
      ok = (a.i8 != nullptr) && std::isfinite(a.scale);
      break;
    default:
      break;
  }
  return ok;
}

/// Element k of a valid array, dequantized (see the file comment); 0 for an
/// invalid one.
inline float frozen_at(const FrozenArray& a, std::size_t k) noexcept {
  float w = 0.0F;
  switch (a.format) {
    case WeightFormat::kF32:
      w = a.f32[k];
      break;
    case WeightFormat::kF16:
      w = f16_to_float(a.bits16[k]);
      break;
    case WeightFormat::kBF16:
      w = bf16_to_float(a.bits16[k]);
      break;
    case WeightFormat::kI8:
      w = a.scale * static_cast<float>(a.i8[k]);
      break;
    default:
      break;
  }
  return w;
}

}  // namespace burtorch

#endif  // BURTORCH_FROZEN_WEIGHTS_HPP
