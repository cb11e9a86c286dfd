// SPDX-License-Identifier: Apache-2.0
// The portable definitions of the kernels in burtorch/simd.hpp, shared by
// the reference implementation and by the vector implementations (for their
// tails, short ranges and steps without a vector form).
#ifndef BURTORCH_LIB_SIMD_COMMON_HPP
#define BURTORCH_LIB_SIMD_COMMON_HPP

#include <cmath>
#include <cstddef>

#include "burtorch/simd.hpp"

namespace burtorch {
namespace simd {
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

// Adds terms [from, n) of the reduction to the partials (term i goes to
// partial i mod P), multiply and add rounded separately.
template <class T>
inline void dot_terms(T* p, const T* a, const T* b, std::size_t from, std::size_t n) noexcept {
  constexpr std::size_t kP = partials<T>();
  for (std::size_t i = from; i < n; ++i) {
    p[i % kP] += a[i] * b[i];
  }
}

// The reference inner product, in the order above: whole blocks of P terms
// with one term per partial, then the tail. Except at -Os, the block and
// tail loops are unrolled to constant indices so the partials stay in
// registers on cores without vector units (Cortex-M4 at -O2: 27% fewer
// instructions per training step of a 64-128-10 MLP, docs/mcu-instructions.md);
// the same operations in the same order as dot_terms, so the same bits.
template <class T>
inline T dot(const T* a, const T* b, std::size_t n) noexcept {
  constexpr std::size_t kP = partials<T>();
  T p[kP] = {};
#if defined(__OPTIMIZE_SIZE__)
  dot_terms(p, a, b, 0U, n);  // -Os: the compact loop (the unrolled one is 0.9 KB more on Cortex-M4)
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
  return combine(p);
}

template <class T>
inline T sum_squares(const T* x, std::size_t n) noexcept {
  return dot(x, x, n);
}

template <class T>
inline void axpy(T* y, T alpha, const T* x, std::size_t from, std::size_t n) noexcept {
  for (std::size_t i = from; i < n; ++i) {
    y[i] += alpha * x[i];
  }
}

template <class T>
inline void scale(T* x, T s, std::size_t from, std::size_t n) noexcept {
  for (std::size_t i = from; i < n; ++i) {
    x[i] *= s;
  }
}

template <class T>
inline void sgd_step(T* w, const T* g, T lr, std::size_t from, std::size_t n) noexcept {
  for (std::size_t i = from; i < n; ++i) {
    w[i] -= lr * g[i];
  }
}

template <class T>
inline void momentum_step(T* w, T* buf, const T* g, T lr, T momentum, bool first, std::size_t from,
                          std::size_t n) noexcept {
  for (std::size_t i = from; i < n; ++i) {
    buf[i] = first ? g[i] : ((buf[i] * momentum) + g[i]);
    w[i] -= lr * buf[i];
  }
}

template <class T>
inline void adam_step(T* w, T* m, T* v, const T* g, const AdamStep<T>& p, std::size_t from, std::size_t n) noexcept {
  const T one_minus_b1 = T(1) - p.beta1;
  const T one_minus_b2 = T(1) - p.beta2;
  for (std::size_t i = from; i < n; ++i) {
    if (p.decoupled) {
      w[i] *= p.decay;
    }
    m[i] = (m[i] * p.beta1) + (g[i] * one_minus_b1);
    v[i] = (v[i] * p.beta2) + ((g[i] * g[i]) * one_minus_b2);
    const T denominator = (std::sqrt(v[i]) / p.correction2_sqrt) + p.eps;
    w[i] += -p.step_size * (m[i] / denominator);
  }
}

}  // namespace detail
}  // namespace simd
}  // namespace burtorch

#endif  // BURTORCH_LIB_SIMD_COMMON_HPP
