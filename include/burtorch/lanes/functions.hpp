// SPDX-License-Identifier: Apache-2.0
/// @file
/// Internal: exp and tanh of N float lanes at once (Lanes<float, N>::Ops,
/// burtorch/lanes/lanes.hpp), in vector registers instead of N calls of the C
/// library: a lane batch evaluates a layer's activations and a softmax's
/// exponentials for N samples in a few instructions each.
///
/// exp(x) = 2^n e^r with n = round(x / ln 2) and r = x - n ln 2 (ln 2 split
/// in two parts so that n ln 2 is exact for the n that occur), e^r from its
/// Taylor series to the 7th power (|r| <= ln 2 / 2: truncation below 2^-23
/// relative), 2^n built from its exponent bits in two factors so that every
/// n from -150 to 128 is covered. Results: finite inputs within 2 ulp of
/// the correctly rounded exp (tests/core/test_lanes.cpp measures it), +inf above
/// ln(FLT_MAX), 0 below the smallest subnormal, NaN for NaN.
///
/// tanh(x): for |x| < 0.5 its odd Taylor series to the 15th power (the
/// first term left out is below 2^-25 relative), else 1 - 2 / (e^(2|x|) +
/// 1) with the vector exp, the sign of x copied in: within 3 ulp of the
/// correctly rounded tanh, +-1 for large |x|, NaN for NaN.
///
/// The C library's results on one sample may differ from these by those few
/// ulp, which is one reason a lane batch equals the per-sample batch up to a
/// tolerance and not bit for bit (docs/training.md, "Lane batches").
#ifndef BURTORCH_LANES_FUNCTIONS_HPP
#define BURTORCH_LANES_FUNCTIONS_HPP

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "burtorch/lanes/vector.hpp"

namespace burtorch {
namespace detail {

// Helium (Cortex-M55): GCC 12 turns a compare of float vectors into a
// predicate made from lane 0 alone (wrong code: relu of positive lanes gave
// 0 under QEMU), so there the selects, exp and tanh below run lane by lane;
// the lane loops of detail/lane_math.hpp (no compares) stay vectors.
#if BURTORCH_GENERIC_VECTORS && !defined(__ARM_FEATURE_MVE)
#define BURTORCH_VECTOR_SELECTS 1
#else
#define BURTORCH_VECTOR_SELECTS 0
#endif

#if BURTORCH_VECTOR_SELECTS
/// The bits of an IEEE value with the sign cleared, and of +infinity: a
/// value is NaN exactly where its magnitude's bits exceed infinity's.
template <class S>
struct FloatBits;
template <>
struct FloatBits<float> {
  static constexpr std::int32_t kMagnitude = 0x7FFFFFFF;  ///< all but the sign
  static constexpr std::int32_t kInfinity = 0x7F800000;   ///< +inf
};
template <>
struct FloatBits<double> {
  static constexpr std::int64_t kMagnitude = 0x7FFFFFFFFFFFFFFF;  ///< all but the sign
  static constexpr std::int64_t kInfinity = 0x7FF0000000000000;   ///< +inf
};
/// mask = all ones in the lanes of x that are NaN, zeros elsewhere (the
/// mask a compare of x gives), from the bits: no self-compare. (Out
/// parameter: a vector result would depend on the target's vector ABI.)
template <class S, class V, class M>
inline void nan_mask(const V& x, M& mask) noexcept {
  M bits;
  std::memcpy(&bits, &x, sizeof(bits));  // BT-DEV-010: the lanes' bits
  mask = (bits & FloatBits<S>::kMagnitude) > FloatBits<S>::kInfinity;
}

/// True where the float lanes have vector exp and tanh.
template <std::size_t N>
constexpr bool kVectorFunctions = (N >= 2U);

/// e^x of the N floats of v, in place.
template <std::size_t N>
inline void exp_lanes(float* v) noexcept {
  using V = typename VectorOf<float, N>::Type;
  using I = typename VectorOf<std::int32_t, N>::Type;
  constexpr float kLog2e = 1.44269504088896341F;
  constexpr float kLn2High = 0.693145751953125F;        // ln 2 to 16 bits: n * kLn2High is exact
  constexpr float kLn2Low = 1.428606820309417232e-6F;   // ln 2 - kLn2High
  constexpr float kRound = 12582912.0F;                 // 1.5 * 2^23: adding it rounds to an integer
  constexpr float kHigh = 88.72283935546875F;           // above: +inf
  constexpr float kLow = -104.0F;                       // below: 0
  V x;
  load_vector(x, v);
  const V clamped = (x > kHigh) ? V{} + kHigh : ((x < kLow) ? V{} + kLow : x);
  const V shifted = (clamped * kLog2e) + kRound;
  const V n = shifted - kRound;
  const V r = (clamped - (n * kLn2High)) - (n * kLn2Low);
  // Taylor series of e^r, Horner's scheme.
  V p = (r * (1.0F / 5040.0F)) + (1.0F / 720.0F);
  p = (p * r) + (1.0F / 120.0F);
  p = (p * r) + (1.0F / 24.0F);
  p = (p * r) + (1.0F / 6.0F);
  p = (p * r) + 0.5F;
  p = (p * r) + 1.0F;
  p = (p * r) + 1.0F;
  // 2^n = 2^h * 2^(n - h), h = n / 2 (floor): both exponents in range.
  const I k = __builtin_convertvector(n, I);  // BT-DEV-016
  const I h = k >> 1;
  const I e1 = (h + 127) << 23;
  const I e2 = ((k - h) + 127) << 23;
  V s1;
  V s2;
  std::memcpy(&s1, &e1, sizeof(s1));  // BT-DEV-010: the bits of 2^h
  std::memcpy(&s2, &e2, sizeof(s2));  // BT-DEV-010
  V result = (p * s1) * s2;
  result = (x > kHigh) ? V{} + HUGE_VALF : result;
  I nan;
  nan_mask<float>(x, nan);
  result = nan ? x : result;
  store_vector(v, result);
}

/// tanh of the N floats of v, in place.
template <std::size_t N>
inline void tanh_lanes(float* v) noexcept {
  using V = typename VectorOf<float, N>::Type;
  using I = typename VectorOf<std::int32_t, N>::Type;
  V x;
  load_vector(x, v);
  I bits;
  std::memcpy(&bits, &x, sizeof(bits));  // BT-DEV-010
  const I sign = bits & (-2147483647 - 1);  // the sign bit
  const I magnitude_bits = bits ^ sign;
  V a;
  std::memcpy(&a, &magnitude_bits, sizeof(a));  // BT-DEV-010: |x|
  // Large |x|: 1 - 2 / (e^(2|x|) + 1).
  float e[N];  // BT-DEV-013
  const V twice = a + a;
  store_vector(e, twice);
  exp_lanes<N>(e);
  V ex;
  load_vector(ex, e);
  const V large = 1.0F - (2.0F / (ex + 1.0F));
  // Small |x|: x - x^3/3 + 2x^5/15 - 17x^7/315 + 62x^9/2835 - 1382x^11/155925
  // + 21844x^13/6081075 - 929569x^15/638512875.
  const V z = a * a;
  V q = (z * (-929569.0F / 638512875.0F)) + (21844.0F / 6081075.0F);
  q = (q * z) + (-1382.0F / 155925.0F);
  q = (q * z) + (62.0F / 2835.0F);
  q = (q * z) + (-17.0F / 315.0F);
  q = (q * z) + (2.0F / 15.0F);
  q = (q * z) + (-1.0F / 3.0F);
  const V small = a + ((a * z) * q);
  const V t = (a < 0.5F) ? small : large;
  I t_bits;
  std::memcpy(&t_bits, &t, sizeof(t_bits));  // BT-DEV-010
  t_bits = t_bits | sign;
  V result;
  std::memcpy(&result, &t_bits, sizeof(result));  // BT-DEV-010
  I nan;
  nan_mask<float>(x, nan);
  result = nan ? x : result;
  store_vector(v, result);
}

/// True where the lanes' selects run as vector compares and blends.
template <std::size_t N>
constexpr bool kVectorSelects = (N >= 2U);

/// The selects of ScalarOps (scalar.hpp) on N lanes of S at once, bit for
/// bit what they give lane by lane: out = where(mask, x, y).
/// @{
/// relu: x where x > 0 or x is NaN, else 0 (in place).
template <class S, std::size_t N>
inline void relu_lanes(S* v) noexcept {
  using V = typename VectorOf<S, N>::Type;
  V x;
  load_vector(x, v);
  decltype(x > S(0)) nan;
  nan_mask<S>(x, nan);
  const V r = ((x > S(0)) | nan) ? x : V{};
  store_vector(v, r);
}
/// relu's backward: g where x > 0 or x is NaN, else 0 (g in place).
template <class S, std::size_t N>
inline void relu_grad_lanes(const S* xs, S* gs) noexcept {
  using V = typename VectorOf<S, N>::Type;
  V x;
  V g;
  load_vector(x, xs);
  load_vector(g, gs);
  decltype(x > S(0)) nan;
  nan_mask<S>(x, nan);
  const V r = ((x > S(0)) | nan) ? g : V{};
  store_vector(gs, r);
}
/// a = where(a > b, x, y) over four arrays of N values (out in x).
template <class S, std::size_t N>
inline void select_greater_lanes(const S* as, const S* bs, S* xs, const S* ys) noexcept {
  using V = typename VectorOf<S, N>::Type;
  V a;
  V b;
  V x;
  V y;
  load_vector(a, as);
  load_vector(b, bs);
  load_vector(x, xs);
  load_vector(y, ys);
  const V r = (a > b) ? x : y;
  store_vector(xs, r);
}
/// @}
#else
template <std::size_t N>
constexpr bool kVectorFunctions = false;
template <std::size_t N>
constexpr bool kVectorSelects = false;
template <class S, std::size_t N>
inline void relu_lanes(S* /*v*/) noexcept {}
template <class S, std::size_t N>
inline void relu_grad_lanes(const S* /*xs*/, S* /*gs*/) noexcept {}
template <class S, std::size_t N>
inline void select_greater_lanes(const S* /*as*/, const S* /*bs*/, S* /*xs*/, const S* /*ys*/) noexcept {}
template <std::size_t N>
inline void exp_lanes(float* v) noexcept {
  for (std::size_t i = 0U; i < N; ++i) {
    v[i] = std::exp(v[i]);
  }
}
template <std::size_t N>
inline void tanh_lanes(float* v) noexcept {
  for (std::size_t i = 0U; i < N; ++i) {
    v[i] = std::tanh(v[i]);
  }
}
#endif

}  // namespace detail
}  // namespace burtorch

#endif  // BURTORCH_LANES_FUNCTIONS_HPP
