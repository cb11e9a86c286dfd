// SPDX-License-Identifier: Apache-2.0
/// @file
/// Kernels over contiguous ranges: inner products, sums of squares and
/// axpy-style gradient updates. The tape uses them for inner products whose
/// operands are runs of consecutive nodes (weights, embedding rows, layer
/// outputs) and their backward. The optimizers' update kernels, declared and
/// selected the same way, are in nn/optim_kernels.hpp.
///
/// Each kernel is declared once for float, once for double and once as a
/// template for any other scalar type. The float and double functions are
/// the kernels of the implementation selected when the library was compiled
/// (no run-time dispatch, no function pointers, no forwarding call):
///   reference   portable scalar C++: the templates below, which define
///               every result; used on targets without a vector unit
///   sse2        x86-64 baseline (every x86-64 build)
///   avx2        x86-64 with -mavx2 (e.g. -march=native); with -mfma and
///               BURTORCH_CONFIG_SIMD_FMA 1 it fuses multiply-adds
///   neon        AArch64 (float and double) and ARMv7-A with -mfpu=neon
///               (float only; ARMv7 Neon flushes subnormals to zero)
///   mve         Cortex-M55 Helium (float only; no vector sqrt/divide, so
///               the Adam step stays scalar)
/// simd::isa_float()/isa_double() name the selected ones.
/// BURTORCH_CONFIG_SIMD 0 selects the reference everywhere, and so do
/// unoptimised (-O0) builds. The templates (any other T) always run the
/// reference loops, compiled with the caller's flags.
///
/// Results. Every reduction (dot, sum_squares) keeps P = partials<T>()
/// partial sums (16 for float, 8 for double), all starting at +0: element
/// i is added to partial i mod P in index order, and the partials are
/// combined by halving (p[k] += p[k + h] for h = P/2, P/4, ..., 1). Every
/// vector width used here (2, 4, 8 or 16 lanes)
/// computes exactly that, so without fused multiply-add all implementations
/// give the same bits as the reference, on every target (ARMv7 Neon aside
/// for subnormals). With fused multiply-add (avx2+fma) dot, sum_squares and
/// axpy round once per term instead of twice: not bitwise equal, but within
/// a few units in the last place per term. Element-wise optimizer steps
/// never fuse: they are bitwise equal to the reference everywhere. The
/// library compiles its kernels with -ffp-contract=off; a program that
/// instantiates a template for its own type decides that with its own flags.
///
/// Ranges must not overlap unless they are identical (y == x in axpy).
#ifndef BURTORCH_CORE_SIMD_HPP
#define BURTORCH_CORE_SIMD_HPP

#include <cstddef>

#include "burtorch/config.hpp"
#include "burtorch/scalar.hpp"

/// @name Implementations in this build
/// Which implementations this build contains (0 or 1), from the compiler's
/// target macros. Unoptimised builds (-O0, no `__OPTIMIZE__`) use the
/// reference: unoptimised intrinsics code keeps every vector temporary in its
/// own stack slot (frames of about 1 KB, over the stack budgets of
/// tools/gates/stack-budget.txt) and gains no speed.
/// @{
#if defined(__OPTIMIZE__)
#define BURTORCH_SIMD_OPTIMIZED 1  ///< 1: an optimised build (`__OPTIMIZE__`)
#else
#define BURTORCH_SIMD_OPTIMIZED 0  ///< 1: an optimised build (`__OPTIMIZE__`)
#endif
#if BURTORCH_CONFIG_SIMD && BURTORCH_SIMD_OPTIMIZED && (defined(__SSE2__) || defined(__x86_64__))
#define BURTORCH_SIMD_SSE2 1  ///< 1: the SSE2 kernels (x86)
#else
#define BURTORCH_SIMD_SSE2 0  ///< 1: the SSE2 kernels (x86)
#endif
#if BURTORCH_CONFIG_SIMD && BURTORCH_SIMD_OPTIMIZED && defined(__AVX2__)
#define BURTORCH_SIMD_AVX2 1  ///< 1: the AVX2 kernels
#else
#define BURTORCH_SIMD_AVX2 0  ///< 1: the AVX2 kernels
#endif
#if BURTORCH_SIMD_AVX2 && BURTORCH_CONFIG_SIMD_FMA && defined(__FMA__)
#define BURTORCH_SIMD_AVX2_FMA 1  ///< 1: the AVX2 kernels with fused multiply-add
#else
#define BURTORCH_SIMD_AVX2_FMA 0  ///< 1: the AVX2 kernels with fused multiply-add
#endif
#if BURTORCH_CONFIG_SIMD && BURTORCH_SIMD_OPTIMIZED && (defined(__ARM_NEON) || defined(__ARM_NEON__)) && !defined(__ARM_FEATURE_MVE)
#define BURTORCH_SIMD_NEON 1  ///< 1: the Neon kernels (Arm)
#else
#define BURTORCH_SIMD_NEON 0  ///< 1: the Neon kernels (Arm)
#endif
#if BURTORCH_SIMD_NEON && defined(__aarch64__)
#define BURTORCH_SIMD_NEON_F64 1  ///< 1: Neon kernels for double (AArch64)
#else
#define BURTORCH_SIMD_NEON_F64 0  ///< 1: Neon kernels for double (AArch64)
#endif
#if BURTORCH_CONFIG_SIMD && BURTORCH_SIMD_OPTIMIZED && defined(__ARM_FEATURE_MVE) && ((__ARM_FEATURE_MVE & 2) != 0)
#define BURTORCH_SIMD_MVE 1  ///< 1: the Helium (MVE) kernels (Cortex-M55)
#else
#define BURTORCH_SIMD_MVE 0  ///< 1: the Helium (MVE) kernels (Cortex-M55)
#endif
#if BURTORCH_SIMD_MVE && BURTORCH_CONFIG_SIMD_FMA && defined(__ARM_FEATURE_FMA)
#define BURTORCH_SIMD_MVE_FMA 1  ///< 1: the Helium kernels with fused multiply-add
#else
#define BURTORCH_SIMD_MVE_FMA 0  ///< 1: the Helium kernels with fused multiply-add
#endif
#if BURTORCH_CONFIG_SIMD && BURTORCH_SIMD_OPTIMIZED && defined(__ARM_ARCH_PROFILE) && (__ARM_ARCH_PROFILE == 'M') && \
    defined(__ARM_FP)
#define BURTORCH_SIMD_VFP 1  ///< 1: the scalar-FPU kernels of in-order cores (Cortex-M4F/M7/M33/M55)
#else
#define BURTORCH_SIMD_VFP 0  ///< 1: the scalar-FPU kernels of in-order cores (Cortex-M4F/M7/M33/M55)
#endif
#if BURTORCH_SIMD_VFP && ((__ARM_FP & 4) != 0) && !BURTORCH_SIMD_MVE
#define BURTORCH_SIMD_VFP_F32 1  ///< 1: the scalar-FPU kernels for float (no Helium)
#else
#define BURTORCH_SIMD_VFP_F32 0  ///< 1: the scalar-FPU kernels for float (no Helium)
#endif
#if BURTORCH_SIMD_VFP && ((__ARM_FP & 8) != 0)
#define BURTORCH_SIMD_VFP_F64 1  ///< 1: the scalar-FPU kernels for double (FPv5-D16)
#else
#define BURTORCH_SIMD_VFP_F64 0  ///< 1: the scalar-FPU kernels for double (FPv5-D16)
#endif
#if BURTORCH_SIMD_VFP && BURTORCH_CONFIG_SIMD_FMA && defined(__ARM_FEATURE_FMA)
#define BURTORCH_SIMD_VFP_FMA 1  ///< 1: the scalar-FPU kernels with fused multiply-add
#else
#define BURTORCH_SIMD_VFP_FMA 0  ///< 1: the scalar-FPU kernels with fused multiply-add
#endif
/// 1: the selected float kernels fuse the multiply-adds of dot, sum_squares
/// and axpy (round once per term); 0: bitwise the reference.
#if BURTORCH_SIMD_AVX2_FMA || BURTORCH_SIMD_MVE_FMA || (BURTORCH_SIMD_VFP_F32 && BURTORCH_SIMD_VFP_FMA)
#define BURTORCH_SIMD_FUSED_FLOAT 1
#else
#define BURTORCH_SIMD_FUSED_FLOAT 0
#endif
/// The same for the double kernels.
#if BURTORCH_SIMD_AVX2_FMA || (BURTORCH_SIMD_VFP_F64 && BURTORCH_SIMD_VFP_FMA)
#define BURTORCH_SIMD_FUSED_DOUBLE 1
#else
#define BURTORCH_SIMD_FUSED_DOUBLE 0
#endif
/// @}

namespace burtorch {
namespace simd {

/// Partial sums of a reduction over T: the largest power of two P with
/// P * sizeof(T) <= 64 (one 64-byte block of accumulators), at least 1:
/// 16 for float, 8 for double.
template <class T>
constexpr std::size_t partials() noexcept {
  std::size_t p = 1U;
  while (((p * 2U) * sizeof(T)) <= 64U) {
    p *= 2U;
  }
  return p;
}

/// Names of the selected implementations, e.g. "avx2+fma" or "reference".
/// @{
const char* isa_float() noexcept;
const char* isa_double() noexcept;
/// @}

namespace detail {
// Combines the partial sums p[0..P) of a reduction by halving: p[k] +=
// p[k + h] for h = P/2, ..., 1; the result is p[0]. Partials start at +0 and
// can never become -0 (in round-to-nearest x + y is -0 only if both are -0),
// so partials that received no term add an exact +0: padding a short range
// with zero terms (masked or zero-filled vector lanes) changes no bit.
template <class T>
inline T combine(T* p) noexcept {
  constexpr std::size_t kP = partials<T>();
#if !defined(__OPTIMIZE_SIZE__)
#pragma GCC unroll 8  // BT-DEV-015: constant indices keep the partials in registers (not at -Os)
#endif
  for (std::size_t h = kP / 2U; h > 0U; h /= 2U) {
#if !defined(__OPTIMIZE_SIZE__)
#pragma GCC unroll 8  // BT-DEV-015: constant indices keep the partials in registers (not at -Os)
#endif
    for (std::size_t k = 0U; k < h; ++k) {
      p[k] += p[k + h];
    }
  }
  return p[0];
}
}  // namespace detail

// The kernels. Each comes as three overloads: float and double, the
// implementation selected when the library was compiled (defined in the
// library, so a program compiled with other flags than the library still
// calls the library's choice), and a template for any other scalar type T
// (long double, burtorch/lanes/lanes.hpp, ...), which is the reference loop: the
// definition of the results, also what the reference implementation runs
// for float and double, and what the vector implementations run on the
// elements after their last whole vector. A call picks the float or double
// overload whenever its arguments are float or double; simd::dot<float>
// (template arguments given) names the reference loop itself.

/// Sum of a[i] * b[i] for i < n, in the order of the file comment (P
/// partial sums of index order, combined by halving). The reference loop
/// runs whole blocks of P terms, one per partial, then the tail; except at
/// -Os both are unrolled to constant indices so the partials stay in
/// registers on cores without vector units (Cortex-M4 at -O2: 27% fewer
/// instructions per training step of a 64-128-10 MLP,
/// docs/mcu-instructions.md); the same operations in the same order, so the
/// same bits.
/// @{
float dot(const float* a, const float* b, std::size_t n) noexcept;
double dot(const double* a, const double* b, std::size_t n) noexcept;
template <class T>
T dot(const T* a, const T* b, std::size_t n) noexcept {
  constexpr std::size_t kP = partials<T>();
  T p[kP] = {};
#if defined(__OPTIMIZE_SIZE__)
  for (std::size_t i = 0U; i < n; ++i) {  // -Os: the compact loop (the unrolled one is 0.9 KB more on Cortex-M4)
    p[i % kP] += a[i] * b[i];
  }
#else
  std::size_t i = 0U;
  for (; (n - i) >= kP; i += kP) {
#pragma GCC unroll 16  // BT-DEV-015: keeps the partial sums in registers
    for (std::size_t k = 0U; k < kP; ++k) {
      p[k] += a[i + k] * b[i + k];
    }
  }
  const std::size_t tail = n - i;
#pragma GCC unroll 16  // BT-DEV-015: keeps the partial sums in registers
  for (std::size_t k = 0U; k < kP; ++k) {
    if (k < tail) {
      p[k] += a[i + k] * b[i + k];
    }
  }
#endif
  return detail::combine(p);
}
/// @}

/// Sum of x[i]^2 for i < n: dot(x, x, n).
/// @{
float sum_squares(const float* x, std::size_t n) noexcept;
double sum_squares(const double* x, std::size_t n) noexcept;
template <class T>
T sum_squares(const T* x, std::size_t n) noexcept {
  return dot<T>(x, x, n);
}
/// @}

/// y[i] += alpha * x[i] for i < n.
/// @{
void axpy(float* y, float alpha, const float* x, std::size_t n) noexcept;
void axpy(double* y, double alpha, const double* x, std::size_t n) noexcept;
template <class T>
void axpy(T* y, T alpha, const T* x, std::size_t n) noexcept {
  for (std::size_t i = 0U; i < n; ++i) {
    y[i] += alpha * x[i];
  }
}
/// @}

/// x[i] *= s for i < n.
/// @{
void scale(float* x, float s, std::size_t n) noexcept;
void scale(double* x, double s, std::size_t n) noexcept;
template <class T>
void scale(T* x, T s, std::size_t n) noexcept {
  for (std::size_t i = 0U; i < n; ++i) {
    x[i] *= s;
  }
}
/// @}

}  // namespace simd
}  // namespace burtorch

#endif  // BURTORCH_CORE_SIMD_HPP
