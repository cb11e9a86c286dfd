// SPDX-License-Identifier: Apache-2.0
// isa::Kernels (lib/simd/isa.hpp): every implementation of the kernels that
// this build contains, out of line, for tests/core/test_simd.cpp. Programs that
// only call the public functions do not link this object.
#include <cstddef>

#include "arm.hpp"
#include "isa.hpp"
#include "kernels.hpp"
#include "vfp.hpp"
#include "x86.hpp"

namespace burtorch {
namespace simd {
namespace isa {

// Inline<I> out of line; sum_squares is dot(x, x).
template <class I, class T>
T Kernels<I, T>::dot(const T* a, const T* b, std::size_t n) noexcept {
  return Inline<I>::dot(a, b, n);
}
template <class I, class T>
T Kernels<I, T>::sum_squares(const T* x, std::size_t n) noexcept {
  return dot(x, x, n);
}
template <class I, class T>
void Kernels<I, T>::axpy(T* y, T alpha, const T* x, std::size_t n) noexcept {
  Inline<I>::axpy(y, alpha, x, n);
}
template <class I, class T>
void Kernels<I, T>::scale(T* x, T s, std::size_t n) noexcept {
  Inline<I>::scale(x, s, n);
}
template <class I, class T>
void Kernels<I, T>::sgd_step(T* w, const T* g, T lr, std::size_t n) noexcept {
  Inline<I>::sgd_step(w, g, lr, n);
}
template <class I, class T>
void Kernels<I, T>::sgd_step(T* w, const T* g, T lr, T scale, std::size_t n) noexcept {
  Inline<I>::sgd_step(w, g, lr, scale, n);
}
template <class I, class T>
void Kernels<I, T>::momentum_step(T* w, T* buf, const T* g, T lr, T momentum, bool first, T scale,
                                  std::size_t n) noexcept {
  Inline<I>::momentum_step(w, buf, g, lr, momentum, first, scale, n);
}
template <class I, class T>
void Kernels<I, T>::adam_step(T* w, T* m, T* v, const T* g, const AdamStep<T>& p, T scale, std::size_t n) noexcept {
  Inline<I>::adam_step(w, m, v, g, p, scale, n);
}
template <class I, class T>
void Kernels<I, T>::momentum_step(T* w, T* buf, const T* g, T lr, T momentum, bool first, std::size_t n) noexcept {
  Inline<I>::momentum_step(w, buf, g, lr, momentum, first, n);
}
template <class I, class T>
void Kernels<I, T>::adam_step(T* w, T* m, T* v, const T* g, const AdamStep<T>& p, std::size_t n) noexcept {
  Inline<I>::adam_step(w, m, v, g, p, n);
}

template struct Kernels<Reference, float>;
template struct Kernels<Reference, double>;
#if BURTORCH_SIMD_SSE2
template struct Kernels<Sse2, float>;
template struct Kernels<Sse2, double>;
#endif
#if BURTORCH_SIMD_AVX2
template struct Kernels<Avx2, float>;
template struct Kernels<Avx2, double>;
#endif
#if BURTORCH_SIMD_NEON
template struct Kernels<Neon, float>;
#if BURTORCH_SIMD_NEON_F64
template struct Kernels<Neon, double>;
#endif
#endif
#if BURTORCH_SIMD_MVE
template struct Kernels<Mve, float>;
#endif
#if BURTORCH_SIMD_VFP
template struct Kernels<Vfp, float>;  // also on the Cortex-M55, whose float kernels are Helium's
#if BURTORCH_SIMD_VFP_F64
template struct Kernels<Vfp, double>;
#endif
#endif

}  // namespace isa
}  // namespace simd
}  // namespace burtorch
