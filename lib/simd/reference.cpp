// The reference kernels: portable scalar C++ (burtorch/simd.hpp), and the
// names of the selected implementations.
#include "common.hpp"

namespace burtorch {
namespace simd {

#define BURTORCH_SIMD_REFERENCE(T)                                                                          \
  T dot(const T* a, const T* b, std::size_t n) noexcept { return detail::dot(a, b, n); }                   \
  T sum_squares(const T* x, std::size_t n) noexcept { return detail::sum_squares(x, n); }                  \
  void axpy(T* y, T alpha, const T* x, std::size_t n) noexcept { detail::axpy(y, alpha, x, 0U, n); }       \
  void scale(T* x, T s, std::size_t n) noexcept { detail::scale(x, s, 0U, n); }                            \
  void sgd_step(T* w, const T* g, T lr, std::size_t n) noexcept { detail::sgd_step(w, g, lr, 0U, n); }     \
  void momentum_step(T* w, T* buf, const T* g, T lr, T momentum, bool first, std::size_t n) noexcept {     \
    detail::momentum_step(w, buf, g, lr, momentum, first, 0U, n);                                          \
  }                                                                                                         \
  void adam_step(T* w, T* m, T* v, const T* g, const AdamStep<T>& p, std::size_t n) noexcept {             \
    detail::adam_step(w, m, v, g, p, 0U, n);                                                               \
  }

namespace reference {
BURTORCH_SIMD_REFERENCE(float)
BURTORCH_SIMD_REFERENCE(double)
}  // namespace reference

#undef BURTORCH_SIMD_REFERENCE

const char* isa_float() noexcept {
#if BURTORCH_SIMD_AVX2_FMA
  return "avx2+fma";
#elif BURTORCH_SIMD_AVX2
  return "avx2";
#elif BURTORCH_SIMD_SSE2
  return "sse2";
#elif BURTORCH_SIMD_NEON
  return "neon";
#elif BURTORCH_SIMD_MVE
  return "mve";
#else
  return "reference";
#endif
}

const char* isa_double() noexcept {
#if BURTORCH_SIMD_AVX2_FMA
  return "avx2+fma";
#elif BURTORCH_SIMD_AVX2
  return "avx2";
#elif BURTORCH_SIMD_SSE2
  return "sse2";
#elif BURTORCH_SIMD_NEON_F64
  return "neon";
#else
  return "reference";
#endif
}

}  // namespace simd
}  // namespace burtorch
