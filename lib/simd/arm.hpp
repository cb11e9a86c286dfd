// SPDX-License-Identifier: Apache-2.0
// Library-internal: the Arm vector traits of lib/simd/kernels.hpp, Neon
// (AArch64: float and double; ARMv7-A: float) and Helium/MVE (Cortex-M55:
// float). Multiply and add stay separate instructions (vmulq + vaddq), so
// results are bitwise those of the reference, except on Helium with
// BURTORCH_CONFIG_SIMD_FMA (vfmaq: docs/floating-point.md, "Fused
// multiply-add in the kernels"); reductions hold the P partial
// sums in four 16-byte accumulators. ARMv7 Neon and MVE have no vector
// divide or square root: their Adam step is the reference's. Included only
// by the kernels' sources (lib/simd/*.cpp), compiled with the library's
// flags.
#ifndef BURTORCH_LIB_SIMD_ARM_HPP
#define BURTORCH_LIB_SIMD_ARM_HPP

#include <cstddef>

#include "kernels.hpp"

#if BURTORCH_SIMD_NEON
#include <arm_neon.h>
#endif
#if BURTORCH_SIMD_MVE
#include <arm_mve.h>
#include <cstdint>
#endif

namespace burtorch {
namespace simd {
namespace isa {

#if BURTORCH_SIMD_NEON || BURTORCH_SIMD_MVE
// Neon and MVE name their 4 x float vector float32x4_t and spell these
// operations alike (vld1q_f32, vaddq_f32, ...); Vector<Neon, float> and
// Vector<Mve, float> add what differs: tails, divide and square root.
struct Float32x4 {
  using Scalar = float;
  using Vec = float32x4_t;
  static constexpr std::size_t kLanes = 4U;
  static constexpr bool kFused = false;

  static Vec broadcast(float x) noexcept { return vdupq_n_f32(x); }
  static Vec load(const float* p) noexcept { return vld1q_f32(p); }
  static void store(float* p, Vec v) noexcept { vst1q_f32(p, v); }
  static Vec add(Vec a, Vec b) noexcept { return vaddq_f32(a, b); }
  static Vec sub(Vec a, Vec b) noexcept { return vsubq_f32(a, b); }
  static Vec mul(Vec a, Vec b) noexcept { return vmulq_f32(a, b); }
  static Vec mul_add(Vec a, Vec b, Vec acc) noexcept { return vaddq_f32(acc, vmulq_f32(a, b)); }
  // Lanes (0 + 2) + (1 + 3).
  static float sum_lanes(Vec v) noexcept {
    return (vgetq_lane_f32(v, 0) + vgetq_lane_f32(v, 2)) + (vgetq_lane_f32(v, 1) + vgetq_lane_f32(v, 3));
  }
};
#endif  // BURTORCH_SIMD_NEON || BURTORCH_SIMD_MVE

#if BURTORCH_SIMD_NEON
template <>
struct Vector<Neon, float> : Float32x4 {
  static constexpr bool kMasked = false;
  // count is 1 to 3; the lanes are set from scalars, not copied through a
  // buffer in memory (a vector load right after scalar stores stalls).
  static Vec load_first(const float* p, std::size_t count) noexcept {
    Vec v = vsetq_lane_f32(p[0], vdupq_n_f32(0.0F), 0);
    if (count > 1U) {
      v = vsetq_lane_f32(p[1], v, 1);
    }
    if (count > 2U) {
      v = vsetq_lane_f32(p[2], v, 2);
    }
    return v;
  }
#if BURTORCH_SIMD_NEON_F64
  static constexpr bool kDivSqrt = true;
  static Vec div(Vec a, Vec b) noexcept { return vdivq_f32(a, b); }
  static Vec sqrt(Vec a) noexcept { return vsqrtq_f32(a); }
#else
  static constexpr bool kDivSqrt = false;  // ARMv7 Neon
#endif
};

#if BURTORCH_SIMD_NEON_F64
template <>
struct Vector<Neon, double> {
  using Scalar = double;
  using Vec = float64x2_t;
  static constexpr std::size_t kLanes = 2U;
  static constexpr bool kFused = false;
  static constexpr bool kMasked = false;
  static constexpr bool kDivSqrt = true;

  static Vec broadcast(double x) noexcept { return vdupq_n_f64(x); }
  static Vec load(const double* p) noexcept { return vld1q_f64(p); }
  // count is 1 (< 2 lanes): one element into lane 0, lane 1 zeroed.
  static Vec load_first(const double* p, std::size_t /*count*/) noexcept {
    return vsetq_lane_f64(p[0], vdupq_n_f64(0.0), 0);
  }
  static void store(double* p, Vec v) noexcept { vst1q_f64(p, v); }
  static Vec add(Vec a, Vec b) noexcept { return vaddq_f64(a, b); }
  static Vec sub(Vec a, Vec b) noexcept { return vsubq_f64(a, b); }
  static Vec mul(Vec a, Vec b) noexcept { return vmulq_f64(a, b); }
  static Vec div(Vec a, Vec b) noexcept { return vdivq_f64(a, b); }
  static Vec sqrt(Vec a) noexcept { return vsqrtq_f64(a); }
  static Vec mul_add(Vec a, Vec b, Vec acc) noexcept { return vaddq_f64(acc, vmulq_f64(a, b)); }
  static double sum_lanes(Vec v) noexcept { return vgetq_lane_f64(v, 0) + vgetq_lane_f64(v, 1); }
};
#endif  // BURTORCH_SIMD_NEON_F64
#endif  // BURTORCH_SIMD_NEON

#if BURTORCH_SIMD_MVE
// Helium predicates lanes (vctp32q: the first count lanes): tails load
// with the other lanes zeroed and store only the first lanes.
template <>
struct Vector<Mve, float> : Float32x4 {
  static constexpr bool kMasked = true;
  static constexpr bool kDivSqrt = false;
  // BURTORCH_CONFIG_SIMD_FMA: vfmaq (one rounding) in dot, sum_squares and
  // axpy; else vmulq + vaddq, bitwise the reference.
  static constexpr bool kFused = BURTORCH_SIMD_MVE_FMA != 0;
  static Vec mul_add(Vec a, Vec b, Vec acc) noexcept {
#if BURTORCH_SIMD_MVE_FMA
    return vfmaq_f32(acc, a, b);
#else
    return vaddq_f32(acc, vmulq_f32(a, b));
#endif
  }
  static Vec load_first(const float* p, std::size_t count) noexcept {
    return vldrwq_z_f32(p, vctp32q(static_cast<std::uint32_t>(count)));
  }
  static void store_first(float* p, Vec v, std::size_t count) noexcept {
    vstrwq_p_f32(p, v, vctp32q(static_cast<std::uint32_t>(count)));
  }
};
#endif  // BURTORCH_SIMD_MVE

}  // namespace isa
}  // namespace simd
}  // namespace burtorch

#endif  // BURTORCH_LIB_SIMD_ARM_HPP
