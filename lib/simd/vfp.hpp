// SPDX-License-Identifier: Apache-2.0
// Library-internal: the kernels of burtorch/core/simd.hpp for in-order cores with
// a scalar floating-point unit and no vector unit the library uses: the
// FPv4-SP of the Cortex-M4F, the FPv5 of the Cortex-M7 and M33 (float, and
// double where the FPU has it: M7, M55). isa::Vfp (lib/simd/isa.hpp).
//
// Such a core has 32 single-precision registers and no lanes, so the kernels
// are the reference's loops written so that nothing goes through memory that
// need not:
// - dot keeps the reference's P partial sums (16 for float, 8 for double)
//   in registers: named accumulators, never an array (an array of partials
//   is cleared by a call to memset and spilled to the stack for the final
//   halving); term i goes to partial i mod P in index order and the
//   partials are combined by halving, so the bits are the reference's;
// - axpy and the element-wise steps handle four elements per iteration
//   (one loop test per four), each element with the reference's
//   operations in the reference's order.
// With BURTORCH_CONFIG_SIMD_FMA and an FPU that fuses (every FPv4/FPv5),
// dot, sum_squares and axpy round each term once (vfma): not bitwise the
// reference, within a few units in the last place per term, as AVX2 with
// FMA (docs/floating-point.md, "Fused multiply-add in the kernels"). The
// optimizer steps never fuse.
//
// At -Os the loops stay compact (the unrolled ones cost flash): the
// reference's loops, fused or not as above.
#ifndef BURTORCH_LIB_SIMD_VFP_HPP
#define BURTORCH_LIB_SIMD_VFP_HPP

#include <cmath>
#include <cstddef>

#include "burtorch/config.hpp"
#include "burtorch/core/simd.hpp"
#include "burtorch/nn/optim_kernels.hpp"
#include "kernels.hpp"

#if BURTORCH_SIMD_VFP

namespace burtorch {
namespace simd {
namespace isa {
namespace vfp {

// acc + a * b: one rounding (vfma) with Vfp::kFused, else two.
template <class T>
BURTORCH_ALWAYS_INLINE inline T mul_add(T a, T b, T acc) noexcept {
  if constexpr (Vfp::kFused) {
    return std::fma(a, b, acc);
  } else {
    return acc + (a * b);
  }
}

#if defined(__OPTIMIZE_SIZE__)

// -Os: the reference's compact loop, term i into partial i mod P.
template <class T>
inline T dot(const T* a, const T* b, std::size_t n) noexcept {
  constexpr std::size_t kP = partials<T>();
  T p[kP] = {};
  for (std::size_t i = 0U; i < n; ++i) {
    p[i % kP] = mul_add(a[i], b[i], p[i % kP]);
  }
  return simd::detail::combine(p);
}

template <class T>
inline void axpy(T* y, T alpha, const T* x, std::size_t n) noexcept {
  for (std::size_t i = 0U; i < n; ++i) {
    y[i] = mul_add(alpha, x[i], y[i]);
  }
}

#else  // -O2, -O3

// Eight partial sums, named so that they live in registers.
template <class T>
struct Partials8 {
  T p0;
  T p1;
  T p2;
  T p3;
  T p4;
  T p5;
  T p6;
  T p7;
};

// Terms a[k] * b[k], k < 8, into partials 0..7.
template <class T>
BURTORCH_ALWAYS_INLINE inline void add8(Partials8<T>& s, const T* a, const T* b) noexcept {
  s.p0 = mul_add(a[0], b[0], s.p0);
  s.p1 = mul_add(a[1], b[1], s.p1);
  s.p2 = mul_add(a[2], b[2], s.p2);
  s.p3 = mul_add(a[3], b[3], s.p3);
  s.p4 = mul_add(a[4], b[4], s.p4);
  s.p5 = mul_add(a[5], b[5], s.p5);
  s.p6 = mul_add(a[6], b[6], s.p6);
  s.p7 = mul_add(a[7], b[7], s.p7);
}

// The first r < 8 terms into partials 0..r-1.
template <class T>
BURTORCH_ALWAYS_INLINE inline void add_first(Partials8<T>& s, const T* a, const T* b, std::size_t r) noexcept {
  if (r > 0U) {
    s.p0 = mul_add(a[0], b[0], s.p0);
  }
  if (r > 1U) {
    s.p1 = mul_add(a[1], b[1], s.p1);
  }
  if (r > 2U) {
    s.p2 = mul_add(a[2], b[2], s.p2);
  }
  if (r > 3U) {
    s.p3 = mul_add(a[3], b[3], s.p3);
  }
  if (r > 4U) {
    s.p4 = mul_add(a[4], b[4], s.p4);
  }
  if (r > 5U) {
    s.p5 = mul_add(a[5], b[5], s.p5);
  }
  if (r > 6U) {
    s.p6 = mul_add(a[6], b[6], s.p6);
  }
}

// Partials 0..7 combined by halving: k += k + 4, then k + 2, then k + 1.
template <class T>
BURTORCH_ALWAYS_INLINE inline T combine8(const Partials8<T>& s) noexcept {
  const T q0 = s.p0 + s.p4;
  const T q1 = s.p1 + s.p5;
  const T q2 = s.p2 + s.p6;
  const T q3 = s.p3 + s.p7;
  return (q0 + q2) + (q1 + q3);
}

// Term i into partial i mod P (P = 16: partials 0..7 in `lo`, 8..15 in
// `hi`; P = 8: `lo` alone), then the reference's halving.
template <class T>
inline T dot(const T* a, const T* b, std::size_t n) noexcept {
  constexpr std::size_t kP = partials<T>();
  static_assert((kP == 16U) || (kP == 8U), "16 (float) or 8 (double) partial sums");
  Partials8<T> lo = {T(0), T(0), T(0), T(0), T(0), T(0), T(0), T(0)};
  Partials8<T> hi = {T(0), T(0), T(0), T(0), T(0), T(0), T(0), T(0)};
  std::size_t i = 0U;
  for (; (n - i) >= kP; i += kP) {
    add8(lo, &a[i], &b[i]);
    if constexpr (kP == 16U) {
      add8(hi, &a[i + 8U], &b[i + 8U]);
    }
  }
  std::size_t r = n - i;
  if constexpr (kP == 16U) {
    if (r >= 8U) {
      add8(lo, &a[i], &b[i]);
      i += 8U;
      r -= 8U;
      add_first(hi, &a[i], &b[i], r);
    } else {
      add_first(lo, &a[i], &b[i], r);
    }
    // p[k] += p[k + 8]
    lo.p0 = lo.p0 + hi.p0;
    lo.p1 = lo.p1 + hi.p1;
    lo.p2 = lo.p2 + hi.p2;
    lo.p3 = lo.p3 + hi.p3;
    lo.p4 = lo.p4 + hi.p4;
    lo.p5 = lo.p5 + hi.p5;
    lo.p6 = lo.p6 + hi.p6;
    lo.p7 = lo.p7 + hi.p7;
  } else {
    add_first(lo, &a[i], &b[i], r);
  }
  return combine8(lo);
}

// y[i] += alpha * x[i], four elements per iteration.
template <class T>
inline void axpy(T* y, T alpha, const T* x, std::size_t n) noexcept {
  std::size_t i = 0U;
  for (; (n - i) >= 4U; i += 4U) {
    const T x0 = x[i];
    const T x1 = x[i + 1U];
    const T x2 = x[i + 2U];
    const T x3 = x[i + 3U];
    y[i] = mul_add(alpha, x0, y[i]);
    y[i + 1U] = mul_add(alpha, x1, y[i + 1U]);
    y[i + 2U] = mul_add(alpha, x2, y[i + 2U]);
    y[i + 3U] = mul_add(alpha, x3, y[i + 3U]);
  }
  for (; i < n; ++i) {
    y[i] = mul_add(alpha, x[i], y[i]);
  }
}

#endif  // __OPTIMIZE_SIZE__

// w[i] -= lr * g[i] (scaled: lr * (g[i] * scale)), the reference's
// operations; four elements per iteration except at -Os.
template <class T>
BURTORCH_ALWAYS_INLINE inline T sgd_delta(T lr, T g, T scale, bool scaled) noexcept {
  return scaled ? (lr * (g * scale)) : (lr * g);
}
template <class T>
inline void sgd_step(T* w, const T* g, T lr, T scale, bool scaled, std::size_t n) noexcept {
  std::size_t i = 0U;
#if !defined(__OPTIMIZE_SIZE__)
  for (; (n - i) >= 4U; i += 4U) {
    const T d0 = sgd_delta(lr, g[i], scale, scaled);
    const T d1 = sgd_delta(lr, g[i + 1U], scale, scaled);
    const T d2 = sgd_delta(lr, g[i + 2U], scale, scaled);
    const T d3 = sgd_delta(lr, g[i + 3U], scale, scaled);
    w[i] -= d0;
    w[i + 1U] -= d1;
    w[i + 2U] -= d2;
    w[i + 3U] -= d3;
  }
#endif
  for (; i < n; ++i) {
    w[i] -= sgd_delta(lr, g[i], scale, scaled);
  }
}

}  // namespace vfp

// The kernels of the scalar FPU: dot, axpy and SGD above; scale and the
// other optimizer steps are the reference loops (element-wise, never fused).
template <>
struct Inline<Vfp> {
  template <class T>
  static T dot(const T* a, const T* b, std::size_t n) noexcept {
    return vfp::dot(a, b, n);
  }
  template <class T>
  static void axpy(T* y, T alpha, const T* x, std::size_t n) noexcept {
    vfp::axpy(y, alpha, x, n);
  }
  template <class T>
  static void scale(T* x, T s, std::size_t n) noexcept {
    simd::scale<T>(x, s, n);
  }
  template <class T>
  static void sgd_step(T* w, const T* g, T lr, std::size_t n) noexcept {
    vfp::sgd_step(w, g, lr, T(1), false, n);
  }
  template <class T>
  static void sgd_step(T* w, const T* g, T lr, T scale, std::size_t n) noexcept {
    vfp::sgd_step(w, g, lr, scale, true, n);
  }
  template <class T>
  static void momentum_step(T* w, T* buf, const T* g, T lr, T momentum, bool first, std::size_t n) noexcept {
    simd::momentum_step<T>(w, buf, g, lr, momentum, first, n);
  }
  template <class T>
  static void momentum_step(T* w, T* buf, const T* g, T lr, T momentum, bool first, T scale, std::size_t n) noexcept {
    simd::momentum_step<T>(w, buf, g, lr, momentum, first, scale, n);
  }
  template <class T>
  static void adam_step(T* w, T* m, T* v, const T* g, const AdamStep<T>& p, std::size_t n) noexcept {
    simd::adam_step<T>(w, m, v, g, p, n);
  }
  template <class T>
  static void adam_step(T* w, T* m, T* v, const T* g, const AdamStep<T>& p, T scale, std::size_t n) noexcept {
    simd::adam_step<T>(w, m, v, g, p, scale, n);
  }
};

}  // namespace isa
}  // namespace simd
}  // namespace burtorch

#endif  // BURTORCH_SIMD_VFP

#endif  // BURTORCH_LIB_SIMD_VFP_HPP
