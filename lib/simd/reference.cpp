// SPDX-License-Identifier: Apache-2.0
// The reference kernels (portable scalar C++, burtorch/simd.hpp), the
// kernels the library uses (the implementation selected when it was
// compiled) and the names of the selection.
#include "common.hpp"
#include "select.hpp"

namespace burtorch {
namespace simd {

namespace reference {

float dot(const float* a, const float* b, std::size_t n) noexcept { return detail::dot(a, b, n); }
double dot(const double* a, const double* b, std::size_t n) noexcept { return detail::dot(a, b, n); }
float sum_squares(const float* x, std::size_t n) noexcept { return detail::sum_squares(x, n); }
double sum_squares(const double* x, std::size_t n) noexcept { return detail::sum_squares(x, n); }
void axpy(float* y, float alpha, const float* x, std::size_t n) noexcept { detail::axpy(y, alpha, x, 0U, n); }
void axpy(double* y, double alpha, const double* x, std::size_t n) noexcept { detail::axpy(y, alpha, x, 0U, n); }
void scale(float* x, float s, std::size_t n) noexcept { detail::scale(x, s, 0U, n); }
void scale(double* x, double s, std::size_t n) noexcept { detail::scale(x, s, 0U, n); }
void sgd_step(float* w, const float* g, float lr, std::size_t n) noexcept { detail::sgd_step(w, g, lr, 0U, n); }
void sgd_step(double* w, const double* g, double lr, std::size_t n) noexcept { detail::sgd_step(w, g, lr, 0U, n); }
void momentum_step(float* w, float* buf, const float* g, float lr, float momentum, bool first,
                   std::size_t n) noexcept {
  detail::momentum_step(w, buf, g, lr, momentum, first, 0U, n);
}
void momentum_step(double* w, double* buf, const double* g, double lr, double momentum, bool first,
                   std::size_t n) noexcept {
  detail::momentum_step(w, buf, g, lr, momentum, first, 0U, n);
}
void adam_step(float* w, float* m, float* v, const float* g, const AdamStep<float>& p, std::size_t n) noexcept {
  detail::adam_step(w, m, v, g, p, 0U, n);
}
void adam_step(double* w, double* m, double* v, const double* g, const AdamStep<double>& p,
               std::size_t n) noexcept {
  detail::adam_step(w, m, v, g, p, 0U, n);
}

}  // namespace reference

float dot(const float* a, const float* b, std::size_t n) noexcept { return for_float::dot(a, b, n); }
double dot(const double* a, const double* b, std::size_t n) noexcept { return for_double::dot(a, b, n); }
float sum_squares(const float* x, std::size_t n) noexcept { return for_float::sum_squares(x, n); }
double sum_squares(const double* x, std::size_t n) noexcept { return for_double::sum_squares(x, n); }
void axpy(float* y, float alpha, const float* x, std::size_t n) noexcept { for_float::axpy(y, alpha, x, n); }
void axpy(double* y, double alpha, const double* x, std::size_t n) noexcept { for_double::axpy(y, alpha, x, n); }
void scale(float* x, float s, std::size_t n) noexcept { for_float::scale(x, s, n); }
void scale(double* x, double s, std::size_t n) noexcept { for_double::scale(x, s, n); }
void sgd_step(float* w, const float* g, float lr, std::size_t n) noexcept { for_float::sgd_step(w, g, lr, n); }
void sgd_step(double* w, const double* g, double lr, std::size_t n) noexcept { for_double::sgd_step(w, g, lr, n); }
void momentum_step(float* w, float* buf, const float* g, float lr, float momentum, bool first,
                   std::size_t n) noexcept {
  for_float::momentum_step(w, buf, g, lr, momentum, first, n);
}
void momentum_step(double* w, double* buf, const double* g, double lr, double momentum, bool first,
                   std::size_t n) noexcept {
  for_double::momentum_step(w, buf, g, lr, momentum, first, n);
}
void adam_step(float* w, float* m, float* v, const float* g, const AdamStep<float>& p, std::size_t n) noexcept {
  for_float::adam_step(w, m, v, g, p, n);
}
void adam_step(double* w, double* m, double* v, const double* g, const AdamStep<double>& p,
               std::size_t n) noexcept {
  for_double::adam_step(w, m, v, g, p, n);
}

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
