// SPDX-License-Identifier: Apache-2.0
/// @file
/// Kernels over contiguous ranges of float or double: inner products,
/// axpy-style gradient updates and optimizer steps. The tape uses them for
/// inner products whose operands are runs of consecutive nodes (weights,
/// embedding rows, layer outputs) and their backward; the optimizers use
/// them over the parameter range.
///
/// One interface, several implementations chosen when the library is
/// compiled (no run-time dispatch, no function pointers):
///   reference   portable scalar C++, always built: the definition of every
///               result, used on targets without a vector unit
///   sse2        x86-64 baseline (every x86-64 build)
///   avx2        x86-64 with -mavx2 (e.g. -march=native); with -mfma and
///               BURTORCH_CONFIG_SIMD_FMA 1 it fuses multiply-adds
///   neon        AArch64 (float and double) and ARMv7-A with -mfpu=neon
///               (float only; ARMv7 Neon flushes subnormals to zero)
///   mve         Cortex-M55 Helium (float only; no vector sqrt/divide, so
///               the Adam step stays scalar)
/// simd::isa_float()/isa_double() name the selected sets.
/// BURTORCH_CONFIG_SIMD 0 selects the reference everywhere, and so do
/// unoptimised (-O0) builds.
///
/// Results. Every reduction (dot, sum_squares) keeps P = 64 / sizeof(T)
/// partial sums (16 for float, 8 for double), all starting at +0: element
/// i is added to partial i mod P in index order, and the partials are
/// combined by halving (p[k] += p[k + h] for h = P/2, P/4, ..., 1). Every
/// vector width used here (2, 4, 8 or 16 lanes)
/// computes exactly that, so without fused multiply-add all implementations
/// give the same bits as the reference, on every target (ARMv7 Neon aside
/// for subnormals). With fused multiply-add (avx2+fma) dot, sum_squares and
/// axpy round once per term instead of twice: not bitwise equal, but within
/// a few units in the last place per term. Element-wise optimizer steps
/// never fuse: they are bitwise equal to the reference everywhere.
///
/// Ranges must not overlap unless they are identical (y == x in axpy).
#ifndef BURTORCH_SIMD_HPP
#define BURTORCH_SIMD_HPP

#include <cstddef>

#include "burtorch/config.hpp"

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
/// @}

namespace burtorch {
namespace simd {

/// Partial sums of a reduction: one 64-byte block of accumulators.
template <class T>
constexpr std::size_t partials() noexcept {
  return 64U / sizeof(T);
}

/// One Adam/AdamW update, in the order of torch.optim (1.13, single tensor):
///   w *= decay (AdamW only); m = m*beta1 + g*(1-beta1);
///   v = v*beta2 + (g*g)*(1-beta2); w += -step_size * (m / (sqrt(v)/c2 + eps))
/// with step_size = lr / (1 - beta1^t) and c2 = sqrt(1 - beta2^t).
template <class T>
struct AdamStep {
  T step_size;         ///< lr / (1 - beta1^t)
  T beta1;             ///< first-moment decay
  T beta2;             ///< second-moment decay
  T correction2_sqrt;  ///< sqrt(1 - beta2^t)
  T eps;               ///< added to the denominator
  T decay;  ///< 1 - lr * weight_decay
  bool decoupled;  ///< true: AdamW (apply decay)
};

/// @cond INTERNAL
// Declare the kernel set of one implementation (no macro parameters: the
// two lists are spelled out per scalar type).
#define BURTORCH_SIMD_DECLARE_FLOAT \
  /* sum of a[i] * b[i] */                                                                                            \
  float dot(const float* a, const float* b, std::size_t n) noexcept;                                                  \
  /* sum of x[i]^2 */                                                                                                 \
  float sum_squares(const float* x, std::size_t n) noexcept;                                                          \
  /* y[i] += alpha * x[i] */                                                                                          \
  void axpy(float* y, float alpha, const float* x, std::size_t n) noexcept;                                           \
  /* x[i] *= s */                                                                                                     \
  void scale(float* x, float s, std::size_t n) noexcept;                                                              \
  /* w[i] -= lr * g[i] */                                                                                             \
  void sgd_step(float* w, const float* g, float lr, std::size_t n) noexcept;                                          \
  /* buf = first ? g : buf * momentum + g; w -= lr * buf (torch.optim.SGD) */                                         \
  void momentum_step(float* w, float* buf, const float* g, float lr, float momentum, bool first,                      \
                     std::size_t n) noexcept;                                                                         \
  void adam_step(float* w, float* m, float* v, const float* g, const AdamStep<float>& p, std::size_t n) noexcept;

#define BURTORCH_SIMD_DECLARE_DOUBLE \
  /* sum of a[i] * b[i] */                                                                                            \
  double dot(const double* a, const double* b, std::size_t n) noexcept;                                               \
  /* sum of x[i]^2 */                                                                                                 \
  double sum_squares(const double* x, std::size_t n) noexcept;                                                        \
  /* y[i] += alpha * x[i] */                                                                                          \
  void axpy(double* y, double alpha, const double* x, std::size_t n) noexcept;                                        \
  /* x[i] *= s */                                                                                                     \
  void scale(double* x, double s, std::size_t n) noexcept;                                                            \
  /* w[i] -= lr * g[i] */                                                                                             \
  void sgd_step(double* w, const double* g, double lr, std::size_t n) noexcept;                                       \
  /* buf = first ? g : buf * momentum + g; w -= lr * buf (torch.optim.SGD) */                                         \
  void momentum_step(double* w, double* buf, const double* g, double lr, double momentum, bool first,                \
                     std::size_t n) noexcept;                                                                         \
  void adam_step(double* w, double* m, double* v, const double* g, const AdamStep<double>& p,                         \
                 std::size_t n) noexcept;

namespace reference {
BURTORCH_SIMD_DECLARE_FLOAT
BURTORCH_SIMD_DECLARE_DOUBLE
}  // namespace reference

#if BURTORCH_SIMD_SSE2
namespace sse2 {
BURTORCH_SIMD_DECLARE_FLOAT
BURTORCH_SIMD_DECLARE_DOUBLE
}  // namespace sse2
#endif

#if BURTORCH_SIMD_AVX2
namespace avx2 {
BURTORCH_SIMD_DECLARE_FLOAT
BURTORCH_SIMD_DECLARE_DOUBLE
}  // namespace avx2
#endif

#if BURTORCH_SIMD_NEON
namespace neon {
BURTORCH_SIMD_DECLARE_FLOAT
#if BURTORCH_SIMD_NEON_F64
BURTORCH_SIMD_DECLARE_DOUBLE
#endif
}  // namespace neon
#endif

#if BURTORCH_SIMD_MVE
namespace mve {
BURTORCH_SIMD_DECLARE_FLOAT
}  // namespace mve
#endif

/// @endcond

/// Names of the selected implementations, e.g. "avx2+fma" or "reference".
/// @{
const char* isa_float() noexcept;
const char* isa_double() noexcept;
/// @}

/// The kernels the library uses: the implementation selected when the
/// library was compiled (defined in lib/simd/reference.cpp, so a program
/// compiled with other flags than the library still calls the library's
/// choice).
/// @cond INTERNAL
BURTORCH_SIMD_DECLARE_FLOAT
BURTORCH_SIMD_DECLARE_DOUBLE
/// @endcond

#undef BURTORCH_SIMD_DECLARE_FLOAT
#undef BURTORCH_SIMD_DECLARE_DOUBLE

}  // namespace simd
}  // namespace burtorch

#endif  // BURTORCH_SIMD_HPP
