// Kernels over contiguous ranges of float or double: inner products,
// axpy-style gradient updates and optimizer steps. The tape uses them for
// inner products whose operands are runs of consecutive nodes (weights,
// embedding rows, layer outputs) and their backward; the optimizers use
// them over the parameter range.
//
// One interface, several implementations chosen when the library is
// compiled (no run-time dispatch, no function pointers):
//   reference   portable scalar C++, always built: the definition of every
//               result, used on targets without a vector unit
//   sse2        x86-64 baseline (every x86-64 build)
//   avx2        x86-64 with -mavx2 (e.g. -march=native); with -mfma and
//               BURTORCH_CONFIG_SIMD_FMA 1 it fuses multiply-adds
//   neon        AArch64 (float and double) and ARMv7-A with -mfpu=neon
//               (float only; ARMv7 Neon flushes subnormals to zero)
//   mve         Cortex-M55 Helium (float only; no vector sqrt/divide, so
//               the Adam step stays scalar)
// simd::isa() names the selected set. BURTORCH_CONFIG_SIMD 0 selects the
// reference everywhere.
//
// Results. Every reduction (dot, sum_squares) keeps P = 64 / sizeof(T)
// partial sums (16 for float, 8 for double), all starting at +0: element
// i is added to partial i mod P in index order, and the partials are
// combined by halving (p[k] += p[k + h] for h = P/2, P/4, ..., 1). Every
// vector width used here (2, 4, 8 or 16 lanes)
// computes exactly that, so without fused multiply-add all implementations
// give the same bits as the reference, on every target (ARMv7 Neon aside
// for subnormals). With fused multiply-add (avx2+fma) dot, sum_squares and
// axpy round once per term instead of twice: not bitwise equal, but within
// a few units in the last place per term. Element-wise optimizer steps
// never fuse: they are bitwise equal to the reference everywhere.
//
// Ranges must not overlap unless they are identical (y == x in axpy).
#ifndef BURTORCH_SIMD_HPP
#define BURTORCH_SIMD_HPP

#include <cstddef>

#include "burtorch/config.hpp"

// Which implementations this build contains (0 or 1), from the compiler's
// target macros.
#if BURTORCH_CONFIG_SIMD && (defined(__SSE2__) || defined(__x86_64__))
#define BURTORCH_SIMD_SSE2 1
#else
#define BURTORCH_SIMD_SSE2 0
#endif
#if BURTORCH_CONFIG_SIMD && defined(__AVX2__)
#define BURTORCH_SIMD_AVX2 1
#else
#define BURTORCH_SIMD_AVX2 0
#endif
#if BURTORCH_SIMD_AVX2 && BURTORCH_CONFIG_SIMD_FMA && defined(__FMA__)
#define BURTORCH_SIMD_AVX2_FMA 1
#else
#define BURTORCH_SIMD_AVX2_FMA 0
#endif
#if BURTORCH_CONFIG_SIMD && (defined(__ARM_NEON) || defined(__ARM_NEON__)) && !defined(__ARM_FEATURE_MVE)
#define BURTORCH_SIMD_NEON 1
#else
#define BURTORCH_SIMD_NEON 0
#endif
#if BURTORCH_SIMD_NEON && defined(__aarch64__)
#define BURTORCH_SIMD_NEON_F64 1
#else
#define BURTORCH_SIMD_NEON_F64 0
#endif
#if BURTORCH_CONFIG_SIMD && defined(__ARM_FEATURE_MVE) && ((__ARM_FEATURE_MVE & 2) != 0)
#define BURTORCH_SIMD_MVE 1
#else
#define BURTORCH_SIMD_MVE 0
#endif

namespace burtorch {
namespace simd {

// Partial sums of a reduction: one 64-byte block of accumulators.
template <class T>
constexpr std::size_t partials() noexcept {
  return 64U / sizeof(T);
}

// One Adam/AdamW update, in the order of torch.optim (1.13, single tensor):
//   w *= decay (AdamW only); m = m*beta1 + g*(1-beta1);
//   v = v*beta2 + (g*g)*(1-beta2); w += -step_size * (m / (sqrt(v)/c2 + eps))
// with step_size = lr / (1 - beta1^t) and c2 = sqrt(1 - beta2^t).
template <class T>
struct AdamStep {
  T step_size;
  T beta1;
  T beta2;
  T correction2_sqrt;
  T eps;
  T decay;  // 1 - lr * weight_decay
  bool decoupled;
};

// Declares the kernel set of one implementation for scalar type T.
#define BURTORCH_SIMD_DECLARE(T)                                                                   \
  /* sum of a[i] * b[i] */                                                                         \
  T dot(const T* a, const T* b, std::size_t n) noexcept;                                           \
  /* sum of x[i]^2 */                                                                              \
  T sum_squares(const T* x, std::size_t n) noexcept;                                               \
  /* y[i] += alpha * x[i] */                                                                       \
  void axpy(T* y, T alpha, const T* x, std::size_t n) noexcept;                                    \
  /* x[i] *= s */                                                                                  \
  void scale(T* x, T s, std::size_t n) noexcept;                                                   \
  /* w[i] -= lr * g[i] */                                                                          \
  void sgd_step(T* w, const T* g, T lr, std::size_t n) noexcept;                                   \
  /* buf = first ? g : buf * momentum + g; w -= lr * buf (torch.optim.SGD) */                      \
  void momentum_step(T* w, T* buf, const T* g, T lr, T momentum, bool first, std::size_t n) noexcept; \
  void adam_step(T* w, T* m, T* v, const T* g, const AdamStep<T>& p, std::size_t n) noexcept;

namespace reference {
BURTORCH_SIMD_DECLARE(float)
BURTORCH_SIMD_DECLARE(double)
}  // namespace reference

#if BURTORCH_SIMD_SSE2
namespace sse2 {
BURTORCH_SIMD_DECLARE(float)
BURTORCH_SIMD_DECLARE(double)
}  // namespace sse2
#endif

#if BURTORCH_SIMD_AVX2
namespace avx2 {
BURTORCH_SIMD_DECLARE(float)
BURTORCH_SIMD_DECLARE(double)
}  // namespace avx2
#endif

#if BURTORCH_SIMD_NEON
namespace neon {
BURTORCH_SIMD_DECLARE(float)
#if BURTORCH_SIMD_NEON_F64
BURTORCH_SIMD_DECLARE(double)
#endif
}  // namespace neon
#endif

#if BURTORCH_SIMD_MVE
namespace mve {
BURTORCH_SIMD_DECLARE(float)
}  // namespace mve
#endif

#undef BURTORCH_SIMD_DECLARE

// The selected implementation, per scalar type.
#if BURTORCH_SIMD_AVX2
namespace for_float = avx2;
namespace for_double = avx2;
#elif BURTORCH_SIMD_SSE2
namespace for_float = sse2;
namespace for_double = sse2;
#elif BURTORCH_SIMD_NEON_F64
namespace for_float = neon;
namespace for_double = neon;
#elif BURTORCH_SIMD_NEON
namespace for_float = neon;
namespace for_double = reference;
#elif BURTORCH_SIMD_MVE
namespace for_float = mve;
namespace for_double = reference;
#else
namespace for_float = reference;
namespace for_double = reference;
#endif

// Names of the selected implementations, e.g. "avx2+fma" / "avx2+fma".
const char* isa_float() noexcept;
const char* isa_double() noexcept;

// The kernels the library uses: the selected implementation.
inline float dot(const float* a, const float* b, std::size_t n) noexcept { return for_float::dot(a, b, n); }
inline double dot(const double* a, const double* b, std::size_t n) noexcept { return for_double::dot(a, b, n); }
inline float sum_squares(const float* x, std::size_t n) noexcept { return for_float::sum_squares(x, n); }
inline double sum_squares(const double* x, std::size_t n) noexcept { return for_double::sum_squares(x, n); }
inline void axpy(float* y, float alpha, const float* x, std::size_t n) noexcept { for_float::axpy(y, alpha, x, n); }
inline void axpy(double* y, double alpha, const double* x, std::size_t n) noexcept {
  for_double::axpy(y, alpha, x, n);
}
inline void scale(float* x, float s, std::size_t n) noexcept { for_float::scale(x, s, n); }
inline void scale(double* x, double s, std::size_t n) noexcept { for_double::scale(x, s, n); }
inline void sgd_step(float* w, const float* g, float lr, std::size_t n) noexcept { for_float::sgd_step(w, g, lr, n); }
inline void sgd_step(double* w, const double* g, double lr, std::size_t n) noexcept {
  for_double::sgd_step(w, g, lr, n);
}
inline void momentum_step(float* w, float* buf, const float* g, float lr, float momentum, bool first,
                          std::size_t n) noexcept {
  for_float::momentum_step(w, buf, g, lr, momentum, first, n);
}
inline void momentum_step(double* w, double* buf, const double* g, double lr, double momentum, bool first,
                          std::size_t n) noexcept {
  for_double::momentum_step(w, buf, g, lr, momentum, first, n);
}
inline void adam_step(float* w, float* m, float* v, const float* g, const AdamStep<float>& p, std::size_t n) noexcept {
  for_float::adam_step(w, m, v, g, p, n);
}
inline void adam_step(double* w, double* m, double* v, const double* g, const AdamStep<double>& p,
                      std::size_t n) noexcept {
  for_double::adam_step(w, m, v, g, p, n);
}

}  // namespace simd
}  // namespace burtorch

#endif  // BURTORCH_SIMD_HPP
