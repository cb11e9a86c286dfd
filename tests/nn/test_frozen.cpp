// SPDX-License-Identifier: Apache-2.0
// Frozen weights and what backward leaves alone.
//  - FP16 and BF16 decoding of all 65,536 bit patterns against a reference
//    written here from the formats' definitions (ldexp of the significand),
//    and against the compiler's own _Float16 on x86-64; encoding
//    (round to nearest, ties to even) against the exact midpoints between
//    every pair of neighbours, every round trip, and a reference rounding
//    built on floor (round half to even) over random doubles and floats of
//    every binade.
//  - int8 symmetric quantization: scale, ties, zeros, refusal of NaN.
//  - Tape::matvec_frozen in every format, FP32 and FP64 tapes, a view list
//    of two runs, with and without a bias in another format: values and
//    input gradients against a double reference; misuse and capacity limits
//    are refused with nothing recorded.
//  - stop_gradient: gradients above the stop have the bits of a full sweep,
//    nothing below the stop moves, rewind and reset lift it.
//  - the frozen rows are an op linked on use (only a program that calls
//    matvec_frozen carries their backward); a tape that recorded them
//    sweeps them.
#include <burtorch/burtorch.hpp>
#include <burtorch/frozen/ops.hpp>
#include <burtorch/tools/graphviz.hpp>
#include <burtorch/nn/nn.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "harness.hpp"

namespace bt = burtorch;
namespace nn = burtorch::nn;

namespace {

#ifndef BURTORCH_TEST_SMALL_TARGET
#define BURTORCH_TEST_SMALL_TARGET 0
#endif
// Random conversions per format (tiny boards: fewer; every bit pattern and
// midpoint is checked everywhere).
constexpr int kRandomConversions = BURTORCH_TEST_SMALL_TARGET ? 4000 : 200000;

std::uint32_t bits_of(float f) {
  std::uint32_t b = 0U;
  std::memcpy(&b, &f, sizeof(b));
  return b;
}
// Shared tapes: the suite runs in 16 KB of RAM on a Cortex-M0.
bt::FixedTape<double, 96, 64> g_tape64;
bt::FixedTape<double, 96, 64> g_other64;
bt::FixedTape<float, 64, 48> g_tape32;
template <class T>
bt::Tape<T>& shared_tape();
template <>
bt::Tape<double>& shared_tape<double>() {
  return g_tape64;
}
template <>
bt::Tape<float>& shared_tape<float>() {
  return g_tape32;
}

float float_of(std::uint32_t b) {
  float f = 0.0F;
  std::memcpy(&f, &b, sizeof(f));
  return f;
}

// --- references, from the formats' definitions -----------------------------
// binary16: sign, 5 exponent bits (bias 15), 10 fraction bits.
double ref_f16(std::uint16_t h) {
  const double sign = ((h & 0x8000U) != 0U) ? -1.0 : 1.0;
  const int e = (h >> 10) & 0x1F;
  const int m = h & 0x3FF;
  if (e == 31) {
    return (m == 0) ? sign * std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  }
  if (e == 0) {
    return sign * std::ldexp(static_cast<double>(m), -24);
  }
  return sign * std::ldexp(static_cast<double>(1024 + m), e - 25);
}
// bfloat16: sign, 8 exponent bits (bias 127), 7 fraction bits.
double ref_bf16(std::uint16_t b) {
  const double sign = ((b & 0x8000U) != 0U) ? -1.0 : 1.0;
  const int e = (b >> 7) & 0xFF;
  const int m = b & 0x7F;
  if (e == 255) {
    return (m == 0) ? sign * std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  }
  if (e == 0) {
    return sign * std::ldexp(static_cast<double>(m), -133);
  }
  return sign * std::ldexp(static_cast<double>(128 + m), e - 134);
}
// Round half to even of a non-negative value below 2^52, from floor and the
// exact remainder (std::nearbyint's double form does not assemble for the
// Cortex-M55 with GCC 12: "vcvtne.f64.s32").
double round_even(double a) {
  const double q = std::floor(a);
  const double rest = a - q;  // exact: a and q share the binade's unit or finer
  if (rest > 0.5) {
    return q + 1.0;
  }
  if (rest < 0.5) {
    return q;
  }
  return (std::fmod(q, 2.0) == 0.0) ? q : (q + 1.0);  // BT-DEV-004: exact tie and parity tests
}
// Rounding to a format with `frac` fraction bits, exponent range
// [emin, emax]: scale to an integer significand by a power of two (exact)
// and round half to even.
std::uint16_t ref_round(double x, int frac, int emin, int emax, int exp_bits) {
  const std::uint16_t sign = std::signbit(x) ? 0x8000U : 0U;
  const std::uint16_t inf = static_cast<std::uint16_t>(((1U << exp_bits) - 1U) << frac);
  const double a = std::fabs(x);
  if (a < std::ldexp(1.0, emin)) {  // subnormal range: unit 2^(emin - frac)
    const double q = round_even(std::ldexp(a, frac - emin));
    return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(q));  // q == 2^frac: the smallest normal
  }
  int k = 0;
  static_cast<void>(std::frexp(a, &k));  // a = f * 2^k, f in [0.5, 1)
  int e = k - 1;
  if (e > emax) {
    return static_cast<std::uint16_t>(sign | inf);
  }
  double q = round_even(std::ldexp(a, frac - e));  // in [2^frac, 2^(frac+1)]
  if (q == std::ldexp(1.0, frac + 1)) {  // BT-DEV-004: exact carry test
    q = std::ldexp(1.0, frac);
    ++e;
  }
  if (e > emax) {
    return static_cast<std::uint16_t>(sign | inf);
  }
  const unsigned biased = static_cast<unsigned>(e - emin + 1);
  return static_cast<std::uint16_t>(sign | (biased << frac) | (static_cast<unsigned>(q) - (1U << frac)));
}
std::uint16_t ref_round_f16(double x) { return ref_round(x, 10, -14, 15, 5); }
std::uint16_t ref_round_bf16(double x) { return ref_round(x, 7, -126, 127, 8); }

// A random double of a random binade in [2^lo, 2^hi), random sign.
double random_double(nn::Rng& rng, int lo, int hi) {
  const std::uint64_t r = rng.next_u64();
  const double m = 1.0 + (static_cast<double>(r >> 11) * std::ldexp(1.0, -53));  // [1, 2)
  const int e = lo + static_cast<int>(rng.below(static_cast<std::uint32_t>(hi - lo)));
  const double x = std::ldexp(m, e);
  return ((r & 1U) != 0U) ? -x : x;
}

// --- decoding ----------------------------------------------------------------
void f16_decodes_every_pattern(bt_test::Context& t) {
  long wrong = 0;
  long nans = 0;
  for (std::uint32_t h = 0U; h < 65536U; ++h) {
    const std::uint16_t bits = static_cast<std::uint16_t>(h);
    const float f = bt::f16_to_float(bits);
    const double want = ref_f16(bits);
    bool ok = false;
    if (std::isnan(want)) {
      ++nans;
      // NaN: sign and payload kept, quiet bit set.
      const std::uint32_t expect = (static_cast<std::uint32_t>(h & 0x8000U) << 16U) | 0x7FC00000U |
                                   (static_cast<std::uint32_t>(h & 0x3FFU) << 13U);
      ok = std::isnan(f) && (bits_of(f) == expect);
    } else {
      ok = (static_cast<double>(f) == want) && (std::signbit(f) == std::signbit(want));  // BT-DEV-004
    }
#if defined(__FLT16_MANT_DIG__) && defined(__x86_64__)
    // The compiler's own conversion, where it has one: an independent oracle.
    _Float16 native;
    std::memcpy(&native, &bits, sizeof(native));
    const float via = static_cast<float>(native);
    ok = ok && (std::isnan(want) ? std::isnan(via) : (bits_of(via) == bits_of(f)));
#endif
    wrong += ok ? 0 : 1;
  }
  BT_CHECK(t, wrong == 0);
  BT_CHECK(t, nans == 2046);  // 2 signs x 1023 non-zero payloads
  // Known patterns.
  BT_CHECK(t, bt::f16_to_float(0x3C00U) == 1.0F);             // BT-DEV-004
  BT_CHECK(t, bt::f16_to_float(0x7BFFU) == 65504.0F);         // BT-DEV-004: largest finite
  BT_CHECK(t, bt::f16_to_float(0x0400U) == std::ldexp(1.0F, -14));  // BT-DEV-004: smallest normal
  BT_CHECK(t, bt::f16_to_float(0x0001U) == std::ldexp(1.0F, -24));  // BT-DEV-004: smallest subnormal
  BT_CHECK(t, bt::f16_to_float(0x03FFU) == (1023.0F * std::ldexp(1.0F, -24)));  // BT-DEV-004
  BT_CHECK(t, bt::f16_to_float(0xC000U) == -2.0F);  // BT-DEV-004
  BT_CHECK(t, bits_of(bt::f16_to_float(0x8000U)) == 0x80000000U);
  BT_CHECK(t, bits_of(bt::f16_to_float(0x7C00U)) == 0x7F800000U);
  BT_CHECK(t, bits_of(bt::f16_to_float(0xFC00U)) == 0xFF800000U);
  BT_CHECK(t, bits_of(bt::f16_to_float(0x7C01U)) == 0x7FC02000U);  // signalling NaN, quieted
  BT_CHECK(t, bits_of(bt::f16_to_float(0x3555U)) == 0x3EAAA000U);  // 0.333251953125
}

void bf16_decodes_every_pattern(bt_test::Context& t) {
  long wrong = 0;
  for (std::uint32_t b = 0U; b < 65536U; ++b) {
    const std::uint16_t bits = static_cast<std::uint16_t>(b);
    const float f = bt::bf16_to_float(bits);
    const double want = ref_bf16(bits);
    const bool ok = std::isnan(want) ? (std::isnan(f) && (bits_of(f) == (b << 16U)))
                                     : ((static_cast<double>(f) == want) && (std::signbit(f) == std::signbit(want)));  // BT-DEV-004
    wrong += ok ? 0 : 1;
  }
  BT_CHECK(t, wrong == 0);
  BT_CHECK(t, bt::bf16_to_float(0x3F80U) == 1.0F);  // BT-DEV-004
  BT_CHECK(t, bt::bf16_to_float(0x0001U) == std::ldexp(1.0F, -133));  // BT-DEV-004: smallest subnormal
  BT_CHECK(t, bt::bf16_to_float(0x7F7FU) == float_of(0x7F7F0000U));   // BT-DEV-004: largest finite
  BT_CHECK(t, bits_of(bt::bf16_to_float(0xFF80U)) == 0xFF800000U);
}

// --- encoding ----------------------------------------------------------------
// Every finite pattern survives float -> pattern; NaNs come back quiet.
void encodings_round_trip(bt_test::Context& t) {
  long wrong16 = 0;
  long wrongb = 0;
  for (std::uint32_t h = 0U; h < 65536U; ++h) {
    const std::uint16_t bits = static_cast<std::uint16_t>(h);
    const bool nan16 = ((h & 0x7C00U) == 0x7C00U) && ((h & 0x3FFU) != 0U);
    const std::uint16_t back16 = bt::f16_from_float(bt::f16_to_float(bits));
    wrong16 += (back16 == (nan16 ? (bits | 0x0200U) : bits)) ? 0 : 1;
    const bool nanb = ((h & 0x7F80U) == 0x7F80U) && ((h & 0x7FU) != 0U);
    const std::uint16_t backb = bt::bf16_from_float(bt::bf16_to_float(bits));
    wrongb += (backb == (nanb ? (bits | 0x0040U) : bits)) ? 0 : 1;
  }
  BT_CHECK(t, wrong16 == 0);
  BT_CHECK(t, wrongb == 0);
}

// Between neighbours h and h + 1 the exact midpoint rounds to the even one,
// and the doubles just beside it to the nearer one. Both signs.
template <class Decode, class Encode>
long midpoint_errors(std::uint32_t last_finite, Decode decode, Encode encode) {
  long wrong = 0;
  for (std::uint32_t h = 0U; h < last_finite; ++h) {
    for (std::uint32_t sign = 0U; sign <= 0x8000U; sign += 0x8000U) {
      const std::uint16_t lo = static_cast<std::uint16_t>(h | sign);
      const std::uint16_t hi = static_cast<std::uint16_t>((h + 1U) | sign);
      const double mid = (decode(lo) + decode(hi)) / 2.0;
      const std::uint16_t even = ((h & 1U) == 0U) ? lo : hi;
      const double toward_lo = std::nextafter(mid, decode(lo));
      const double toward_hi = std::nextafter(mid, decode(hi));
      wrong += (encode(mid) == even) ? 0 : 1;
      wrong += (encode(toward_lo) == lo) ? 0 : 1;
      wrong += (encode(toward_hi) == hi) ? 0 : 1;
      // A float midpoint (every midpoint is one) through the float entry.
      wrong += (encode(static_cast<double>(static_cast<float>(mid))) == even) ? 0 : 1;
    }
  }
  return wrong;
}

void f16_rounds_to_nearest_even(bt_test::Context& t) {
  BT_CHECK(t, midpoint_errors(0x7BFFU, ref_f16, bt::f16_from_double) == 0);
  // Overflow: 65520 (halfway to 2^16) is inf, just below it 65504.
  BT_CHECK(t, bt::f16_from_double(65519.99) == 0x7BFFU);
  BT_CHECK(t, bt::f16_from_double(65520.0) == 0x7C00U);
  BT_CHECK(t, bt::f16_from_double(-1e300) == 0xFC00U);
  BT_CHECK(t, bt::f16_from_float(std::numeric_limits<float>::infinity()) == 0x7C00U);
  // Underflow: half the smallest subnormal is a tie to 0; above it, 1 unit.
  BT_CHECK(t, bt::f16_from_double(std::ldexp(1.0, -25)) == 0x0000U);
  BT_CHECK(t, bt::f16_from_double(std::nextafter(std::ldexp(1.0, -25), 1.0)) == 0x0001U);
  BT_CHECK(t, bt::f16_from_double(-std::ldexp(1.0, -26)) == 0x8000U);
  BT_CHECK(t, bt::f16_from_double(std::ldexp(3.0, -26)) == 0x0001U);  // 0.75 units
  BT_CHECK(t, bt::f16_from_double(std::ldexp(1.5, -24)) == 0x0002U);  // tie 1.5 -> 2
  BT_CHECK(t, bt::f16_from_double(std::ldexp(2.5, -24)) == 0x0002U);  // tie 2.5 -> 2
  BT_CHECK(t, bt::f16_from_double(std::nextafter(std::ldexp(1.0, -14), 0.0)) == 0x0400U);  // rounds up to normal
  BT_CHECK(t, bt::f16_from_double(5e-324) == 0x0000U);  // a double subnormal
  BT_CHECK(t, bt::f16_from_double(1.0 / 3.0) == 0x3555U);
  BT_CHECK(t, bt::f16_from_double(-0.0) == 0x8000U);
  // NaN: quiet, sign kept.
  const std::uint16_t nan = bt::f16_from_double(-std::numeric_limits<double>::quiet_NaN());
  BT_CHECK(t, ((nan & 0xFE00U) == 0xFE00U));
  BT_CHECK(t, bt::f16_from_float(float_of(0x7F800001U)) == 0x7E00U);  // signalling float NaN: quiet, top payload 0
  // Random doubles and floats of every binade from far below the smallest
  // subnormal to past the overflow, against the reference rounding.
  nn::Rng rng(16U);
  long wrong = 0;
  for (int i = 0; i < kRandomConversions; ++i) {
    const double x = random_double(rng, -30, 18);
    wrong += (bt::f16_from_double(x) == ref_round_f16(x)) ? 0 : 1;
    const float f = static_cast<float>(random_double(rng, -30, 18));
    wrong += (bt::f16_from_float(f) == ref_round_f16(static_cast<double>(f))) ? 0 : 1;
#if defined(__FLT16_MANT_DIG__) && defined(__x86_64__)
    const _Float16 native = static_cast<_Float16>(f);
    std::uint16_t native_bits = 0U;
    std::memcpy(&native_bits, &native, sizeof(native_bits));
    wrong += (bt::f16_from_float(f) == native_bits) ? 0 : 1;
#endif
  }
  BT_CHECK(t, wrong == 0);
}

void bf16_rounds_to_nearest_even(bt_test::Context& t) {
  BT_CHECK(t, midpoint_errors(0x7F7FU, ref_bf16, bt::bf16_from_double) == 0);
  const double largest = static_cast<double>(float_of(0x7F7F0000U));
  const double halfway = largest + std::ldexp(1.0, 127 - 8);  // half a unit above the largest
  BT_CHECK(t, bt::bf16_from_double(std::nextafter(halfway, 0.0)) == 0x7F7FU);
  BT_CHECK(t, bt::bf16_from_double(halfway) == 0x7F80U);
  BT_CHECK(t, bt::bf16_from_float(std::numeric_limits<float>::max()) == 0x7F80U);
  BT_CHECK(t, bt::bf16_from_double(std::ldexp(1.0, -134)) == 0x0000U);  // tie to 0
  BT_CHECK(t, bt::bf16_from_double(std::ldexp(1.5, -133)) == 0x0002U);  // tie to even
  BT_CHECK(t, bt::bf16_from_float(1.0F) == 0x3F80U);
  BT_CHECK(t, bt::bf16_from_float(float_of(0x3F808000U)) == 0x3F80U);  // tie, even below
  BT_CHECK(t, bt::bf16_from_float(float_of(0x3F818000U)) == 0x3F82U);  // tie, even above
  BT_CHECK(t, bt::bf16_from_float(float_of(0x3F808001U)) == 0x3F81U);
  BT_CHECK(t, bt::bf16_from_float(float_of(0xFF800001U)) == 0xFFC0U);  // signalling NaN: quiet, sign kept
  nn::Rng rng(17U);
  long wrong = 0;
  for (int i = 0; i < kRandomConversions; ++i) {
    const double x = random_double(rng, -140, 129);
    wrong += (bt::bf16_from_double(x) == ref_round_bf16(x)) ? 0 : 1;
    const float f = static_cast<float>(random_double(rng, -126, 127));
    wrong += (bt::bf16_from_float(f) == ref_round_bf16(static_cast<double>(f))) ? 0 : 1;
  }
  BT_CHECK(t, wrong == 0);
}

// --- int8 --------------------------------------------------------------------
void int8_quantization(bt_test::Context& t) {
  // max |w| = 127: scale exactly 1, so the ties are exact.
  const double w[8] = {2.5, 3.5, -2.5, 127.0, -127.0, 0.49, -0.5, 126.5};
  std::int8_t q[8] = {};
  float scale = 0.0F;
  BT_CHECK(t, bt::quantize_i8(w, 8U, q, &scale) == bt::Status::kOk);
  BT_CHECK(t, scale == 1.0F);  // BT-DEV-004
  const std::int8_t want[8] = {2, 4, -2, 127, -127, 0, 0, 126};
  BT_CHECK(t, std::memcmp(q, want, sizeof(q)) == 0);
  // A general tensor: every dequantized weight within half a step.
  nn::Rng rng(8U);
  float v[64];
  for (float& x : v) {
    x = static_cast<float>(rng.uniform(-0.8, 0.3));
  }
  std::int8_t qv[64];
  BT_CHECK(t, bt::quantize_i8(v, 64U, qv, &scale) == bt::Status::kOk);
  double top = 0.0;
  for (float x : v) {
    top = std::fmax(top, std::fabs(static_cast<double>(x)));
  }
  BT_CHECK(t, scale == static_cast<float>(top / 127.0));  // BT-DEV-004
  bool within = true;
  bool reaches = false;
  for (std::size_t i = 0U; i < 64U; ++i) {
    const double back = static_cast<double>(scale * static_cast<float>(qv[i]));
    within = within && (std::fabs(back - static_cast<double>(v[i])) <= (0.50001 * static_cast<double>(scale)));
    reaches = reaches || (qv[i] == -127);  // the largest magnitude
  }
  BT_CHECK(t, within);
  BT_CHECK(t, reaches);  // the largest magnitude (negative here) maps to -127
  // All zeros: scale 1, q 0.
  const float zeros[3] = {0.0F, -0.0F, 0.0F};
  std::int8_t qz[3] = {5, 5, 5};
  BT_CHECK(t, bt::quantize_i8(zeros, 3U, qz, &scale) == bt::Status::kOk);
  BT_CHECK(t, (scale == 1.0F) && (qz[0] == 0) && (qz[1] == 0) && (qz[2] == 0));  // BT-DEV-004
  // Refused, nothing written: a NaN or an infinity, null pointers, n == 0.
  const float bad[3] = {1.0F, std::numeric_limits<float>::quiet_NaN(), 2.0F};
  std::int8_t qb[3] = {9, 9, 9};
  float sb = 7.0F;
  BT_CHECK(t, bt::quantize_i8(bad, 3U, qb, &sb) == bt::Status::kInvalidArgument);
  const float inf[1] = {std::numeric_limits<float>::infinity()};
  BT_CHECK(t, bt::quantize_i8(inf, 1U, qb, &sb) == bt::Status::kInvalidArgument);
  BT_CHECK(t, (qb[0] == 9) && (qb[1] == 9) && (qb[2] == 9) && (sb == 7.0F));  // BT-DEV-004
  BT_CHECK(t, bt::quantize_i8(static_cast<const float*>(nullptr), 3U, qb, &sb) == bt::Status::kInvalidArgument);
  BT_CHECK(t, bt::quantize_i8(zeros, 0U, qb, &sb) == bt::Status::kInvalidArgument);
  BT_CHECK(t, bt::quantize_i8(zeros, 3U, qb, nullptr) == bt::Status::kInvalidArgument);
  std::uint16_t out16[1] = {};
  BT_CHECK(t, bt::quantize_f16(static_cast<const float*>(nullptr), 1U, out16) == bt::Status::kInvalidArgument);
  BT_CHECK(t, bt::quantize_bf16(zeros, 1U, static_cast<std::uint16_t*>(nullptr)) == bt::Status::kInvalidArgument);
  BT_CHECK(t, bt::quantize_f16(zeros, 0U, static_cast<std::uint16_t*>(nullptr)) == bt::Status::kOk);
}

// --- matvec_frozen -------------------------------------------------------------
constexpr bt::Index kRows = 5U;
constexpr bt::Index kCols = 37U;  // runs of 3 and 34: the kernels' blocks and tails
constexpr bt::Index kRun0 = 3U;

// One weight matrix and bias in every format, from the same floats.
struct Weights {
  float w32[kRows * kCols];
  std::uint16_t w16[kRows * kCols];
  std::uint16_t wb16[kRows * kCols];
  std::int8_t w8[kRows * kCols];
  float w8_scale;
  float b32[kRows];
  std::uint16_t b16[kRows];
  std::int8_t b8[kRows];
  float b8_scale;
};
Weights g_w;

void make_weights(nn::Rng& rng) {
  for (float& x : g_w.w32) {
    x = static_cast<float>(rng.uniform(-1.5, 1.5));
  }
  g_w.w32[7] = 7.0e-6F;  // an FP16 subnormal
  for (float& x : g_w.b32) {
    x = static_cast<float>(rng.uniform(-0.5, 0.5));
  }
  static_cast<void>(bt::quantize_f16(g_w.w32, kRows * kCols, g_w.w16));
  static_cast<void>(bt::quantize_bf16(g_w.w32, kRows * kCols, g_w.wb16));
  static_cast<void>(bt::quantize_i8(g_w.w32, kRows * kCols, g_w.w8, &g_w.w8_scale));
  static_cast<void>(bt::quantize_f16(g_w.b32, kRows, g_w.b16));
  static_cast<void>(bt::quantize_i8(g_w.b32, kRows, g_w.b8, &g_w.b8_scale));
}

constexpr bt::WeightFormat kFormats[4] = {bt::WeightFormat::kF32, bt::WeightFormat::kF16, bt::WeightFormat::kBF16,
                                          bt::WeightFormat::kI8};

bt::FrozenArray weights_in(bt::WeightFormat f) {
  switch (f) {
    case bt::WeightFormat::kF16:
      return bt::frozen_f16(g_w.w16);
    case bt::WeightFormat::kBF16:
      return bt::frozen_bf16(g_w.wb16);
    case bt::WeightFormat::kI8:
      return bt::frozen_i8(g_w.w8, g_w.w8_scale);
    default:
      return bt::frozen_f32(g_w.w32);
  }
}
// The weight the format defines, computed here from the stored pattern.
double ref_weight(bt::WeightFormat f, std::size_t k) {
  switch (f) {
    case bt::WeightFormat::kF16:
      return ref_f16(g_w.w16[k]);
    case bt::WeightFormat::kBF16:
      return ref_bf16(g_w.wb16[k]);
    case bt::WeightFormat::kI8:
      return static_cast<double>(g_w.w8_scale * static_cast<float>(g_w.w8[k]));  // one float rounding
    default:
      return static_cast<double>(g_w.w32[k]);
  }
}
// Biases: FP32, FP16 or int8 (by the weights' format, so each meets another).
bt::FrozenVector bias_for(bt::WeightFormat f) {
  if (f == bt::WeightFormat::kF32) {
    return bt::FrozenVector{bt::frozen_f16(g_w.b16), kRows};
  }
  if (f == bt::WeightFormat::kI8) {
    return bt::FrozenVector{bt::frozen_f32(g_w.b32), kRows};
  }
  return bt::FrozenVector{bt::frozen_i8(g_w.b8, g_w.b8_scale), kRows};
}
double ref_bias(bt::WeightFormat f, std::size_t o) {
  if (f == bt::WeightFormat::kF32) {
    return ref_f16(g_w.b16[o]);
  }
  if (f == bt::WeightFormat::kI8) {
    return static_cast<double>(g_w.b32[o]);
  }
  return static_cast<double>(g_w.b8_scale * static_cast<float>(g_w.b8[o]));
}

template <class T>
void check_matvec_frozen(bt_test::Context& t, const char* name, double tol) {
  bt::Tape<T>& tape = shared_tape<T>();
  nn::Rng rng(3U);
  double x[kCols];
  for (double& v : x) {
    v = rng.uniform(-2.0, 2.0);
  }
  const double c[kRows] = {0.5, -1.25, 2.0, 0.75, -0.3};
  for (bt::WeightFormat f : kFormats) {
    for (int with_bias = 0; with_bias < 2; ++with_bias) {
      t.test_name = name;
      tape.reset();
      // x as two runs with a leaf between them: a view list of two runs.
      const bt::View run0 = bt::record_view(tape, kRun0, [&](bt::Index k) noexcept { return tape.leaf(static_cast<T>(x[k])); });
      const bt::Value<T> spacer = tape.leaf(T(9));
      const bt::View run1 = bt::record_view(tape, kCols - kRun0, [&](bt::Index k) noexcept {
        return tape.leaf(static_cast<T>(x[kRun0 + k]));
      });
      const bt::View parts[2] = {run0, run1};
      const bt::ViewList list = bt::view_list(tape, parts, 2U);
      const bt::FrozenMatrix m{weights_in(f), kRows, kCols};
      const bt::FrozenVector b = bias_for(f);
      const std::size_t slots_before = tape.usage().slots;
      const bt::View y = bt::matvec_frozen(tape, m, list, (with_bias != 0) ? &b : nullptr);
      BT_CHECK(t, (y.count == kRows) && (tape.status() == bt::Status::kOk));
      BT_CHECK(t, tape.usage().slots == (slots_before + bt::kFrozenSlots));
      const bt::View terms = bt::record_view(tape, kRows, [&](bt::Index o) noexcept {
        return bt::Value<T>(&tape, y.first + o) * static_cast<T>(c[o]);
      });
      const bt::Value<T> loss = bt::reduce(tape, bt::Op::kSumR, bt::View{terms.first, terms.count});
      BT_CHECK(t, tape.backward(loss) == bt::Status::kOk);
      for (bt::Index o = 0U; o < kRows; ++o) {
        double want = (with_bias != 0) ? ref_bias(f, o) : 0.0;
        double size = std::fabs(want);
        for (bt::Index k = 0U; k < kCols; ++k) {
          want += ref_weight(f, (o * kCols) + k) * static_cast<double>(static_cast<T>(x[k]));
          size += std::fabs(ref_weight(f, (o * kCols) + k) * x[k]);
        }
        BT_CHECK(t, bt::node_op(tape, y.first + o) == bt::FrozenOps::op<bt::rows::MatRowFrozen>());
        BT_CHECK(t, bt::node_operands(tape, y.first + o).b == o);
        BT_CHECK_CLOSE(t, static_cast<double>(tape.value(y.first + o)), want, 0.0, tol * size);
      }
      for (bt::Index k = 0U; k < kCols; ++k) {
        double want = 0.0;
        double size = 0.0;
        for (bt::Index o = 0U; o < kRows; ++o) {
          want += c[o] * ref_weight(f, (o * kCols) + k);
          size += std::fabs(c[o] * ref_weight(f, (o * kCols) + k));
        }
        const bt::Index node = (k < kRun0) ? (run0.first + k) : (run1.first + (k - kRun0));
        BT_CHECK_CLOSE(t, static_cast<double>(tape.grad(node)), want, 0.0, tol * size);
      }
      BT_CHECK(t, spacer.grad() == T(0));  // BT-DEV-004: not an operand
      // The tape holds no weight: nodes are the inputs, the spacer, the
      // rows, the products and the sum.
      BT_CHECK(t, tape.size() == (kCols + 1U + kRows + kRows + 1U));
    }
  }
}

void matvec_frozen_fp64(bt_test::Context& t) {
  nn::Rng rng(1U);
  make_weights(rng);
  check_matvec_frozen<double>(t, "matvec_frozen_fp64", 1e-14);
  // Bit patterns as an outsider would write them (all FP16 subnormals).
  static const std::uint16_t kSub[4] = {0x0001U, 0x03FFU, 0x8200U, 0x7BFFU};
  bt::Tape<double>& tape = g_tape64;
  tape.reset();
  const bt::View x = bt::record_view(tape, 4U, [&](bt::Index k) noexcept { return tape.leaf(static_cast<double>(k + 1U)); });
  const bt::View y = bt::matvec_frozen(tape, bt::FrozenMatrix{bt::frozen_f16(kSub), 1U, 4U}, bt::view_list(tape, &x, 1U), nullptr);
  BT_CHECK(t, y.count == 1U);
  const double want = (std::ldexp(1.0, -24) * 1.0) + (std::ldexp(1023.0, -24) * 2.0) - (std::ldexp(512.0, -24) * 3.0) +
                      (65504.0 * 4.0);
  BT_CHECK(t, tape.value(y.first) == want);  // BT-DEV-004: every term and sum exact in double
}

void matvec_frozen_fp32(bt_test::Context& t) {
  nn::Rng rng(1U);
  make_weights(rng);
  // Bound of a float sum of 37 terms: 37 roundings of 2^-24 of the terms'
  // magnitudes (the reference is exact to 1e-16).
  check_matvec_frozen<float>(t, "matvec_frozen_fp32", 37.0 * std::ldexp(1.0, -24));
}

// Misuse: each refused with kInvalidArgument (or kCapacityExceeded for a
// tape too small), nothing recorded, no slot taken.
template <class Call>
void expect_refused(bt_test::Context& t, bt::Status want, Call call) {
  bt::Tape<float>& tape = g_tape32;
  tape.reset();
  const bt::View x = bt::record_view(tape, 3U, [&](bt::Index k) noexcept { return tape.leaf(static_cast<float>(k)); });
  const bt::ViewList list = bt::view_list(tape, &x, 1U);
  const std::size_t nodes = tape.size();
  const std::size_t slots = tape.usage().slots;
  const bt::View y = call(tape, list);
  BT_CHECK(t, (y.first == bt::kNoIndex) && (y.count == 0U));
  BT_CHECK(t, tape.status() == want);
  BT_CHECK(t, (tape.size() == nodes) && (tape.usage().slots == slots));
}

void matvec_frozen_misuse(bt_test::Context& t) {
  static const float w[6] = {1.0F, 2.0F, 3.0F, 4.0F, 5.0F, 6.0F};
  static const std::int8_t q[6] = {1, 2, 3, 4, 5, 6};
  static const float b[2] = {0.5F, 0.25F};
  using TapeF = bt::Tape<float>;
  constexpr bt::Status kBad = bt::Status::kInvalidArgument;
  const bt::FrozenMatrix good{bt::frozen_f32(w), 2U, 3U};
  t.test_name = "misuse: null data";
  expect_refused(t, kBad, [](TapeF& tape, bt::ViewList x) { return bt::matvec_frozen(tape, bt::FrozenMatrix{bt::frozen_f16(nullptr), 2U, 3U}, x, nullptr); });
  expect_refused(t, kBad, [](TapeF& tape, bt::ViewList x) { return bt::matvec_frozen(tape, bt::FrozenMatrix{bt::FrozenArray{}, 2U, 3U}, x, nullptr); });
  t.test_name = "misuse: zero rows or columns";
  expect_refused(t, kBad, [](TapeF& tape, bt::ViewList x) { return bt::matvec_frozen(tape, bt::FrozenMatrix{bt::frozen_f32(w), 0U, 3U}, x, nullptr); });
  expect_refused(t, kBad, [](TapeF& tape, bt::ViewList x) { return bt::matvec_frozen(tape, bt::FrozenMatrix{bt::frozen_f32(w), 2U, 0U}, x, nullptr); });
  t.test_name = "misuse: width";
  expect_refused(t, kBad, [](TapeF& tape, bt::ViewList x) { return bt::matvec_frozen(tape, bt::FrozenMatrix{bt::frozen_f32(w), 3U, 2U}, x, nullptr); });
  expect_refused(t, kBad, [](TapeF& tape, bt::ViewList x) { return bt::matvec_frozen(tape, bt::FrozenMatrix{bt::frozen_f32(w), 1U, 4U}, x, nullptr); });
  t.test_name = "misuse: rows * cols past an Index";
  expect_refused(t, kBad, [](TapeF& tape, bt::ViewList x) { return bt::matvec_frozen(tape, bt::FrozenMatrix{bt::frozen_f32(w), 0x60000000U, 3U}, x, nullptr); });
  t.test_name = "misuse: unknown format";
  expect_refused(t, kBad, [](TapeF& tape, bt::ViewList x) {
    bt::FrozenArray a = bt::frozen_f32(w);
    a.format = static_cast<bt::WeightFormat>(7U);
    return bt::matvec_frozen(tape, bt::FrozenMatrix{a, 2U, 3U}, x, nullptr);
  });
  expect_refused(t, kBad, [](TapeF& tape, bt::ViewList x) {
    bt::FrozenArray a = bt::frozen_f32(w);
    a.format = bt::WeightFormat::kF16;  // its pointer (bits16) is null
    return bt::matvec_frozen(tape, bt::FrozenMatrix{a, 2U, 3U}, x, nullptr);
  });
  t.test_name = "misuse: int8 scale not finite";
  expect_refused(t, kBad, [](TapeF& tape, bt::ViewList x) {
    return bt::matvec_frozen(tape, bt::FrozenMatrix{bt::frozen_i8(q, std::numeric_limits<float>::infinity()), 2U, 3U}, x, nullptr);
  });
  expect_refused(t, kBad, [](TapeF& tape, bt::ViewList x) {
    return bt::matvec_frozen(tape, bt::FrozenMatrix{bt::frozen_i8(q, std::numeric_limits<float>::quiet_NaN()), 2U, 3U}, x, nullptr);
  });
  t.test_name = "misuse: bias";
  expect_refused(t, kBad, [&good](TapeF& tape, bt::ViewList x) {
    const bt::FrozenVector bias{bt::frozen_f32(b), 1U};  // 1 != 2 rows
    return bt::matvec_frozen(tape, good, x, &bias);
  });
  expect_refused(t, kBad, [&good](TapeF& tape, bt::ViewList x) {
    const bt::FrozenVector bias{bt::frozen_bf16(nullptr), 2U};
    return bt::matvec_frozen(tape, good, x, &bias);
  });
  t.test_name = "misuse: view list";
  expect_refused(t, kBad, [&good](TapeF& tape, bt::ViewList /*x*/) { return bt::matvec_frozen(tape, good, bt::ViewList{}, nullptr); });
  t.test_name = "misuse: the same call, well formed, records";
  bt::Tape<float>& tape = g_tape32;
  tape.reset();
  const bt::View x = bt::record_view(tape, 3U, [&](bt::Index k) noexcept { return tape.leaf(static_cast<float>(k)); });
  const bt::FrozenVector bias{bt::frozen_f32(b), 2U};
  const bt::View y = bt::matvec_frozen(tape, good, bt::view_list(tape, &x, 1U), &bias);
  // 0*1 + 1*2 + 2*3 + 0.5 = 8.5, 0*4 + 1*5 + 2*6 + 0.25 = 17.25.
  BT_CHECK(t, (y.count == 2U) && (tape.status() == bt::Status::kOk));
  BT_CHECK(t, (tape.value(y.first) == 8.5F) && (tape.value(y.first + 1U) == 17.25F));  // BT-DEV-004
}

// A tape one node or one slot short: kCapacityExceeded, nothing recorded.
void matvec_frozen_capacity(bt_test::Context& t) {
  static const float w[6] = {1.0F, 2.0F, 3.0F, 4.0F, 5.0F, 6.0F};
  const bt::FrozenMatrix m{bt::frozen_f32(w), 2U, 3U};
  constexpr std::size_t kListSlots = 3U;
  constexpr std::size_t kSlots = kListSlots + bt::kFrozenSlots;
  {
    static bt::FixedTape<float, 5, kSlots> exact;
    const bt::View x = bt::record_view(exact, 3U, [&](bt::Index k) noexcept { return exact.leaf(static_cast<float>(k)); });
    BT_CHECK(t, bt::matvec_frozen(exact, m, bt::view_list(exact, &x, 1U), nullptr).count == 2U);
    BT_CHECK(t, (exact.status() == bt::Status::kOk) && (exact.usage().slots == kSlots));
  }
  {
    static bt::FixedTape<float, 4, kSlots> short_nodes;
    const bt::View x = bt::record_view(short_nodes, 3U, [&](bt::Index k) noexcept { return short_nodes.leaf(static_cast<float>(k)); });
    const bt::ViewList list = bt::view_list(short_nodes, &x, 1U);
    BT_CHECK(t, bt::matvec_frozen(short_nodes, m, list, nullptr).count == 0U);
    BT_CHECK(t, short_nodes.status() == bt::Status::kCapacityExceeded);
    BT_CHECK(t, (short_nodes.size() == 3U) && (short_nodes.usage().slots == kListSlots));
  }
  {
    static bt::FixedTape<float, 5, kSlots - 1U> short_slots;
    const bt::View x = bt::record_view(short_slots, 3U, [&](bt::Index k) noexcept { return short_slots.leaf(static_cast<float>(k)); });
    const bt::ViewList list = bt::view_list(short_slots, &x, 1U);
    BT_CHECK(t, bt::matvec_frozen(short_slots, m, list, nullptr).count == 0U);
    BT_CHECK(t, short_slots.status() == bt::Status::kCapacityExceeded);
    BT_CHECK(t, (short_slots.size() == 3U) && (short_slots.usage().slots == kListSlots));
  }
}

// Descriptions in flash: arrays and layers are constant expressions, so a
// firmware's backbone is read-only data end to end.
constexpr std::int8_t kFlashW[2 * 3] = {1, -2, 3, 4, 0, -1};
constexpr std::uint16_t kFlashB[2] = {0x3800U, 0xBC00U};  // FP16 0.5, -1
constexpr nn::FrozenLinear<double> kFlashLayer{
    {bt::frozen_i8(kFlashW, 0.25F), 2U, 3U}, {bt::frozen_f16(kFlashB), 2U}, nn::Activation::kRelu};
static_assert(kFlashLayer.in() == 3U && kFlashLayer.out() == 2U, "a constant expression");
static_assert(nn::FrozenLinear<double>::nodes(2U, nn::Activation::kRelu) == 4U, "rows and activations");
static_assert(nn::FrozenLinear<float>::view_slots() == (3U + bt::kFrozenSlots), "list + descriptor");

void frozen_linear_from_flash(bt_test::Context& t) {
  bt::Tape<double>& tape = g_tape64;
  tape.reset();
  const bt::View x = bt::record_view(tape, 3U, [&](bt::Index k) noexcept { return tape.leaf(static_cast<double>(k) + 1.0); });
  const bt::View y = kFlashLayer.forward(tape, x);
  BT_CHECK(t, (y.count == 2U) && (tape.status() == bt::Status::kOk));
  // Row 0: 0.25 * (1 - 4 + 9) + 0.5 = 2; row 1: 0.25 * (4 + 0 - 3) - 1 = -0.75, relu 0.
  BT_CHECK(t, (tape.value(y.first) == 2.0) && (tape.value(y.first + 1U) == 0.0));  // BT-DEV-004
  const bt::Value<double> loss = bt::Value<double>(&tape, y.first) + bt::Value<double>(&tape, y.first + 1U);
  BT_CHECK(t, tape.backward(loss) == bt::Status::kOk);
  // Only row 0 passes a gradient (row 1's relu is off): 0.25 * (1, -2, 3).
  BT_CHECK(t, (tape.grad(x.first) == 0.25) && (tape.grad(x.first + 1U) == -0.5) && (tape.grad(x.first + 2U) == 0.75));  // BT-DEV-004
  // A layer given an input of another width: refused, nothing recorded.
  const std::size_t nodes = tape.size();
  BT_CHECK(t, kFlashLayer.forward(tape, bt::View{x.first, 2U}).count == 0U);
  BT_CHECK(t, (tape.status() == bt::Status::kInvalidArgument) && (tape.size() == nodes));
}

// forward<A>: the activation chosen at compile time records what forward()
// records (the same values and gradients); a layer whose act is not A is
// refused with nothing recorded; tanh rows are std::tanh of the rows.
void frozen_linear_compile_time_activation(bt_test::Context& t) {
  bt::Tape<double>& tape = g_tape64;
  tape.reset();
  const bt::View x = bt::record_view(tape, 3U, [&](bt::Index k) noexcept { return tape.leaf(static_cast<double>(k) + 1.0); });
  const bt::View y = kFlashLayer.forward<nn::Activation::kRelu>(tape, x);
  BT_CHECK(t, (y.count == 2U) && (tape.status() == bt::Status::kOk));
  BT_CHECK(t, (tape.value(y.first) == 2.0) && (tape.value(y.first + 1U) == 0.0));  // BT-DEV-004
  const bt::Value<double> loss = bt::Value<double>(&tape, y.first) + bt::Value<double>(&tape, y.first + 1U);
  BT_CHECK(t, tape.backward(loss) == bt::Status::kOk);
  BT_CHECK(t, (tape.grad(x.first) == 0.25) && (tape.grad(x.first + 1U) == -0.5) && (tape.grad(x.first + 2U) == 0.75));  // BT-DEV-004
  const std::size_t nodes = tape.size();
  const std::size_t slots = tape.usage().slots;
  BT_CHECK(t, kFlashLayer.forward<nn::Activation::kTanh>(tape, x).count == 0U);
  BT_CHECK(t, (tape.status() == bt::Status::kInvalidArgument) && (tape.size() == nodes) &&
                  (tape.usage().slots == slots));
  // The same weights with tanh: the rows 2 and -0.75 (as above), through std::tanh.
  tape.reset();
  const nn::FrozenLinear<double> tanh_layer{kFlashLayer.weight, kFlashLayer.bias, nn::Activation::kTanh};
  const bt::View x2 = bt::record_view(tape, 3U, [&](bt::Index k) noexcept { return tape.leaf(static_cast<double>(k) + 1.0); });
  const bt::View h = tanh_layer.forward<nn::Activation::kTanh>(tape, x2);
  BT_CHECK(t, (h.count == 2U) && (tape.status() == bt::Status::kOk));
  BT_CHECK(t, (std::fabs(tape.value(h.first) - std::tanh(2.0)) < 1e-15) &&
                  (std::fabs(tape.value(h.first + 1U) - std::tanh(-0.75)) < 1e-15));
}

// The Graphviz export draws the rows with edges from the input only.
void matvec_frozen_graphviz(bt_test::Context& t) {
  static const std::int8_t q[2] = {3, -1};
  bt::Tape<double>& tape = g_tape64;
  tape.reset();
  const bt::View x = bt::record_view(tape, 2U, [&](bt::Index k) noexcept { return tape.leaf(static_cast<double>(k) + 1.0); });
  const bt::View y = bt::matvec_frozen(tape, bt::FrozenMatrix{bt::frozen_i8(q, 0.5F), 1U, 2U}, bt::view_list(tape, &x, 1U), nullptr);
  BT_CHECK(t, (y.count == 1U) && (tape.value(y.first) == 0.5));  // BT-DEV-004: 1.5 * 1 - 0.5 * 2
  static std::uint8_t text[1024];
  bt::MemoryStream stream{text, sizeof(text) - 1U, 0U, 0U};
  BT_CHECK(t, bt::write_graphviz(tape, bt::Value<double>(&tape, y.first), bt::memory_sink(&stream)) == bt::Status::kOk);
  text[stream.size] = 0U;
  const char* s = reinterpret_cast<const char*>(text);
  BT_CHECK(t, std::strstr(s, "matvec_frozen_row") != nullptr);
  BT_CHECK(t, std::strstr(s, "n0 -> n2;") != nullptr);
  BT_CHECK(t, std::strstr(s, "n1 -> n2;") != nullptr);
}

// --- stop_gradient -------------------------------------------------------------
// A small backbone (Linear 3 -> 4 tanh, on the tape) and head (Linear 4 ->
// 2), a cross-entropy; with `stop` the backbone's forward is behind a stop.
struct Net {
  nn::Linear<double> body;
  nn::Linear<double> head;
};
Net make_net(bt::Tape<double>& tape) {
  nn::Rng rng(5U);
  Net n;
  nn::LinearOptions b;
  b.in = 3U;
  b.out = 4U;
  b.act = nn::Activation::kTanh;
  nn::LinearOptions h;
  h.in = 4U;
  h.out = 2U;
  static_cast<void>(n.body.create(tape, b, rng));
  static_cast<void>(n.head.create(tape, h, rng));
  return n;
}
bt::Value<double> net_loss(bt::Tape<double>& tape, const Net& n, bool stop) {
  const bt::View x = bt::record_view(tape, 3U, [&](bt::Index k) noexcept { return tape.leaf(0.3 * static_cast<double>(k) - 0.4); });
  const bt::View h = n.body.forward(tape, x);
  if (stop) {
    bt::stop_gradient(tape);
  }
  return nn::cross_entropy(tape, n.head.forward(tape, h), 1U);
}

void stop_gradient_sweeps_the_head_only(bt_test::Context& t) {
  bt::Tape<double>& full = g_other64;
  bt::Tape<double>& stopped = g_tape64;
  full.reset();
  stopped.reset();
  const Net a = make_net(full);
  const Net b = make_net(stopped);
  const bt::Mark mark = stopped.mark();
  const bt::Value<double> la = net_loss(full, a, false);
  const bt::Value<double> lb = net_loss(stopped, b, true);
  const bt::Index stop = bt::gradient_stop(stopped);
  BT_CHECK(t, (stop > mark.nodes) && (stop < stopped.size()));
  BT_CHECK(t, full.backward(la) == bt::Status::kOk);
  BT_CHECK(t, stopped.backward(lb) == bt::Status::kOk);
  BT_CHECK(t, la.value() == lb.value());  // BT-DEV-004
  // The head's parameters and every node above the stop: the same bits.
  const bt::View hp = b.head.params();
  bool same = true;
  for (bt::Index i = hp.first; i < (hp.first + hp.count); ++i) {
    same = same && (full.grad(i) == stopped.grad(i));  // BT-DEV-004: bitwise
  }
  for (bt::Index i = stop; i < stopped.size(); ++i) {
    same = same && (full.grad(i) == stopped.grad(i));  // BT-DEV-004
  }
  BT_CHECK(t, same);
  // The backbone's outputs received the head's share (the last `out` nodes
  // below the stop: tanh of the rows) ...
  bool outputs = true;
  for (bt::Index i = stop - 4U; i < stop; ++i) {
    outputs = outputs && (full.grad(i) == stopped.grad(i)) && (stopped.grad(i) != 0.0);  // BT-DEV-004
  }
  BT_CHECK(t, outputs);
  // ... and passed nothing on: the rows, the inputs and the backbone's
  // parameters have zero gradients; without the stop they do not.
  bool untouched = true;
  bool moved = false;
  const bt::View bp = b.body.params();
  for (bt::Index i = bp.first; i < (bp.first + bp.count); ++i) {
    untouched = untouched && (stopped.grad(i) == 0.0);  // BT-DEV-004
    moved = moved || (full.grad(i) != 0.0);             // BT-DEV-004
  }
  for (bt::Index i = mark.nodes; i < (stop - 4U); ++i) {
    untouched = untouched && (stopped.grad(i) == 0.0);  // BT-DEV-004
  }
  BT_CHECK(t, untouched);
  BT_CHECK(t, moved);
  // A second sweep: the head's gradients double, the backbone stays at 0.
  const double before = stopped.grad(hp.first);
  BT_CHECK(t, stopped.backward(lb) == bt::Status::kOk);
  BT_CHECK(t, stopped.grad(hp.first) == (2.0 * before));  // BT-DEV-004
  BT_CHECK(t, stopped.grad(bp.first) == 0.0);             // BT-DEV-004
  // A root below the stop propagates nothing.
  stopped.zero_grad();
  BT_CHECK(t, stopped.backward(bt::Value<double>(&stopped, stop - 1U)) == bt::Status::kOk);
  BT_CHECK(t, stopped.grad(stop - 1U) == 1.0);                          // BT-DEV-004
  BT_CHECK(t, (stopped.grad(stop - 5U) == 0.0) && (stopped.grad(bp.first) == 0.0));  // BT-DEV-004
}

void stop_gradient_lifted_by_rewind_and_reset(bt_test::Context& t) {
  bt::Tape<double>& tape = g_tape64;
  tape.reset();
  const Net n = make_net(tape);
  BT_CHECK(t, bt::gradient_stop(tape) == 0U);
  const bt::Mark before = tape.mark();
  static_cast<void>(net_loss(tape, n, true));
  const bt::Index stop = bt::gradient_stop(tape);
  BT_CHECK(t, stop != 0U);
  // A rewind that discards nodes below the stop lifts it.
  BT_CHECK(t, tape.rewind(before) == bt::Status::kOk);
  BT_CHECK(t, bt::gradient_stop(tape) == 0U);
  static_cast<void>(net_loss(tape, n, true));
  const bt::Index again = bt::gradient_stop(tape);
  BT_CHECK(t, again == stop);
  // A mark at the stop: rewinding there discards nothing below it.
  BT_CHECK(t, tape.rewind(before) == bt::Status::kOk);
  const bt::View x = bt::record_view(tape, 3U, [&](bt::Index k) noexcept { return tape.leaf(static_cast<double>(k)); });
  bt::stop_gradient(tape);
  const bt::Mark at_stop = tape.mark();
  static_cast<void>(n.head.forward(tape, n.body.forward(tape, x)));
  BT_CHECK(t, tape.rewind(at_stop) == bt::Status::kOk);
  BT_CHECK(t, bt::gradient_stop(tape) == at_stop.nodes);
  // Gradients through a stop lifted by rewind are complete again.
  BT_CHECK(t, tape.rewind(before) == bt::Status::kOk);
  BT_CHECK(t, bt::gradient_stop(tape) == 0U);
  const bt::Value<double> loss = net_loss(tape, n, false);
  tape.zero_grad();
  BT_CHECK(t, tape.backward(loss) == bt::Status::kOk);
  BT_CHECK(t, tape.grad(n.body.params().first) != 0.0);  // BT-DEV-004
  bt::stop_gradient(tape);
  BT_CHECK(t, bt::gradient_stop(tape) == tape.size());
  tape.reset();
  BT_CHECK(t, bt::gradient_stop(tape) == 0U);
}

static_assert(bt::is_extension(bt::FrozenOps::op<bt::rows::MatRowFrozen>()), "the frozen rows are an op family's");
static_assert(bt::rows::MatRowFrozen::kKind == bt::OpKind::kDescriptor, "one descriptor for all rows");

// The optimizer steps the head's view; its state holds the head only.
void optimizer_state_for_the_head_only(bt_test::Context& t) {
  bt::Tape<double>& tape = g_tape64;
  tape.reset();
  const Net n = make_net(tape);
  double state[2U * 10U];  // Adam: 2 per head parameter (4 * 2 + 2)
  nn::OptimizerOptions<double> config;
  config.kind = nn::OptimizerKind::kAdam;
  nn::Optimizer<double> opt(config, state);
  const bt::Value<double> loss = net_loss(tape, n, true);
  BT_CHECK(t, tape.backward(loss) == bt::Status::kOk);
  const double w0 = tape.value(n.body.params().first);
  BT_CHECK(t, opt.step(tape, n.head.params()) == bt::Status::kOk);
  BT_CHECK(t, tape.value(n.body.params().first) == w0);  // BT-DEV-004
  BT_CHECK(t, opt.step(tape, bt::View{0U, n.body.params().count + n.head.params().count}) ==
                  bt::Status::kCapacityExceeded);
  // The plan: state for the trainable parameters only.
  constexpr nn::MemoryPlan kAll = nn::make_plan<double>(26U, 30U, 20U, nn::OptimizerKind::kAdam);
  constexpr nn::MemoryPlan kHead = nn::make_finetune_plan<double>(26U, 10U, 30U, 20U, nn::OptimizerKind::kAdam);
  static_assert(kHead.optimizer_bytes == (2U * 10U * sizeof(double)), "state for the head only");
  static_assert(kHead.tape_bytes == kAll.tape_bytes, "the same tape");
  static_assert(kHead.bytes == (kHead.tape_object_bytes + kHead.optimizer_bytes), "the total (160 B of state: no padding)");
  static_assert(kHead.tape_object_bytes == kAll.tape_object_bytes, "the same tape object");
  static_assert(nn::make_finetune_plan<double>(26U, 99U, 30U, 20U, nn::OptimizerKind::kAdam).optimizer_bytes ==
                    kAll.optimizer_bytes,
                "at most every parameter");
  BT_CHECK(t, kHead.optimizer_bytes < kAll.optimizer_bytes);
}

const bt_test::TestCase kCases[] = {
    {"f16_decodes_every_pattern", f16_decodes_every_pattern},
    {"bf16_decodes_every_pattern", bf16_decodes_every_pattern},
    {"encodings_round_trip", encodings_round_trip},
    {"f16_rounds_to_nearest_even", f16_rounds_to_nearest_even},
    {"bf16_rounds_to_nearest_even", bf16_rounds_to_nearest_even},
    {"int8_quantization", int8_quantization},
    {"matvec_frozen_fp64", matvec_frozen_fp64},
    {"matvec_frozen_fp32", matvec_frozen_fp32},
    {"matvec_frozen_misuse", matvec_frozen_misuse},
    {"matvec_frozen_capacity", matvec_frozen_capacity},
    {"frozen_linear_from_flash", frozen_linear_from_flash},
    {"frozen_linear_compile_time_activation", frozen_linear_compile_time_activation},
    {"matvec_frozen_graphviz", matvec_frozen_graphviz},
    {"stop_gradient_sweeps_the_head_only", stop_gradient_sweeps_the_head_only},
    {"stop_gradient_lifted_by_rewind_and_reset", stop_gradient_lifted_by_rewind_and_reset},
    {"optimizer_state_for_the_head_only", optimizer_state_for_the_head_only},
};

}  // namespace

BT_TEST_MAIN("frozen", kCases)
