// SPDX-License-Identifier: Apache-2.0
/// @file
/// Internal: the Helium (MVE, Cortex-M55) backend of a tape of
/// Lanes<float, 4>, where one node's four lanes are one Helium register:
/// the loops of a layer over shared weights (lanes/layer.hpp, conv.hpp,
/// layer_grad.hpp) and the lanes' selects, exp and tanh (lanes/functions.hpp,
/// lanes.hpp) written with the Arm C Language Extensions' MVE intrinsics
/// (arm_mve.h) instead of the compilers' generic vectors. It is selected
/// where the library's kernels select Helium (BURTORCH_SIMD_MVE, core/simd.hpp:
/// an optimised build for a core with MVE-F and BURTORCH_CONFIG_SIMD on),
/// for float lanes of exactly four; everything else, and a build with it
/// off, runs the generic loops, the scalar fallback.
///
/// Why: GCC lowers the generic loops for Helium with their accumulators in
/// memory (a load and a store around every multiply, the block of rows in
/// a loop it does not unroll) and gets compares of float vectors wrong
/// (the predicate of the first lane alone), so on the M55 the lanes' selects
/// had to run lane by lane. Here every block is unrolled at compile time
/// (constant indices: the accumulators stay in registers), a weight times
/// a register is one multiply-add by a scalar (`vfmaq_n_f32`), the inputs'
/// tile for the weights' gradient is transposed once for all rows, and the
/// selects decide on the floats' bits with integer vector operations. No
/// predicate and no load or store intrinsic is used (GCC 12's code for them
/// is wrong in places: below).
///
/// Results: the same operations in the same order as the generic loops
/// (each lane's terms in input order, the bias last; a weight's gradient
/// gets its lanes' terms in lane order; the rows of the input's gradient
/// in descending order). The multiply-adds are fused when the kernels'
/// are (BURTORCH_CONFIG_SIMD_FMA, the default: `mve+fma`), else a multiply
/// and an add, bitwise the generic loops. Fused or not, where every product
/// and sum is exact both give the same bits; elsewhere they differ by the
/// rounding of the products, within the lane tape's tolerance
/// (docs/floating-point.md). The selects, relu and the tests are bitwise
/// the scalar ones; exp and tanh are the generic vector functions'
/// operations (lanes/functions.hpp) in the same order, tanh's one division
/// lane by lane (Helium has no vector divide). On the M55,
/// tests/core/test_lanes.cpp checks the selects against the scalar ones bit
/// for bit and exp and tanh against correctly rounded values;
/// tests/nn/test_nn_lanes.cpp and test_nn_firmware_lanes.cpp check layers
/// against a scalar tape, bit for bit where the arithmetic is exact, and
/// lane batches against serial batches within the tolerance.
#ifndef BURTORCH_LANES_HELIUM_HPP
#define BURTORCH_LANES_HELIUM_HPP

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "burtorch/config.hpp"
#include "burtorch/core/detail/math.hpp"
#include "burtorch/core/simd.hpp"
#include "burtorch/index.hpp"

#if BURTORCH_SIMD_MVE
#include <arm_mve.h>
/// 1: lanes of four floats run on Helium (this file); 0: the generic loops.
#define BURTORCH_LANES_HELIUM 1
#else
#define BURTORCH_LANES_HELIUM 0
#endif

namespace burtorch {
namespace detail {

/// True where Lanes<S, N> runs on this backend: four float lanes with
/// BURTORCH_LANES_HELIUM.
template <class S, std::size_t N>
constexpr bool kHelium = (BURTORCH_LANES_HELIUM != 0) && std::is_same<S, float>::value && (N == 4U);

/// The backend's functions for lanes of S, N lanes: defined (below) for
/// four float lanes on Helium only. The loops call them as
/// `HeliumLanes<S, N>::f(...)` under `if constexpr (kHelium<S, N>)`, so
/// other targets and types never name them.
template <class S, std::size_t N>
struct HeliumLanes;

#if BURTORCH_LANES_HELIUM
namespace helium {

/// One Helium register: four float lanes (ACLE's type; a GCC vector of
/// four floats, BT-DEV-016).
using F4 = float32x4_t;

/// f(0), f(1), ..., f(K - 1) with constant indices (std::integral_constant):
/// a block unrolled at compile time, so arrays indexed by them stay in
/// registers.
template <class F, std::size_t... I>
BURTORCH_ALWAYS_INLINE inline void unroll_each(F& f, std::index_sequence<I...> /*indices*/) noexcept {
  (f(std::integral_constant<std::size_t, I>{}), ...);
}
template <std::size_t K, class F>
BURTORCH_ALWAYS_INLINE inline void unroll(F&& f) noexcept {
  unroll_each(f, std::make_index_sequence<K>{});
}

/// acc + x * w in every lane, w one scalar: one rounding (vfma by a
/// scalar) where the kernels fuse, else vmul + vadd (the generic loops' bits).
BURTORCH_ALWAYS_INLINE inline F4 mul_add(F4 acc, F4 x, float w) noexcept {
#if BURTORCH_SIMD_MVE_FMA
  return vfmaq_n_f32(acc, x, w);
#else
  return vaddq_f32(acc, vmulq_n_f32(x, w));
#endif
}
/// acc + x * w of scalars, rounded as mul_add.
BURTORCH_ALWAYS_INLINE inline float mul_add(float acc, float x, float w) noexcept {
#if BURTORCH_SIMD_MVE_FMA
  return std::fma(x, w, acc);
#else
  return acc + (x * w);
#endif
}

/// The four floats from p as a register, and back (any 4-byte alignment).
/// Through memcpy (BT-DEV-010), not through the intrinsics vld1q_f32 and
/// vst1q_f32: GCC 12 does not order those with the stores around them (a
/// vld1q_f32 of a Lanes value was scheduled before the stores that wrote
/// three of its four lanes), while a copy into the vector is an ordinary
/// access of float memory, which it orders correctly (and compiles to the
/// same vldrw/vstrw).
/// @{
BURTORCH_ALWAYS_INLINE inline F4 load4(const float* p) noexcept {
  F4 v;
  std::memcpy(&v, p, sizeof(v));  // BT-DEV-010
  return v;
}
BURTORCH_ALWAYS_INLINE inline void store4(float* p, F4 v) noexcept {
  std::memcpy(p, &v, sizeof(v));  // BT-DEV-010
}
/// @}

// --- a layer over shared weights ---------------------------------------------

/// acc[b] += w[b * n + j] x[j] for j < count, b < kRows (x: lane values).
template <std::size_t kRows, class L>
BURTORCH_ALWAYS_INLINE inline void add_run(const L* x, Index count, const float* w, std::size_t n,
                                           F4 (&acc)[kRows]) noexcept {
  for (Index j = 0U; j < count; ++j) {
    const F4 xj = load4(x[j].lane);
    unroll<kRows>([&](auto b) noexcept { acc[b] = mul_add(acc[b], xj, w[(b * n) + j]); });
  }
}

/// out[b] = sum over the runs of the view list `list` (slots: runs, then a
/// first/count pair per run) that skip(first, run) does not skip of
/// w[b * n + k] x[k], then + shared[b] and + bias[b] (each if not null),
/// for the kRows rows from w: lanes/layer.hpp's matvec_rows and
/// lanes/conv.hpp's conv_rows (the skipped runs: marked shared runs, zero
/// padding).
template <std::size_t kRows, class L, class Skip>
inline void rows(const L* v, const Index* list, const Skip& skip, const float* w, std::size_t n, const float* shared,
                 const float* bias, L* out) noexcept {
  F4 acc[kRows];
  unroll<kRows>([&](auto b) noexcept { acc[b] = vdupq_n_f32(0.0F); });
  const Index runs = list_views(list);
  std::size_t k = 0U;
  for (Index r = 0U; r < runs; ++r) {
    const Index first = list[1U + (2U * r)];
    const Index count = list[2U + (2U * r)];
    if (!skip(first, r)) {
      add_run<kRows>(&v[first], count, &w[k], n, acc);
    }
    k += count;
  }
  unroll<kRows>([&](auto b) noexcept {
    if (shared != nullptr) {
      acc[b] = vaddq_n_f32(acc[b], shared[b]);
    }
    if (bias != nullptr) {
      acc[b] = vaddq_n_f32(acc[b], bias[b]);
    }
    store4(out[b].lane, acc[b]);
  });
}

/// gx[c] += sum of w[o * n + c] g[o] over rows o = top - 1 down to lo, for
/// the kCols inputs from gx (lanes/layer_grad.hpp's input_grad_cols): the
/// sums from zero in registers, then added to gx.
template <std::size_t kCols, class L>
inline void input_grad_cols(const L* g, const float* w, Index lo, Index top, std::size_t n, L* gx) noexcept {
  F4 acc[kCols];
  unroll<kCols>([&](auto c) noexcept { acc[c] = vdupq_n_f32(0.0F); });
  for (Index o = top; o-- > lo;) {
    const F4 go = load4(g[o].lane);
    const float* wo = &w[static_cast<std::size_t>(o) * n];
    unroll<kCols>([&](auto c) noexcept { acc[c] = mul_add(acc[c], go, wo[c]); });
  }
  unroll<kCols>([&](auto c) noexcept { store4(gx[c].lane, vaddq_f32(load4(gx[c].lane), acc[c])); });
}

/// gw[o * n + j] += sum over the lanes l, in lane order, of g[o][l] x[j][l]
/// for the `count` inputs of one run (lanes/layer_grad.hpp's
/// lanes_matvec_weight_grad): four columns at a time, their inputs
/// transposed once (register l: lane l of the four inputs), then per row
/// four multiply-adds by the row's lanes; the last count % 4 columns one at
/// a time.
template <class L>
inline void weight_grad(const L* g, const L* x, Index rows, Index n, float* gw, Index count) noexcept {
  Index j = 0U;
  for (; (j + 4U) <= count; j += 4U) {
    float tile[4][4];  // BT-DEV-013: tile[l][c] = lane l of x[j + c]
    for (std::size_t c = 0U; c < 4U; ++c) {
      for (std::size_t l = 0U; l < 4U; ++l) {
        tile[l][c] = x[j + c].lane[l];
      }
    }
    const F4 t0 = load4(tile[0]);
    const F4 t1 = load4(tile[1]);
    const F4 t2 = load4(tile[2]);
    const F4 t3 = load4(tile[3]);
    for (Index o = 0U; o < rows; ++o) {
      float* go = &gw[(static_cast<std::size_t>(o) * n) + j];
      const float* gl = g[o].lane;
      F4 acc = load4(go);
      acc = mul_add(acc, t0, gl[0]);
      acc = mul_add(acc, t1, gl[1]);
      acc = mul_add(acc, t2, gl[2]);
      acc = mul_add(acc, t3, gl[3]);
      store4(go, acc);
    }
  }
  for (; j < count; ++j) {
    const float* xj = x[j].lane;
    for (Index o = 0U; o < rows; ++o) {
      float* go = &gw[(static_cast<std::size_t>(o) * n) + j];
      const float* gl = g[o].lane;
      float acc = *go;
      acc = mul_add(acc, xj[0], gl[0]);
      acc = mul_add(acc, xj[1], gl[1]);
      acc = mul_add(acc, xj[2], gl[2]);
      acc = mul_add(acc, xj[3], gl[3]);
      *go = acc;
    }
  }
}

// --- the lanes' selects and tests (Lanes<float, 4>::Ops) -------------------------
// Helium's float compares flush subnormal operands to zero (as its float
// arithmetic flushes subnormal results), its "less than (or equal)" is true
// for NaN (Arm's unordered-inclusive conditions), and GCC 12 miscompiles
// arithmetic on compare predicates (an OR of two predicates gave lane
// values of 1 and 2 at -Os, and one form of test stopped the compiler), so
// the selects and tests use no predicate at all: they decide on the bits,
// as integers, with masks of all ones or zeros built by arithmetic shifts,
// and select with and/bic/or. Bitwise the scalar selects for every value,
// subnormals, signed zeros and NaN included.

/// The bits of the four lanes.
BURTORCH_ALWAYS_INLINE inline int32x4_t bits_of(F4 x) noexcept { return vreinterpretq_s32_f32(x); }
/// All ones in the lanes where v < 0, zeros elsewhere.
BURTORCH_ALWAYS_INLINE inline int32x4_t negative(int32x4_t v) noexcept { return vshrq_n_s32(v, 31); }
/// |x|'s bits (the sign cleared): 0 to 0x7FFFFFFF.
BURTORCH_ALWAYS_INLINE inline int32x4_t magnitude(int32x4_t b) noexcept {
  return vandq_s32(b, vdupq_n_s32(0x7FFFFFFF));
}
/// The bits of +infinity.
constexpr std::int32_t kInfinityBits = 0x7F800000;
/// Mask of the NaN lanes: magnitude above infinity's (no overflow: both
/// are at most 0x7FFFFFFF).
BURTORCH_ALWAYS_INLINE inline int32x4_t nan_mask(int32x4_t b) noexcept {
  return negative(vsubq_s32(vdupq_n_s32(kInfinityBits), magnitude(b)));
}
/// Mask of the finite lanes: magnitude below infinity's.
BURTORCH_ALWAYS_INLINE inline int32x4_t finite_mask(int32x4_t b) noexcept {
  return negative(vsubq_s32(magnitude(b), vdupq_n_s32(kInfinityBits)));
}
/// Mask of the lanes that are +0 or -0 (magnitude - 1 < 0).
BURTORCH_ALWAYS_INLINE inline int32x4_t zero_mask(int32x4_t b) noexcept {
  return negative(vsubq_s32(magnitude(b), vdupq_n_s32(1)));
}
/// Mask of the lanes relu keeps: x > 0 (sign clear, not zero) or NaN.
BURTORCH_ALWAYS_INLINE inline int32x4_t relu_mask(int32x4_t b) noexcept {
  return vorrq_s32(vbicq_s32(vmvnq_s32(negative(b)), zero_mask(b)), nan_mask(b));
}
/// The bits as an integer in the floats' order: the magnitude, negated
/// where the sign is set (-0 and +0 both 0).
BURTORCH_ALWAYS_INLINE inline int32x4_t order_key(int32x4_t b) noexcept {
  const int32x4_t sign = negative(b);
  return vsubq_s32(veorq_s32(magnitude(b), sign), sign);
}
/// Mask of the lanes where a > b as floats (none where either is NaN): the
/// keys' difference, saturated so that its sign is right.
BURTORCH_ALWAYS_INLINE inline int32x4_t greater_mask(int32x4_t a, int32x4_t b) noexcept {
  const int32x4_t gt = negative(vqsubq_s32(order_key(b), order_key(a)));
  return vbicq_s32(gt, vorrq_s32(nan_mask(a), nan_mask(b)));
}
/// x where the mask is all ones, y where it is zero.
BURTORCH_ALWAYS_INLINE inline F4 select(int32x4_t mask, F4 x, F4 y) noexcept {
  return vreinterpretq_f32_s32(vorrq_s32(vandq_s32(bits_of(x), mask), vbicq_s32(bits_of(y), mask)));
}

/// v = relu(v): v where v > 0 or NaN, else +0.
inline void relu(float* v) noexcept {
  const F4 x = load4(v);
  store4(v, vreinterpretq_f32_s32(vandq_s32(bits_of(x), relu_mask(bits_of(x)))));
}
/// g = g where x > 0 or NaN, else +0.
inline void relu_grad(const float* x, float* g) noexcept {
  const int32x4_t mask = relu_mask(bits_of(load4(x)));
  store4(g, vreinterpretq_f32_s32(vandq_s32(bits_of(load4(g)), mask)));
}
/// x = a > b ? x : y, lane by lane.
inline void select_greater(const float* a, const float* b, float* x, const float* y) noexcept {
  const int32x4_t mask = greater_mask(bits_of(load4(a)), bits_of(load4(b)));
  store4(x, select(mask, load4(x), load4(y)));
}
/// x = a == b ? x : y (as floats: +0 == -0, NaN equal to nothing).
inline void select_equal(const float* a, const float* b, float* x, const float* y) noexcept {
  const int32x4_t ab = bits_of(load4(a));
  const int32x4_t bb = bits_of(load4(b));
  // The same bits and not NaN (v = a xor b is 0 exactly where v | -v has no sign bit), or both zeros.
  const int32x4_t v = veorq_s32(ab, bb);
  const int32x4_t same = vbicq_s32(vmvnq_s32(negative(vorrq_s32(v, vnegq_s32(v)))), nan_mask(ab));
  const int32x4_t zeros = vandq_s32(zero_mask(ab), zero_mask(bb));
  store4(x, select(vorrq_s32(same, zeros), load4(x), load4(y)));
}
/// x = a is NaN ? x : y.
inline void select_nan(const float* a, float* x, const float* y) noexcept {
  store4(x, select(nan_mask(bits_of(load4(a))), load4(x), load4(y)));
}
/// x = x where finite, else +0.
inline void finite_or_zero(float* x) noexcept {
  const F4 v = load4(x);
  store4(x, vreinterpretq_f32_s32(vandq_s32(bits_of(v), finite_mask(bits_of(v)))));
}
/// x = |x| (the sign bit cleared).
inline void abs(float* x) noexcept { store4(x, vreinterpretq_f32_s32(magnitude(bits_of(load4(x))))); }
/// The largest magnitude's bits of the four lanes.
BURTORCH_ALWAYS_INLINE inline std::uint32_t largest_magnitude(const float* x) noexcept {
  return vmaxvq_u32(0U, vreinterpretq_u32_s32(magnitude(bits_of(load4(x)))));
}
/// True if every lane is zero (+0 or -0).
inline bool is_zero(const float* x) noexcept { return largest_magnitude(x) == 0U; }
/// True if every lane is finite.
inline bool finite(const float* x) noexcept {
  return largest_magnitude(x) < static_cast<std::uint32_t>(kInfinityBits);
}

// --- exp and tanh (lanes/functions.hpp's algorithm) --------------------------------

/// e^x in every lane: lanes/functions.hpp's exp_lanes, operation for
/// operation (the clamp to [kLow, kHigh] by vmaxnm/vminnm gives the same
/// values as its selects for every number; NaN lanes are x at the end).
inline F4 exp4(F4 x) noexcept {
  constexpr float kLog2e = 1.44269504088896341F;
  constexpr float kLn2High = 0.693145751953125F;
  constexpr float kLn2Low = 1.428606820309417232e-6F;
  constexpr float kRound = 12582912.0F;
  constexpr float kHigh = 88.72283935546875F;
  constexpr float kLow = -104.0F;
  const F4 clamped = vminnmq_f32(vmaxnmq_f32(x, vdupq_n_f32(kLow)), vdupq_n_f32(kHigh));
  const F4 shifted = vaddq_n_f32(vmulq_n_f32(clamped, kLog2e), kRound);
  const F4 n = vsubq_n_f32(shifted, kRound);
  const F4 r = vsubq_f32(vsubq_f32(clamped, vmulq_n_f32(n, kLn2High)), vmulq_n_f32(n, kLn2Low));
  F4 p = vaddq_n_f32(vmulq_n_f32(r, 1.0F / 5040.0F), 1.0F / 720.0F);
  p = vaddq_n_f32(vmulq_f32(p, r), 1.0F / 120.0F);
  p = vaddq_n_f32(vmulq_f32(p, r), 1.0F / 24.0F);
  p = vaddq_n_f32(vmulq_f32(p, r), 1.0F / 6.0F);
  p = vaddq_n_f32(vmulq_f32(p, r), 0.5F);
  p = vaddq_n_f32(vmulq_f32(p, r), 1.0F);
  p = vaddq_n_f32(vmulq_f32(p, r), 1.0F);
  const int32x4_t k = vcvtq_s32_f32(n);
  const int32x4_t h = vshrq_n_s32(k, 1);
  const F4 s1 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_n_s32(h, 127), 23));
  const F4 s2 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_n_s32(vsubq_s32(k, h), 127), 23));
  const F4 product = vmulq_f32(vmulq_f32(p, s1), s2);
  const int32x4_t xb = bits_of(x);
  const F4 result = select(greater_mask(xb, bits_of(vdupq_n_f32(kHigh))), vdupq_n_f32(HUGE_VALF), product);  // x > kHigh
  return select(nan_mask(xb), x, result);
}
/// v = e^v.
inline void exp(float* v) noexcept { store4(v, exp4(load4(v))); }

/// v = tanh(v): lanes/functions.hpp's tanh_lanes, operation for operation.
inline void tanh(float* v) noexcept {
  const F4 x = load4(v);
  const int32x4_t xb = bits_of(x);
  const int32x4_t sign = vbicq_s32(xb, vdupq_n_s32(0x7FFFFFFF));
  const int32x4_t a_bits = magnitude(xb);
  const F4 a = vreinterpretq_f32_s32(a_bits);
  // Large |x|: 1 - 2 / (e^(2|x|) + 1), the division lane by lane.
  float e[4];  // BT-DEV-013
  store4(e, vaddq_n_f32(exp4(vaddq_f32(a, a)), 1.0F));
  for (std::size_t l = 0U; l < 4U; ++l) {
    e[l] = 1.0F - (2.0F / e[l]);
  }
  const F4 large = load4(e);
  const F4 z = vmulq_f32(a, a);
  F4 q = vaddq_n_f32(vmulq_n_f32(z, -929569.0F / 638512875.0F), 21844.0F / 6081075.0F);
  q = vaddq_n_f32(vmulq_f32(q, z), -1382.0F / 155925.0F);
  q = vaddq_n_f32(vmulq_f32(q, z), 62.0F / 2835.0F);
  q = vaddq_n_f32(vmulq_f32(q, z), -17.0F / 315.0F);
  q = vaddq_n_f32(vmulq_f32(q, z), 2.0F / 15.0F);
  q = vaddq_n_f32(vmulq_f32(q, z), -1.0F / 3.0F);
  const F4 small = vaddq_f32(a, vmulq_f32(vmulq_f32(a, z), q));
  // |x| < 0.5 on the magnitudes' bits (both non-negative: no overflow).
  const F4 t = select(negative(vsubq_s32(a_bits, bits_of(vdupq_n_f32(0.5F)))), small, large);
  const F4 result = vreinterpretq_f32_s32(vorrq_s32(bits_of(t), sign));
  store4(v, select(nan_mask(xb), x, result));
}

}  // namespace helium

/// Four float lanes on Helium: the functions above.
template <>
struct HeliumLanes<float, 4U> {
  /// helium::rows (a layer's or a convolution's block of kRows rows).
  template <std::size_t kRows, class L, class Skip>
  static void rows(const L* v, const Index* list, const Skip& skip, const float* w, std::size_t n,
                   const float* shared, const float* bias, L* out) noexcept {
    helium::rows<kRows>(v, list, skip, w, n, shared, bias, out);
  }
  /// helium::input_grad_cols.
  template <std::size_t kCols, class L>
  static void input_grad_cols(const L* g, const float* w, Index lo, Index top, std::size_t n, L* gx) noexcept {
    helium::input_grad_cols<kCols>(g, w, lo, top, n, gx);
  }
  /// helium::weight_grad.
  template <class L>
  static void weight_grad(const L* g, const L* x, Index rows, Index n, float* gw, Index count) noexcept {
    helium::weight_grad(g, x, rows, n, gw, count);
  }
  /// The lanes' functions (Lanes<float, 4>::Ops), on the four floats from
  /// the pointers.
  /// @{
  static void relu(float* v) noexcept { helium::relu(v); }
  static void relu_grad(const float* x, float* g) noexcept { helium::relu_grad(x, g); }
  static void select_greater(const float* a, const float* b, float* x, const float* y) noexcept {
    helium::select_greater(a, b, x, y);
  }
  static void select_equal(const float* a, const float* b, float* x, const float* y) noexcept {
    helium::select_equal(a, b, x, y);
  }
  static void select_nan(const float* a, float* x, const float* y) noexcept { helium::select_nan(a, x, y); }
  static void finite_or_zero(float* x) noexcept { helium::finite_or_zero(x); }
  static void abs(float* x) noexcept { helium::abs(x); }
  static bool is_zero(const float* x) noexcept { return helium::is_zero(x); }
  static bool finite(const float* x) noexcept { return helium::finite(x); }
  static void exp(float* v) noexcept { helium::exp(v); }
  static void tanh(float* v) noexcept { helium::tanh(v); }
  /// @}
};
#endif  // BURTORCH_LANES_HELIUM

}  // namespace detail
}  // namespace burtorch

#endif  // BURTORCH_LANES_HELIUM_HPP
