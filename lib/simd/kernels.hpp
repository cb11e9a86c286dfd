// SPDX-License-Identifier: Apache-2.0
// The vector kernels of burtorch/core/simd.hpp, written once for every
// instruction set. Each kernel is a template over a traits struct V that
// describes one vector type of one instruction set: isa::Vector<I, T>, the
// vector of T of implementation I (lib/simd/x86.hpp: SSE2, AVX2;
// lib/simd/arm.hpp: Neon, Helium). A traits struct provides:
//
//   V::Scalar, V::Vec, V::kLanes   element type, vector type, lanes W
//   V::broadcast(x)                every lane x
//   V::load(p), V::store(p, v)     W consecutive elements, any alignment
//   V::load_first(p, count)        elements p[0..count), the other lanes +0
//                                  (zero-padded: 0 < count < W; masked:
//                                  any count > 0, all W lanes if count >= W)
//   V::add, V::sub, V::mul         lane by lane, each rounded once
//   V::mul_add(a, b, acc)          acc + a * b: one rounding if V::kFused,
//                                  else mul then add, rounded separately
//   V::sum_lanes(v)                the lanes combined by halving: lane k +=
//                                  lane k + W/2, then W/4, ..., 1; lane 0
//   V::kMasked                     load_first is a masked load, and
//                                  V::store_first(p, v, count) stores the
//                                  first count < W lanes only
//   V::kDivSqrt                    V::div and V::sqrt exist
//
// Why the results are the reference's (the templates of burtorch/core/simd.hpp)
// bit for bit whenever V::kFused is false:
// - Reductions keep the reference's P = partials<T>() partial sums as P / W
//   accumulators: lane j of accumulator k is partial k * W + j, so term i
//   lands in partial i mod P, in index order, exactly as in the reference.
//   The last n mod P terms use the same lanes; the lanes past the end add
//   +0 * +0, an exact +0 (simd::detail::combine: partials are never -0).
//   Halving over the accumulators (k += k + A/2, ..., 1) and then over the
//   lanes is the reference's halving over p[0..P).
// - Element-wise kernels compute each element with the reference's
//   operations in the reference's order; lanes do not interact. Their last
//   n mod W elements run the reference loop itself (simd::scale<T> etc. on
//   the rest of the range), except in axpy with V::kMasked, which ends with
//   one masked vector.
// With V::kFused (AVX2 with FMA) dot, sum_squares and axpy round once per
// term (axpy's masked tail fuses its last terms too); the optimizer steps
// never fuse.
//
// isa::Inline<I> (at the end) gathers implementation I's kernels, the
// reference's included; the public functions (lib/simd/selected.cpp) and
// isa::Kernels (lib/simd/isa.cpp) are made of it.
//
// The vector algorithms are only instantiated in optimised builds
// (burtorch/core/simd.hpp), where the helpers below inline away; unoptimised
// builds select the reference.
#ifndef BURTORCH_LIB_SIMD_KERNELS_HPP
#define BURTORCH_LIB_SIMD_KERNELS_HPP

#include <cstddef>

#include "burtorch/core/simd.hpp"
#include "burtorch/nn/optim_kernels.hpp"
#include "isa.hpp"

namespace burtorch {
namespace simd {
namespace kernels {

template <class V>
using Scalar = typename V::Scalar;
template <class V>
using Vec = typename V::Vec;

// Reductions hold their P partial sums in P / W vectors, the accumulators.
// The loops over them carry `#pragma GCC unroll`: unrolled, they index the
// accumulators by constants, so these live in registers; -O2 and -Os would
// not unroll them on their own.
template <class V>
constexpr std::size_t accumulators() noexcept {
  return partials<Scalar<V>>() / V::kLanes;
}
template <class V>
using Accumulators = Vec<V>[accumulators<V>()];

// Adds one block of P terms a[k] * b[k]: term k to partial k.
template <class V>
inline void add_block(Accumulators<V>& acc, const Scalar<V>* a, const Scalar<V>* b) noexcept {
  constexpr std::size_t kAcc = accumulators<V>();
#pragma GCC unroll 4  // BT-DEV-015: keeps the accumulators in registers at -O2/-Os
  for (std::size_t k = 0U; k < kAcc; ++k) {
    acc[k] = V::mul_add(V::load(&a[k * V::kLanes]), V::load(&b[k * V::kLanes]), acc[k]);
  }
}

// Adds the last r < P terms to the same partials as a whole block would;
// the lanes past the end add +0 * +0.
template <class V>
inline void add_tail(Accumulators<V>& acc, const Scalar<V>* a, const Scalar<V>* b, std::size_t r) noexcept {
  constexpr std::size_t kW = V::kLanes;
  constexpr std::size_t kAcc = accumulators<V>();
  if constexpr (V::kMasked) {
    // Each accumulator takes its (possibly partial) vector by masked loads
    // (load_first with count >= W loads all W lanes).
#pragma GCC unroll 4  // BT-DEV-015: keeps the accumulators in registers at -O2/-Os
    for (std::size_t k = 0U; k < kAcc; ++k) {
      const std::size_t at = k * kW;
      if (at < r) {
        acc[k] = V::mul_add(V::load_first(&a[at], r - at), V::load_first(&b[at], r - at), acc[k]);
      }
    }
  } else {
    // Whole vectors, then at most one zero-padded vector into accumulator
    // `whole` (chosen by comparison, not by a run-time index, which would
    // move the accumulators to memory).
    const std::size_t whole = r / kW;
#pragma GCC unroll 4  // BT-DEV-015: keeps the accumulators in registers at -O2/-Os
    for (std::size_t k = 0U; k < kAcc; ++k) {
      if (k < whole) {
        acc[k] = V::mul_add(V::load(&a[k * kW]), V::load(&b[k * kW]), acc[k]);
      }
    }
    const std::size_t at = whole * kW;
    if (at < r) {
      const Vec<V> ta = V::load_first(&a[at], r - at);
      const Vec<V> tb = V::load_first(&b[at], r - at);
#pragma GCC unroll 4  // BT-DEV-015: keeps the accumulators in registers at -O2/-Os
      for (std::size_t k = 0U; k < kAcc; ++k) {
        if (k == whole) {
          acc[k] = V::mul_add(ta, tb, acc[k]);
        }
      }
    }
  }
}

// The reference's halving over p[0..P): over the accumulators (k += k + 2
// when there are four, then k += k + 1), then over the lanes.
template <class V>
inline Scalar<V> combine(Accumulators<V>& acc) noexcept {
  static_assert((accumulators<V>() == 2U) || (accumulators<V>() == 4U), "two or four accumulators");
  if constexpr (accumulators<V>() == 4U) {
    acc[0] = V::add(acc[0], acc[2]);
    acc[1] = V::add(acc[1], acc[3]);
  }
  return V::sum_lanes(V::add(acc[0], acc[1]));
}

// sum of a[i] * b[i]
template <class V>
inline Scalar<V> dot(const Scalar<V>* a, const Scalar<V>* b, std::size_t n) noexcept {
  constexpr std::size_t kP = partials<Scalar<V>>();
  Accumulators<V> acc = {};  // every partial +0
  std::size_t i = 0U;
  for (; (i + kP) <= n; i += kP) {
    add_block<V>(acc, &a[i], &b[i]);
  }
  if (i < n) {
    add_tail<V>(acc, &a[i], &b[i], n - i);
  }
  return combine<V>(acc);
}

// y[i] += alpha * x[i]
template <class V>
inline void axpy(Scalar<V>* y, Scalar<V> alpha, const Scalar<V>* x, std::size_t n) noexcept {
  static_assert(V::kMasked || !V::kFused, "a fused axpy needs masked stores to fuse its tail");
  constexpr std::size_t kW = V::kLanes;
  const Vec<V> k = V::broadcast(alpha);
  std::size_t i = 0U;
  // Two vectors per iteration: the backward pass of every inner product
  // runs through here.
  for (; (i + (2U * kW)) <= n; i += 2U * kW) {
    V::store(&y[i], V::mul_add(k, V::load(&x[i]), V::load(&y[i])));
    V::store(&y[i + kW], V::mul_add(k, V::load(&x[i + kW]), V::load(&y[i + kW])));
  }
  for (; (i + kW) <= n; i += kW) {
    V::store(&y[i], V::mul_add(k, V::load(&x[i]), V::load(&y[i])));
  }
  if constexpr (V::kMasked) {
    if (i < n) {
      const std::size_t r = n - i;
      V::store_first(&y[i], V::mul_add(k, V::load_first(&x[i], r), V::load_first(&y[i], r)), r);
    }
  } else {
    simd::axpy<Scalar<V>>(&y[i], alpha, &x[i], n - i);
  }
}

// x[i] *= s
template <class V>
inline void scale(Scalar<V>* x, Scalar<V> s, std::size_t n) noexcept {
  const Vec<V> k = V::broadcast(s);
  std::size_t i = 0U;
  for (; (i + V::kLanes) <= n; i += V::kLanes) {
    V::store(&x[i], V::mul(V::load(&x[i]), k));
  }
  simd::scale<Scalar<V>>(&x[i], s, n - i);
}

// The optimizer steps read g[i] (scaled false) or g[i] * scale (scaled
// true: the gradient of a batch's mean from its sum, core/simd.hpp). `scaled` is
// a constant where the kernels are compiled (the public functions): each
// is compiled with one of the two.
template <class V>
inline Vec<V> gradient(const Scalar<V>* g, Vec<V> scale, bool scaled) noexcept {
  return scaled ? V::mul(V::load(g), scale) : V::load(g);
}

// w[i] -= lr * g[i] (or lr * (g[i] * scale))
template <class V>
inline void sgd_step(Scalar<V>* w, const Scalar<V>* g, Scalar<V> lr, Scalar<V> scale, bool scaled,
                     std::size_t n) noexcept {
  const Vec<V> k = V::broadcast(lr);
  const Vec<V> s = V::broadcast(scale);
  std::size_t i = 0U;
  for (; (i + V::kLanes) <= n; i += V::kLanes) {
    V::store(&w[i], V::sub(V::load(&w[i]), V::mul(k, gradient<V>(&g[i], s, scaled))));
  }
  if (scaled) {
    simd::sgd_step<Scalar<V>>(&w[i], &g[i], lr, scale, n - i);
  } else {
    simd::sgd_step<Scalar<V>>(&w[i], &g[i], lr, n - i);
  }
}

// buf = first ? g : buf * momentum + g; w -= lr * buf (g: or g * scale)
template <class V>
inline void momentum_step(Scalar<V>* w, Scalar<V>* buf, const Scalar<V>* g, Scalar<V> lr, Scalar<V> momentum,
                          bool first, Scalar<V> scale, bool scaled, std::size_t n) noexcept {
  const Vec<V> k = V::broadcast(lr);
  const Vec<V> mu = V::broadcast(momentum);
  const Vec<V> s = V::broadcast(scale);
  std::size_t i = 0U;
  for (; (i + V::kLanes) <= n; i += V::kLanes) {
    const Vec<V> gi = gradient<V>(&g[i], s, scaled);
    const Vec<V> b = first ? gi : V::add(V::mul(V::load(&buf[i]), mu), gi);
    V::store(&buf[i], b);
    V::store(&w[i], V::sub(V::load(&w[i]), V::mul(k, b)));
  }
  if (scaled) {
    simd::momentum_step<Scalar<V>>(&w[i], &buf[i], &g[i], lr, momentum, first, scale, n - i);
  } else {
    simd::momentum_step<Scalar<V>>(&w[i], &buf[i], &g[i], lr, momentum, first, n - i);
  }
}

// One Adam/AdamW step (burtorch/nn/optim_kernels.hpp, AdamStep). Without a vector
// divide and square root (ARMv7 Neon, Helium) it is the reference loop.
template <class V>
inline void adam_step(Scalar<V>* w, Scalar<V>* m, Scalar<V>* v, const Scalar<V>* g, const AdamStep<Scalar<V>>& p,
                      Scalar<V> scale, bool scaled, std::size_t n) noexcept {
  using T = Scalar<V>;
  std::size_t i = 0U;
  if constexpr (V::kDivSqrt) {
    const Vec<V> s = V::broadcast(scale);
    const Vec<V> b1 = V::broadcast(p.beta1);
    const Vec<V> b2 = V::broadcast(p.beta2);
    const Vec<V> c1 = V::broadcast(T(1) - p.beta1);
    const Vec<V> c2 = V::broadcast(T(1) - p.beta2);
    const Vec<V> root = V::broadcast(p.correction2_sqrt);
    const Vec<V> eps = V::broadcast(p.eps);
    const Vec<V> step = V::broadcast(-p.step_size);
    const Vec<V> decay = V::broadcast(p.decay);
    for (; (i + V::kLanes) <= n; i += V::kLanes) {
      Vec<V> wi = V::load(&w[i]);
      if (p.decoupled) {
        wi = V::mul(wi, decay);
      }
      const Vec<V> gi = gradient<V>(&g[i], s, scaled);
      const Vec<V> mi = V::add(V::mul(V::load(&m[i]), b1), V::mul(gi, c1));
      const Vec<V> vi = V::add(V::mul(V::load(&v[i]), b2), V::mul(V::mul(gi, gi), c2));
      const Vec<V> denominator = V::add(V::div(V::sqrt(vi), root), eps);
      V::store(&m[i], mi);
      V::store(&v[i], vi);
      V::store(&w[i], V::add(wi, V::mul(step, V::div(mi, denominator))));
    }
  }
  if (scaled) {
    simd::adam_step<T>(&w[i], &m[i], &v[i], &g[i], p, scale, n - i);
  } else {
    simd::adam_step<T>(&w[i], &m[i], &v[i], &g[i], p, n - i);
  }
}

}  // namespace kernels

namespace isa {

// The vector of T of implementation I (lib/simd/x86.hpp, lib/simd/arm.hpp):
// the traits struct described at the top of this file.
template <class I, class T>
struct Vector;

// Implementation I's kernels as inline functions (over the T of their
// arguments): the algorithms above over Vector<I, T>. The public functions
// (lib/simd/selected.cpp) compile them into themselves: those are the
// kernels, not calls to them.
template <class I>
struct Inline {
  template <class T>
  static T dot(const T* a, const T* b, std::size_t n) noexcept {
    return kernels::dot<Vector<I, T>>(a, b, n);
  }
  template <class T>
  static void axpy(T* y, T alpha, const T* x, std::size_t n) noexcept {
    kernels::axpy<Vector<I, T>>(y, alpha, x, n);
  }
  template <class T>
  static void scale(T* x, T s, std::size_t n) noexcept {
    kernels::scale<Vector<I, T>>(x, s, n);
  }
  template <class T>
  static void sgd_step(T* w, const T* g, T lr, std::size_t n) noexcept {
    kernels::sgd_step<Vector<I, T>>(w, g, lr, T(1), false, n);
  }
  template <class T>
  static void sgd_step(T* w, const T* g, T lr, T scale, std::size_t n) noexcept {
    kernels::sgd_step<Vector<I, T>>(w, g, lr, scale, true, n);
  }
  template <class T>
  static void momentum_step(T* w, T* buf, const T* g, T lr, T momentum, bool first, std::size_t n) noexcept {
    kernels::momentum_step<Vector<I, T>>(w, buf, g, lr, momentum, first, T(1), false, n);
  }
  template <class T>
  static void momentum_step(T* w, T* buf, const T* g, T lr, T momentum, bool first, T scale, std::size_t n) noexcept {
    kernels::momentum_step<Vector<I, T>>(w, buf, g, lr, momentum, first, scale, true, n);
  }
  template <class T>
  static void adam_step(T* w, T* m, T* v, const T* g, const AdamStep<T>& p, std::size_t n) noexcept {
    kernels::adam_step<Vector<I, T>>(w, m, v, g, p, T(1), false, n);
  }
  template <class T>
  static void adam_step(T* w, T* m, T* v, const T* g, const AdamStep<T>& p, T scale, std::size_t n) noexcept {
    kernels::adam_step<Vector<I, T>>(w, m, v, g, p, scale, true, n);
  }
};

// The reference: the loops of burtorch/core/simd.hpp (template arguments given,
// so the templates, not the public float and double functions).
template <>
struct Inline<Reference> {
  template <class T>
  static T dot(const T* a, const T* b, std::size_t n) noexcept {
    return simd::dot<T>(a, b, n);
  }
  template <class T>
  static void axpy(T* y, T alpha, const T* x, std::size_t n) noexcept {
    simd::axpy<T>(y, alpha, x, n);
  }
  template <class T>
  static void scale(T* x, T s, std::size_t n) noexcept {
    simd::scale<T>(x, s, n);
  }
  template <class T>
  static void sgd_step(T* w, const T* g, T lr, std::size_t n) noexcept {
    simd::sgd_step<T>(w, g, lr, n);
  }
  template <class T>
  static void sgd_step(T* w, const T* g, T lr, T scale, std::size_t n) noexcept {
    simd::sgd_step<T>(w, g, lr, scale, n);
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

#endif  // BURTORCH_LIB_SIMD_KERNELS_HPP
