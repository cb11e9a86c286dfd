// SPDX-License-Identifier: Apache-2.0
// Library-internal: the x86-64 vector traits of lib/simd/kernels.hpp, SSE2
// (every x86-64) and AVX2 (with -mavx2; fused multiply-add with -mfma and
// BURTORCH_CONFIG_SIMD_FMA 1). Reductions hold their 16 (float) or 8
// (double) partial sums in four SSE2 or two AVX2 accumulators. Included
// only by the kernels' sources (lib/simd/*.cpp), compiled with the
// library's flags.
#ifndef BURTORCH_LIB_SIMD_X86_HPP
#define BURTORCH_LIB_SIMD_X86_HPP

#include <cstddef>

#include "kernels.hpp"

#if BURTORCH_SIMD_SSE2
#include <emmintrin.h>
#endif
#if BURTORCH_SIMD_AVX2
#include <immintrin.h>
#endif

namespace burtorch {
namespace simd {
namespace isa {

#if BURTORCH_SIMD_SSE2
template <>
struct Vector<Sse2, float> {
  using Scalar = float;
  using Vec = __m128;
  static constexpr std::size_t kLanes = 4U;
  static constexpr bool kFused = false;
  static constexpr bool kMasked = false;
  static constexpr bool kDivSqrt = true;

  static Vec broadcast(float x) noexcept { return _mm_set1_ps(x); }
  static Vec load(const float* p) noexcept { return _mm_loadu_ps(p); }
  // count is 1 to 3; the lanes are set from scalars, not copied through a
  // buffer in memory (a vector load right after scalar stores stalls).
  static Vec load_first(const float* p, std::size_t count) noexcept {
    const float p1 = (count > 1U) ? p[1] : 0.0F;
    const float p2 = (count > 2U) ? p[2] : 0.0F;
    return _mm_setr_ps(p[0], p1, p2, 0.0F);
  }
  static void store(float* p, Vec v) noexcept { _mm_storeu_ps(p, v); }
  static Vec add(Vec a, Vec b) noexcept { return _mm_add_ps(a, b); }
  static Vec sub(Vec a, Vec b) noexcept { return _mm_sub_ps(a, b); }
  static Vec mul(Vec a, Vec b) noexcept { return _mm_mul_ps(a, b); }
  static Vec div(Vec a, Vec b) noexcept { return _mm_div_ps(a, b); }
  static Vec sqrt(Vec a) noexcept { return _mm_sqrt_ps(a); }
  static Vec mul_add(Vec a, Vec b, Vec acc) noexcept { return _mm_add_ps(acc, _mm_mul_ps(a, b)); }
  // Lanes 0 + 2, 1 + 3, then (0 + 2) + (1 + 3).
  static float sum_lanes(Vec v) noexcept {
    const Vec s = _mm_add_ps(v, _mm_movehl_ps(v, v));
    return _mm_cvtss_f32(_mm_add_ss(s, _mm_shuffle_ps(s, s, 1)));
  }
};

template <>
struct Vector<Sse2, double> {
  using Scalar = double;
  using Vec = __m128d;
  static constexpr std::size_t kLanes = 2U;
  static constexpr bool kFused = false;
  static constexpr bool kMasked = false;
  static constexpr bool kDivSqrt = true;

  static Vec broadcast(double x) noexcept { return _mm_set1_pd(x); }
  static Vec load(const double* p) noexcept { return _mm_loadu_pd(p); }
  // count is 1 (< 2 lanes): one element into lane 0, lane 1 zeroed.
  static Vec load_first(const double* p, std::size_t /*count*/) noexcept { return _mm_load_sd(p); }
  static void store(double* p, Vec v) noexcept { _mm_storeu_pd(p, v); }
  static Vec add(Vec a, Vec b) noexcept { return _mm_add_pd(a, b); }
  static Vec sub(Vec a, Vec b) noexcept { return _mm_sub_pd(a, b); }
  static Vec mul(Vec a, Vec b) noexcept { return _mm_mul_pd(a, b); }
  static Vec div(Vec a, Vec b) noexcept { return _mm_div_pd(a, b); }
  static Vec sqrt(Vec a) noexcept { return _mm_sqrt_pd(a); }
  static Vec mul_add(Vec a, Vec b, Vec acc) noexcept { return _mm_add_pd(acc, _mm_mul_pd(a, b)); }
  static double sum_lanes(Vec v) noexcept { return _mm_cvtsd_f64(_mm_add_sd(v, _mm_unpackhi_pd(v, v))); }
};

#endif  // BURTORCH_SIMD_SSE2

#if BURTORCH_SIMD_AVX2
// AVX2 has masked loads and stores: tails stay in vector registers, so with
// FMA every term of dot and axpy is fused (the scalar reference is not).
template <>
struct Vector<Avx2, float> {
  using Scalar = float;
  using Vec = __m256;
  static constexpr std::size_t kLanes = 8U;
  static constexpr bool kFused = Avx2::kFused;
  static constexpr bool kMasked = true;
  static constexpr bool kDivSqrt = true;

  // All ones in the first count lanes (every lane if count >= 8).
  static __m256i first(std::size_t count) noexcept {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(count)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static Vec broadcast(float x) noexcept { return _mm256_set1_ps(x); }
  static Vec load(const float* p) noexcept { return _mm256_loadu_ps(p); }
  static Vec load_first(const float* p, std::size_t count) noexcept { return _mm256_maskload_ps(p, first(count)); }
  static void store(float* p, Vec v) noexcept { _mm256_storeu_ps(p, v); }
  static void store_first(float* p, Vec v, std::size_t count) noexcept { _mm256_maskstore_ps(p, first(count), v); }
  static Vec add(Vec a, Vec b) noexcept { return _mm256_add_ps(a, b); }
  static Vec sub(Vec a, Vec b) noexcept { return _mm256_sub_ps(a, b); }
  static Vec mul(Vec a, Vec b) noexcept { return _mm256_mul_ps(a, b); }
  static Vec div(Vec a, Vec b) noexcept { return _mm256_div_ps(a, b); }
  static Vec sqrt(Vec a) noexcept { return _mm256_sqrt_ps(a); }
  static Vec mul_add(Vec a, Vec b, Vec acc) noexcept {
#if BURTORCH_SIMD_AVX2_FMA
    return _mm256_fmadd_ps(a, b, acc);
#else
    return _mm256_add_ps(acc, _mm256_mul_ps(a, b));
#endif
  }
  // Lanes k + 4 (upper into lower half), then SSE2's k + 2, k + 1.
  static float sum_lanes(Vec v) noexcept {
    return Vector<Sse2, float>::sum_lanes(_mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1)));
  }
};

template <>
struct Vector<Avx2, double> {
  using Scalar = double;
  using Vec = __m256d;
  static constexpr std::size_t kLanes = 4U;
  static constexpr bool kFused = Avx2::kFused;
  static constexpr bool kMasked = true;
  static constexpr bool kDivSqrt = true;

  // All ones in the first count lanes (every lane if count >= 4).
  static __m256i first(std::size_t count) noexcept {
    return _mm256_cmpgt_epi64(_mm256_set1_epi64x(static_cast<long long>(count)), _mm256_setr_epi64x(0, 1, 2, 3));
  }
  static Vec broadcast(double x) noexcept { return _mm256_set1_pd(x); }
  static Vec load(const double* p) noexcept { return _mm256_loadu_pd(p); }
  static Vec load_first(const double* p, std::size_t count) noexcept { return _mm256_maskload_pd(p, first(count)); }
  static void store(double* p, Vec v) noexcept { _mm256_storeu_pd(p, v); }
  static void store_first(double* p, Vec v, std::size_t count) noexcept { _mm256_maskstore_pd(p, first(count), v); }
  static Vec add(Vec a, Vec b) noexcept { return _mm256_add_pd(a, b); }
  static Vec sub(Vec a, Vec b) noexcept { return _mm256_sub_pd(a, b); }
  static Vec mul(Vec a, Vec b) noexcept { return _mm256_mul_pd(a, b); }
  static Vec div(Vec a, Vec b) noexcept { return _mm256_div_pd(a, b); }
  static Vec sqrt(Vec a) noexcept { return _mm256_sqrt_pd(a); }
  static Vec mul_add(Vec a, Vec b, Vec acc) noexcept {
#if BURTORCH_SIMD_AVX2_FMA
    return _mm256_fmadd_pd(a, b, acc);
#else
    return _mm256_add_pd(acc, _mm256_mul_pd(a, b));
#endif
  }
  // Lanes k + 2 (upper into lower half), then SSE2's k + 1.
  static double sum_lanes(Vec v) noexcept {
    return Vector<Sse2, double>::sum_lanes(_mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1)));
  }
};

#endif  // BURTORCH_SIMD_AVX2

}  // namespace isa
}  // namespace simd
}  // namespace burtorch

#endif  // BURTORCH_LIB_SIMD_X86_HPP
