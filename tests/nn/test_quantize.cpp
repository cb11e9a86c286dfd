// SPDX-License-Identifier: Apache-2.0
// The export conversions of frozen weights (frozen/weights.hpp) over every
// magnitude a float or a double has: quantize_i8, quantize_f16 and
// quantize_bf16 either succeed with a result that keeps their documented
// bound or refuse with kInvalidArgument, writing nothing; no input, finite
// or not, reaches an undefined conversion (the host-debug preset runs this
// under UBSan with -fsanitize=float-cast-overflow).
//
// The sweep: for each binade of float (exponent fields 0 to 254: from the
// smallest subnormal 2^-149 to the largest finite value) and of double
// (0 to 2046: 2^-1074 to the largest double), fraction fields 0, 1, 2, half,
// the largest two and a random one, both signs. For each value m:
//  - quantize_i8 of {m}, {m, 0, -m}, and m with six random fractions of
//    it and a value 2^-30 m: accepted exactly when |m| is at most the
//    largest float; then the scale is a finite normal float, every q is in
//    [-127, 127], scale * q is a finite float, and w lies between the
//    exact midpoints scale * (q -+ 1/2) (|scale * q - w| <= scale / 2,
//    checked without rounding: both midpoints are exact in a double), a
//    tie going to the even q;
//  - quantize_f16 and quantize_bf16 of m: accepted exactly when m rounds to
//    a finite value of the format; then the result is the format's value
//    nearest m, ties to even (checked against the midpoints to its two
//    neighbours, decoded by f16_to_float / bf16_to_float, which
//    tests/nn/test_frozen.cpp checks on all 65,536 patterns).
// Refusals: NaN, infinities, doubles beyond the float range (int8), values
// that round past the format's largest (FP16, BF16), each alone and inside
// an array of good values: the call returns kInvalidArgument and the
// output arrays and the scale keep what they held.
#include <burtorch/frozen/weights.hpp>
#include <burtorch/nn/random.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <type_traits>

#include "harness.hpp"

namespace bt = burtorch;
namespace nn = burtorch::nn;

namespace {

#ifndef BURTORCH_TEST_SMALL_TARGET
#define BURTORCH_TEST_SMALL_TARGET 0
#endif

// --- the bit patterns of the sweep ------------------------------------------

template <class F>
struct Bits;
template <>
struct Bits<float> {
  using U = std::uint32_t;
  static constexpr unsigned kFraction = 23U;
  static constexpr U kMaxExponent = 254U;  // the largest finite binade
};
template <>
struct Bits<double> {
  using U = std::uint64_t;
  static constexpr unsigned kFraction = 52U;
  static constexpr U kMaxExponent = 2046U;
};

template <class F>
F from_bits(typename Bits<F>::U u) {
  F f = 0;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

// Calls visit(m) for every swept magnitude m > 0 of F, smallest first.
template <class F, class Visit>
void sweep(nn::Rng& rng, Visit&& visit) {
  using U = typename Bits<F>::U;
  constexpr unsigned kBits = Bits<F>::kFraction;
  constexpr U kOne = 1U;
  constexpr U kFractionMask = (kOne << kBits) - 1U;
  for (U e = 0U; e <= Bits<F>::kMaxExponent; ++e) {
    const U random = static_cast<U>(rng.next_u64()) & kFractionMask;
    const U fractions[7] = {0U, 1U, 2U, kOne << (kBits - 1U), kFractionMask - 1U, kFractionMask, random};
    for (const U f : fractions) {
      if ((e == 0U) && (f == 0U)) {
        continue;  // zero: not a magnitude of the sweep (it is in the arrays)
      }
      visit(from_bits<F>((e << kBits) | f));
    }
  }
}

// --- int8 ---------------------------------------------------------------------

// True if the accepted quantization of w[0..n) keeps its bound (file comment).
template <class F>
bool int8_keeps_bound(const F* w, std::size_t n, const std::int8_t* q, float scale) {
  const bool scale_ok = std::isfinite(scale) && (scale >= std::numeric_limits<float>::min());
  bool ok = scale_ok;
  const double s = static_cast<double>(scale);
  for (std::size_t i = 0U; ok && (i < n); ++i) {
    const double x = static_cast<double>(w[i]);
    const double k = static_cast<double>(q[i]);
    const double below = s * (k - 0.5);  // exact: 24 bits times 9
    const double above = s * (k + 0.5);
    const bool even = (q[i] % 2) == 0;
    const bool nearest = (below <= x) && (x <= above) && ((x != below) || even) && ((x != above) || even);  // BT-DEV-004
    ok = nearest && (q[i] >= -127) && std::isfinite(scale * static_cast<float>(q[i]));
  }
  return ok;
}

struct Tally {
  long accepted = 0;
  long refused = 0;
  long wrong = 0;
};

// One call of quantize_i8: accepted iff every |w| is at most the largest
// float; then the bound; if refused, nothing written.
template <class F>
void int8_case(const F* w, std::size_t n, Tally* tally) {
  constexpr std::size_t kMax = 8U;
  std::int8_t q[kMax];
  std::memset(q, 0x5A, sizeof(q));
  float scale = 42.0F;
  const bt::Status s = bt::quantize_i8(w, n, q, &scale);
  bool representable = true;
  for (std::size_t i = 0U; i < n; ++i) {
    representable = representable && std::isfinite(w[i]) &&
                    (std::fabs(static_cast<double>(w[i])) <= static_cast<double>(std::numeric_limits<float>::max()));
  }
  bool right = false;
  if (s == bt::Status::kOk) {
    right = representable && int8_keeps_bound(w, n, q, scale);
    ++tally->accepted;
  } else {
    bool untouched = scale == 42.0F;  // BT-DEV-004
    for (std::size_t i = 0U; i < kMax; ++i) {
      untouched = untouched && (q[i] == 0x5A);
    }
    right = !representable && (s == bt::Status::kInvalidArgument) && untouched;
    ++tally->refused;
  }
  tally->wrong += right ? 0 : 1;
}

template <class F>
void int8_sweep(bt_test::Context& t, std::uint64_t seed, long want_refused) {
  nn::Rng rng(seed);
  nn::Rng fractions(seed + 1U);
  Tally tally;
  long ties = 0;
  long ties_wrong = 0;
  sweep<F>(rng, [&](F m) {
    for (const F x : {m, static_cast<F>(-m)}) {
      const F one[1] = {x};
      int8_case(one, 1U, &tally);
      const F three[3] = {x, F(0), static_cast<F>(-x)};
      int8_case(three, 3U, &tally);
      F mixed[8];
      mixed[0] = x;
      for (std::size_t i = 1U; i < 7U; ++i) {
        mixed[i] = static_cast<F>(x * static_cast<F>(fractions.uniform(-1.0, 1.0)));
      }
      mixed[7] = static_cast<F>(x * static_cast<F>(std::ldexp(1.0, -30)));
      int8_case(mixed, 8U, &tally);
    }
    // Exact ties (doubles hold them): w = scale * (k + 1/2) next to the
    // largest weight m; the even q wins.
    if (std::is_same<F, double>::value) {
      const F pair[1] = {m};
      std::int8_t q1[1];
      float s1 = 0.0F;
      // (A scale raised to 2^-126 is not m / 127: the ties would pass m.)
      if ((bt::quantize_i8(pair, 1U, q1, &s1) == bt::Status::kOk) && ((static_cast<double>(s1) * 125.5) < m)) {
        for (const double k : {0.0, 1.0, 2.0, 63.0, 100.0, 125.0}) {
          const F tied[2] = {m, static_cast<F>(static_cast<double>(s1) * (k + 0.5))};
          std::int8_t q2[2];
          float s2 = 0.0F;
          const bool ok = (bt::quantize_i8(tied, 2U, q2, &s2) == bt::Status::kOk) && (s2 == s1) &&  // BT-DEV-004
                          ((q2[1] % 2) == 0) && ((q2[1] == static_cast<int>(k)) || (q2[1] == static_cast<int>(k) + 1));
          ties_wrong += ok ? 0 : 1;
          ++ties;
        }
      }
    }
  });
  BT_CHECK(t, tally.wrong == 0);
  BT_CHECK(t, tally.refused == want_refused);
  BT_CHECK(t, tally.accepted > 1000);
  BT_CHECK(t, ties_wrong == 0);
  BT_CHECK(t, (std::is_same<F, float>::value) || (ties > 1000));
}

void int8_float_sweep(bt_test::Context& t) { int8_sweep<float>(t, 101U, 0); }

// Doubles beyond the largest float are refused: the binades from 2^128 up
// (2046 - 1151 + 1 = 896 of them, 7 values each, both signs, 3 arrays
// each), and the values of the binade 2^127 that pass FLT_MAX (fractions
// 2^52 - 2, 2^52 - 1 and the random one when it exceeds FLT_MAX's; the
// sweep counts those itself).
long float_range_refusals() {
  nn::Rng rng(202U);
  long refused = 0;
  sweep<double>(rng, [&](double m) {
    refused += (m > static_cast<double>(std::numeric_limits<float>::max())) ? 6 : 0;
  });
  return refused;
}

void int8_double_sweep(bt_test::Context& t) {
  const long want = float_range_refusals();
  BT_CHECK(t, want > (896L * 7L * 6L));
  int8_sweep<double>(t, 202U, want);
}

// The two tensors of the report this test answers, and the edges.
void int8_edges(bt_test::Context& t) {
  // Subnormal floats: scale 2^-126 (the smallest normal), q = 0: within
  // scale / 2 of each weight; no 0 / 0 is converted.
  const float tiny[3] = {1e-44F, 0.0F, -1e-44F};
  std::int8_t q[3] = {9, 9, 9};
  float scale = 0.0F;
  BT_CHECK(t, bt::quantize_i8(tiny, 3U, q, &scale) == bt::Status::kOk);
  BT_CHECK(t, scale == std::numeric_limits<float>::min());  // BT-DEV-004
  BT_CHECK(t, (q[0] == 0) && (q[1] == 0) && (q[2] == 0));
  BT_CHECK(t, int8_keeps_bound(tiny, 3U, q, scale));
  // Just above 127 * 2^-126: a normal scale of its own, q = +-127.
  const float small[2] = {std::ldexp(1.0F, -119), -std::ldexp(1.0F, -120)};
  std::int8_t qs[2] = {};
  BT_CHECK(t, bt::quantize_i8(small, 2U, qs, &scale) == bt::Status::kOk);
  BT_CHECK(t, (qs[0] == 127) && (qs[1] == -64) && int8_keeps_bound(small, 2U, qs, scale));
  // Doubles beyond the float range: refused, nothing written (the scale
  // would be +inf and every q 0).
  const double huge[2] = {1e300, -3e299};
  std::int8_t qh[2] = {9, 9};
  float sh = 7.0F;
  BT_CHECK(t, bt::quantize_i8(huge, 2U, qh, &sh) == bt::Status::kInvalidArgument);
  BT_CHECK(t, (qh[0] == 9) && (qh[1] == 9) && (sh == 7.0F));  // BT-DEV-004
  // The largest float: 127 * scale must stay a float (one step below
  // FLT_MAX / 127 rounded up).
  const float top[2] = {std::numeric_limits<float>::max(), -std::numeric_limits<float>::max()};
  std::int8_t qt[2] = {};
  BT_CHECK(t, bt::quantize_i8(top, 2U, qt, &scale) == bt::Status::kOk);
  BT_CHECK(t, (qt[0] == 127) && (qt[1] == -127) && int8_keeps_bound(top, 2U, qt, scale));
  BT_CHECK(t, std::isfinite(scale * 127.0F));
  // Non-finite weights anywhere: refused, nothing written.
  for (const double bad : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity()}) {
    for (std::size_t at = 0U; at < 3U; ++at) {
      double w[3] = {0.5, -0.25, 1e-3};
      w[at] = bad;
      std::int8_t qb[3] = {9, 9, 9};
      float sb = 7.0F;
      BT_CHECK(t, bt::quantize_i8(w, 3U, qb, &sb) == bt::Status::kInvalidArgument);
      BT_CHECK(t, (qb[0] == 9) && (qb[1] == 9) && (qb[2] == 9) && (sb == 7.0F));  // BT-DEV-004
    }
  }
}

// --- FP16 and BF16 -----------------------------------------------------------

struct F16 {
  static constexpr std::uint16_t kInfinity = 0x7C00U;  // magnitude bits of +inf
  static constexpr unsigned kFraction = 10U;
  static float decode(std::uint16_t h) { return bt::f16_to_float(h); }
  template <class W>
  static bt::Status quantize(const W* w, std::size_t n, std::uint16_t* out) {
    return bt::quantize_f16(w, n, out);
  }
  // The smallest magnitude that rounds to infinity: 65520 (ties to even).
  static double overflow() { return 65520.0; }
};
struct BF16 {
  static constexpr std::uint16_t kInfinity = 0x7F80U;
  static constexpr unsigned kFraction = 7U;
  static float decode(std::uint16_t h) { return bt::bf16_to_float(h); }
  template <class W>
  static bt::Status quantize(const W* w, std::size_t n, std::uint16_t* out) {
    return bt::quantize_bf16(w, n, out);
  }
  // 2^128 - 2^119: halfway from the largest BF16 to 2^128.
  static double overflow() { return std::ldexp(1.0, 128) - std::ldexp(1.0, 119); }
};

// True if h is the format's value nearest x (x finite, h finite), ties to
// even, with x's sign: x lies between the exact midpoints to h's
// neighbours.
template <class Format>
bool nearest(double x, std::uint16_t h) {
  const std::uint16_t sign = static_cast<std::uint16_t>(h & 0x8000U);
  const std::uint16_t mag = static_cast<std::uint16_t>(h & 0x7FFFU);
  const double a = std::fabs(x);
  const double v = static_cast<double>(Format::decode(mag));
  // Neighbours: the next magnitude up (the overflow boundary's double
  // above the largest finite one) and down (0 has none below).
  const double up = (mag + 1U == Format::kInfinity) ? (2.0 * Format::overflow() - v)
                                                    : static_cast<double>(Format::decode(static_cast<std::uint16_t>(mag + 1U)));
  const double down = (mag == 0U) ? -v : static_cast<double>(Format::decode(static_cast<std::uint16_t>(mag - 1U)));
  const double hi = (v + up) / 2.0;  // exact: 11-bit values
  const double lo = (v + down) / 2.0;
  const bool even = (mag & 1U) == 0U;
  const bool inside = (lo <= a) && (a <= hi) && ((a != hi) || even) && ((a != lo) || even || (mag == 0U));  // BT-DEV-004
  const bool same_sign = (sign != 0U) == std::signbit(x);
  return inside && same_sign && (mag < Format::kInfinity);
}

template <class Format, class F>
void small_float_case(F x, Tally* tally) {
  const F w[1] = {x};
  std::uint16_t out[1] = {0xABCDU};
  const bt::Status s = Format::quantize(w, 1U, out);
  const bool finite_result = std::isfinite(x) && (std::fabs(static_cast<double>(x)) < Format::overflow());
  bool right = false;
  if (s == bt::Status::kOk) {
    right = finite_result && nearest<Format>(static_cast<double>(x), out[0]);
    ++tally->accepted;
  } else {
    right = !finite_result && (s == bt::Status::kInvalidArgument) && (out[0] == 0xABCDU);
    ++tally->refused;
  }
  tally->wrong += right ? 0 : 1;
}

template <class Format, class F>
void small_float_sweep(bt_test::Context& t, std::uint64_t seed) {
  nn::Rng rng(seed);
  Tally tally;
  long want_refused = 0;
  sweep<F>(rng, [&](F m) {
    small_float_case<Format>(m, &tally);
    small_float_case<Format>(static_cast<F>(-m), &tally);
    want_refused += (static_cast<double>(m) >= Format::overflow()) ? 2 : 0;
  });
  for (const F zero : {F(0), static_cast<F>(-F(0))}) {
    small_float_case<Format>(zero, &tally);
  }
  BT_CHECK(t, tally.wrong == 0);
  BT_CHECK(t, tally.refused == want_refused);
  BT_CHECK(t, tally.accepted > 1000);
}

void f16_sweep(bt_test::Context& t) {
  small_float_sweep<F16, float>(t, 303U);
  small_float_sweep<F16, double>(t, 304U);
}
void bf16_sweep(bt_test::Context& t) {
  small_float_sweep<BF16, float>(t, 305U);
  small_float_sweep<BF16, double>(t, 306U);
}

// Refusals inside arrays: the first bad value stops the call before
// anything is written; the scalar conversions keep IEEE's results.
template <class Format>
void small_float_refusals(bt_test::Context& t) {
  const double overflow = Format::overflow();
  const double below = std::nextafter(overflow, 0.0);
  for (const double bad : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity(), overflow, -overflow, 1e300}) {
    for (std::size_t at = 0U; at < 3U; ++at) {
      double w[3] = {0.5, -0.25, below};
      w[at] = bad;
      std::uint16_t out[3] = {1U, 2U, 3U};
      BT_CHECK(t, Format::quantize(w, 3U, out) == bt::Status::kInvalidArgument);
      BT_CHECK(t, (out[0] == 1U) && (out[1] == 2U) && (out[2] == 3U));
    }
  }
  // Just below the boundary: the largest finite value.
  const double w[1] = {below};
  std::uint16_t out[1] = {};
  BT_CHECK(t, Format::quantize(w, 1U, out) == bt::Status::kOk);
  BT_CHECK(t, out[0] == static_cast<std::uint16_t>(Format::kInfinity - 1U));
}

void refusals(bt_test::Context& t) {
  small_float_refusals<F16>(t);
  small_float_refusals<BF16>(t);
  // The float weights that BF16 cannot hold: FLT_MAX rounds past its
  // largest value.
  const float fmax[1] = {std::numeric_limits<float>::max()};
  std::uint16_t out[1] = {7U};
  BT_CHECK(t, bt::quantize_bf16(fmax, 1U, out) == bt::Status::kInvalidArgument);
  BT_CHECK(t, out[0] == 7U);
  // The scalar conversions are IEEE's: overflow to infinity, NaN to NaN.
  BT_CHECK(t, bt::f16_from_double(65520.0) == 0x7C00U);
  BT_CHECK(t, bt::bf16_from_float(-std::numeric_limits<float>::max()) == 0xFF80U);
  BT_CHECK(t, (bt::f16_from_double(std::numeric_limits<double>::quiet_NaN()) & 0x7E00U) == 0x7E00U);
}

const bt_test::TestCase kCases[] = {
    {"int8_float_sweep", int8_float_sweep},
    {"int8_double_sweep", int8_double_sweep},
    {"int8_edges", int8_edges},
    {"f16_sweep", f16_sweep},
    {"bf16_sweep", bf16_sweep},
    {"refusals", refusals},
};

}  // namespace

BT_TEST_MAIN("quantize", kCases)
