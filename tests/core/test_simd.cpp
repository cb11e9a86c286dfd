// SPDX-License-Identifier: Apache-2.0
// The vector kernels of burtorch/core/simd.hpp against the scalar reference, on
// every target (each build tests the implementations its compiler target
// allows: SSE2 and AVX2 on x86-64, Neon on AArch64/ARMv7, Helium on
// Cortex-M55 under QEMU; lib/simd/isa.hpp gives each as out-of-line
// functions). The reference itself is checked against an independent
// implementation of the documented summation order and against exact
// integer sums; the optimizer steps against the torch.optim formulas
// written out here. Without fused multiply-add every kernel must give the
// reference's bits; with it (avx2+fma) inner products and axpy must agree
// to a few units in the last place per term. The public float and double
// functions must be the selected implementation's kernels, and the public
// templates (any other scalar type) the reference. Heap-free.
#include <burtorch/burtorch.hpp>
#include <burtorch/lanes/lanes.hpp>
#include <burtorch/core/simd.hpp>
#include <burtorch/nn/optim_kernels.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

#include "graphs.hpp"
#include "harness.hpp"
#include "simd/isa.hpp"  // the implementations one by one (library-internal)
#include "burtorch/lanes/ops.hpp"  // a tape of Lanes: the lane ops and the tape's templates for it

namespace bt = burtorch;
namespace simd = burtorch::simd;
namespace isa = burtorch::simd::isa;

namespace {

#ifndef BURTORCH_TEST_SMALL_TARGET
#define BURTORCH_TEST_SMALL_TARGET 0
#endif
// Longest range tested (every length 0..kMax, at four alignments).
constexpr std::size_t kMax = BURTORCH_TEST_SMALL_TARGET ? 34U : 300U;
constexpr std::size_t kPad = 8U;
constexpr std::size_t kSize = kMax + kPad + 8U;  // + alignment offsets

// Deterministic values in [-1, 1) (and integers in [-8, 8) on request).
struct Lcg {
  std::uint32_t s = 12345U;
  std::uint32_t next() {
    s = (s * 1664525U) + 1013904223U;
    return s >> 8U;
  }
  double unit() { return (static_cast<double>(next()) / 8388608.0) - 1.0; }
  double integer() { return static_cast<double>(next() % 16U) - 8.0; }
};

template <class T>
struct Buffers {
  T a[kSize];
  T b[kSize];
  T y0[kSize];
  T y1[kSize];
  T m0[kSize];
  T m1[kSize];
  T v0[kSize];
  T v1[kSize];
};
Buffers<float> g_f;
Buffers<double> g_d;

template <class T>
Buffers<T>& buffers();
template <>
Buffers<float>& buffers<float>() {
  return g_f;
}
template <>
Buffers<double>& buffers<double>() {
  return g_d;
}

template <class T>
void fill(T* x, std::size_t n, Lcg& r, bool integers) {
  for (std::size_t i = 0U; i < n; ++i) {
    x[i] = static_cast<T>(integers ? r.integer() : r.unit());
  }
}

// The documented order, written out independently of lib/simd: P partials
// from +0 (P = 64 / sizeof(T) for float and double), term i into partial
// i mod P, then halving.
template <class T, std::size_t kP = 64U / sizeof(T)>
T defined_dot(const T* a, const T* b, std::size_t n) {
  T p[kP];
  for (std::size_t k = 0U; k < kP; ++k) {
    p[k] = T(0);
  }
  for (std::size_t i = 0U; i < n; ++i) {
    const T term = a[i] * b[i];
    p[i % kP] = p[i % kP] + term;
  }
  std::size_t width = kP;
  while (width > 1U) {
    width /= 2U;
    for (std::size_t k = 0U; k < width; ++k) {
      p[k] = p[k] + p[k + width];
    }
  }
  return p[0];
}

// The reference implementation, compiled in the library.
template <class T>
using Ref = isa::Kernels<isa::Reference, T>;

template <class T>
double abs_sum(const T* a, const T* b, std::size_t n) {
  double s = 0.0;
  for (std::size_t i = 0U; i < n; ++i) {
    s += std::fabs(static_cast<double>(a[i]) * static_cast<double>(b[i]));
  }
  return s;
}

template <class T>
bool same(T x, T y) {
  return (x == y) || (std::isnan(x) && std::isnan(y));
}

// --- the reference ----------------------------------------------------------

template <class T>
void reference_is_the_documented_order_t(bt_test::Context& t) {
  Buffers<T>& z = buffers<T>();
  Lcg r;
  long mismatches = 0;
  for (std::size_t n = 0U; n <= kMax; ++n) {
    fill(z.a, n, r, false);
    fill(z.b, n, r, false);
    mismatches += same(Ref<T>::dot(z.a, z.b, n), defined_dot(z.a, z.b, n)) ? 0 : 1;
    mismatches += same(Ref<T>::sum_squares(z.a, n), defined_dot(z.a, z.a, n)) ? 0 : 1;
  }
  BT_CHECK(t, mismatches == 0);
  // Small integers: every partial sum is exact, so the result is the sum.
  fill(z.a, kMax, r, true);
  fill(z.b, kMax, r, true);
  double exact = 0.0;
  for (std::size_t i = 0U; i < kMax; ++i) {
    exact += static_cast<double>(z.a[i]) * static_cast<double>(z.b[i]);
  }
  BT_CHECK(t, static_cast<double>(Ref<T>::dot(z.a, z.b, kMax)) == exact);
  BT_CHECK(t, Ref<T>::dot(z.a, z.b, 0U) == T(0));
  // Where order matters, the partials decide: 2^24 + 1 + ... in float.
  z.a[0] = T(1e20);
  z.b[0] = T(1);
  for (std::size_t i = 1U; i < 20U; ++i) {
    z.a[i] = T(1);
    z.b[i] = T(1);
  }
  z.a[16] = T(-1e20);  // cancels a[0] in partial 0 (P = 16 for float) or not (P = 8)
  BT_CHECK(t, same(Ref<T>::dot(z.a, z.b, 20U), defined_dot(z.a, z.b, 20U)));
}

void reference_is_the_documented_order(bt_test::Context& t) {
  reference_is_the_documented_order_t<float>(t);
  reference_is_the_documented_order_t<double>(t);
}

void reference_optimizer_steps_follow_torch(bt_test::Context& t) {
  Buffers<double>& z = g_d;
  Lcg r;
  const std::size_t n = kMax;
  fill(z.a, n, r, false);   // weights
  fill(z.b, n, r, false);   // gradients
  fill(z.m0, n, r, false);  // first moments
  for (std::size_t i = 0U; i < n; ++i) {
    z.v0[i] = std::fabs(r.unit());  // second moments
  }
  std::memcpy(z.y0, z.a, n * sizeof(double));
  std::memcpy(z.y1, z.a, n * sizeof(double));
  std::memcpy(z.m1, z.m0, n * sizeof(double));
  std::memcpy(z.v1, z.v0, n * sizeof(double));
  // AdamW at step t = 3, torch 1.13 single-tensor: param.mul_(1 - lr*wd);
  // exp_avg.mul_(b1).add_(g, alpha=1-b1); exp_avg_sq.mul_(b2).addcmul_(g, g,
  // value=1-b2); denom = (exp_avg_sq.sqrt() / sqrt(bc2)).add_(eps);
  // param.addcdiv_(exp_avg, denom, value=-lr/bc1).
  const double lr = 0.01;
  const double b1 = 0.9;
  const double b2 = 0.999;
  const double bc1 = 1.0 - std::pow(b1, 3.0);
  const double bc2 = 1.0 - std::pow(b2, 3.0);
  const simd::AdamStep<double> p{lr / bc1, b1, b2, std::sqrt(bc2), 1e-8, 1.0 - (lr * 0.1), true};
  Ref<double>::adam_step(z.y0, z.m0, z.v0, z.b, p, n);
  long mismatches = 0;
  for (std::size_t i = 0U; i < n; ++i) {
    double w = z.y1[i] * (1.0 - (lr * 0.1));
    const double m = (z.m1[i] * b1) + (z.b[i] * (1.0 - b1));
    const double v = (z.v1[i] * b2) + ((z.b[i] * z.b[i]) * (1.0 - b2));
    const double denom = (std::sqrt(v) / std::sqrt(bc2)) + 1e-8;
    w += (-lr / bc1) * (m / denom);
    mismatches += ((w == z.y0[i]) && (m == z.m0[i]) && (v == z.v0[i])) ? 0 : 1;
  }
  BT_CHECK(t, mismatches == 0);
  // SGD with momentum: buf = g first, then buf * mu + g; w -= lr * buf.
  std::memcpy(z.y0, z.a, n * sizeof(double));
  Ref<double>::momentum_step(z.y0, z.m0, z.b, 0.1, 0.9, true, n);
  Ref<double>::momentum_step(z.y0, z.m0, z.b, 0.1, 0.9, false, n);
  mismatches = 0;
  for (std::size_t i = 0U; i < n; ++i) {
    const double buf = (z.b[i] * 0.9) + z.b[i];
    const double w = (z.a[i] - (0.1 * z.b[i])) - (0.1 * buf);
    mismatches += ((w == z.y0[i]) && (buf == z.m0[i])) ? 0 : 1;
  }
  BT_CHECK(t, mismatches == 0);
  // The steps on a gradient to be scaled first (a batch's mean from its
  // sum): bitwise the scaling, then the step, for a scale that rounds.
  const double scale = 1.0 / 3.0;
  std::memcpy(z.y0, z.a, n * sizeof(double));
  std::memcpy(z.y1, z.a, n * sizeof(double));
  std::memcpy(z.m1, z.m0, n * sizeof(double));
  std::memcpy(z.v1, z.v0, n * sizeof(double));
  double scaled[kSize];
  for (std::size_t i = 0U; i < n; ++i) {
    scaled[i] = z.b[i];
  }
  Ref<double>::scale(scaled, scale, n);
  Ref<double>::sgd_step(z.y0, z.b, 0.1, scale, n);
  Ref<double>::sgd_step(z.y1, scaled, 0.1, n);
  Ref<double>::momentum_step(z.y0, z.m0, z.b, 0.1, 0.9, false, scale, n);
  Ref<double>::momentum_step(z.y1, z.m1, scaled, 0.1, 0.9, false, n);
  Ref<double>::adam_step(z.y0, z.m0, z.v0, z.b, p, scale, n);
  Ref<double>::adam_step(z.y1, z.m1, z.v1, scaled, p, n);
  mismatches = 0;
  for (std::size_t i = 0U; i < n; ++i) {
    mismatches += ((z.y0[i] == z.y1[i]) && (z.m0[i] == z.m1[i]) && (z.v0[i] == z.v1[i])) ? 0 : 1;
    mismatches += (scaled[i] != z.b[i]) ? 0 : 1;  // 1/3 changes every nonzero gradient
  }
  BT_CHECK(t, mismatches == 0);
}

// --- each implementation against the reference ------------------------------

// An implementation's kernels (lib/simd/isa.hpp) as one type: the checks
// below take it as a template argument.
template <class I>
struct Impl {
  static constexpr const char* kName = I::kName;
  static constexpr bool kFused = I::kFused;
  template <class T>
  static T dot(const T* a, const T* b, std::size_t n) {
    return isa::Kernels<I, T>::dot(a, b, n);
  }
  template <class T>
  static T sum_squares(const T* x, std::size_t n) {
    return isa::Kernels<I, T>::sum_squares(x, n);
  }
  template <class T>
  static void axpy(T* y, T alpha, const T* x, std::size_t n) {
    isa::Kernels<I, T>::axpy(y, alpha, x, n);
  }
  template <class T>
  static void scale(T* x, T s, std::size_t n) {
    isa::Kernels<I, T>::scale(x, s, n);
  }
  template <class T>
  static void sgd_step(T* w, const T* g, T lr, std::size_t n) {
    isa::Kernels<I, T>::sgd_step(w, g, lr, n);
  }
  template <class T>
  static void momentum_step(T* w, T* buf, const T* g, T lr, T mu, bool first, std::size_t n) {
    isa::Kernels<I, T>::momentum_step(w, buf, g, lr, mu, first, n);
  }
  template <class T>
  static void adam_step(T* w, T* m, T* v, const T* g, const simd::AdamStep<T>& p, std::size_t n) {
    isa::Kernels<I, T>::adam_step(w, m, v, g, p, n);
  }
  template <class T>
  static void sgd_step(T* w, const T* g, T lr, T scale, std::size_t n) {
    isa::Kernels<I, T>::sgd_step(w, g, lr, scale, n);
  }
  template <class T>
  static void momentum_step(T* w, T* buf, const T* g, T lr, T mu, bool first, T scale, std::size_t n) {
    isa::Kernels<I, T>::momentum_step(w, buf, g, lr, mu, first, scale, n);
  }
  template <class T>
  static void adam_step(T* w, T* m, T* v, const T* g, const simd::AdamStep<T>& p, T scale, std::size_t n) {
    isa::Kernels<I, T>::adam_step(w, m, v, g, p, scale, n);
  }
};

// Inner products and sums of squares at every length 0..kMax and four
// alignments; exact without fusion, else within 4 ulp per term.
template <class K, class T>
void check_reductions(bt_test::Context& t) {
  Buffers<T>& z = buffers<T>();
  Lcg r;
  const double eps = static_cast<double>(std::numeric_limits<T>::epsilon());
  long mismatches = 0;
  for (std::size_t offset = 0U; offset < 4U; ++offset) {
    for (std::size_t n = 0U; n <= kMax; ++n) {
      T* a = &z.a[offset];
      T* b = &z.b[(offset * 3U) % 4U];
      fill(a, n, r, false);
      fill(b, n, r, false);
      const T want = Ref<T>::dot(a, b, n);
      const T got = K::dot(a, b, n);
      const T want_sq = Ref<T>::sum_squares(a, n);
      const T got_sq = K::sum_squares(a, n);
      if (K::kFused) {
        const double bound = 4.0 * eps * (abs_sum(a, b, n) + 1e-30);
        const double bound_sq = 4.0 * eps * (abs_sum(a, a, n) + 1e-30);
        mismatches += (std::fabs(static_cast<double>(got) - static_cast<double>(want)) <= bound) ? 0 : 1;
        mismatches += (std::fabs(static_cast<double>(got_sq) - static_cast<double>(want_sq)) <= bound_sq) ? 0 : 1;
      } else {
        mismatches += (same(got, want) && same(got_sq, want_sq)) ? 0 : 1;
      }
    }
  }
  if (mismatches != 0) {
    bt_test::print(K::kName);
    bt_test::print(": reductions differ from the reference\n");
  }
  BT_CHECK(t, mismatches == 0);
}

// axpy and scale at every length and alignment; the elements just past the
// end must stay untouched.
template <class K, class T>
void check_updates(bt_test::Context& t) {
  Buffers<T>& z = buffers<T>();
  Lcg r;
  const double eps = static_cast<double>(std::numeric_limits<T>::epsilon());
  long mismatches = 0;
  for (std::size_t offset = 0U; offset < 4U; ++offset) {
    for (std::size_t n = 0U; n <= kMax; ++n) {
      fill(z.a, n + offset, r, false);
      fill(z.y0, n + offset + kPad, r, false);
      std::memcpy(z.y1, z.y0, sizeof(z.y1));
      const T alpha = static_cast<T>(r.unit());
      Ref<T>::axpy(&z.y0[offset], alpha, &z.a[offset], n);
      K::axpy(&z.y1[offset], alpha, &z.a[offset], n);
      for (std::size_t i = 0U; i < n + offset + kPad; ++i) {
        if (K::kFused && (i >= offset) && (i < n + offset)) {
          const double bound = 2.0 * eps * (std::fabs(static_cast<double>(z.y0[i])) + 1.0);
          mismatches += (std::fabs(static_cast<double>(z.y1[i]) - static_cast<double>(z.y0[i])) <= bound) ? 0 : 1;
        } else {
          mismatches += same(z.y0[i], z.y1[i]) ? 0 : 1;
        }
      }
      std::memcpy(z.y1, z.y0, sizeof(z.y1));
      Ref<T>::scale(&z.y0[offset], alpha, n);
      K::scale(&z.y1[offset], alpha, n);
      for (std::size_t i = 0U; i < n + offset + kPad; ++i) {
        mismatches += same(z.y0[i], z.y1[i]) ? 0 : 1;
      }
    }
  }
  if (mismatches != 0) {
    bt_test::print(K::kName);
    bt_test::print(": axpy/scale differ from the reference\n");
  }
  BT_CHECK(t, mismatches == 0);
}

// Optimizer steps: bitwise the reference everywhere (they never fuse).
template <class K, class T>
void check_optimizers(bt_test::Context& t) {
  Buffers<T>& z = buffers<T>();
  Lcg r;
  long mismatches = 0;
  const std::size_t lengths[] = {0U, 1U, 3U, 4U, 7U, 8U, 15U, 16U, 17U, 33U, kMax};
  for (std::size_t n : lengths) {
    fill(z.a, n, r, false);
    fill(z.b, n, r, false);
    fill(z.m0, n, r, false);
    for (std::size_t i = 0U; i < n; ++i) {
      z.v0[i] = static_cast<T>(std::fabs(r.unit()));
    }
    std::memcpy(z.y0, z.a, n * sizeof(T));
    std::memcpy(z.y1, z.a, n * sizeof(T));
    std::memcpy(z.m1, z.m0, n * sizeof(T));
    std::memcpy(z.v1, z.v0, n * sizeof(T));
    Ref<T>::sgd_step(z.y0, z.b, T(0.1), n);
    K::sgd_step(z.y1, z.b, T(0.1), n);
    for (int step = 0; step < 2; ++step) {
      Ref<T>::momentum_step(z.y0, z.m0, z.b, T(0.05), T(0.9), step == 0, n);
      K::momentum_step(z.y1, z.m1, z.b, T(0.05), T(0.9), step == 0, n);
    }
    for (int step = 1; step <= 2; ++step) {
      const T bc1 = T(1) - static_cast<T>(std::pow(0.9, step));
      const T bc2 = T(1) - static_cast<T>(std::pow(0.999, step));
      const simd::AdamStep<T> p{T(0.001) / bc1, T(0.9), T(0.999), std::sqrt(bc2), T(1e-8), T(0.99999), step == 2};
      Ref<T>::adam_step(z.y0, z.m0, z.v0, z.b, p, n);
      K::adam_step(z.y1, z.m1, z.v1, z.b, p, n);
    }
    for (std::size_t i = 0U; i < n; ++i) {
      mismatches += (same(z.y0[i], z.y1[i]) && same(z.m0[i], z.m1[i]) && same(z.v0[i], z.v1[i])) ? 0 : 1;
    }
    // The steps on a gradient scaled first (a batch's 1/B folded in).
    const T scale = T(1) / T(3);
    Ref<T>::sgd_step(z.y0, z.b, T(0.1), scale, n);
    K::sgd_step(z.y1, z.b, T(0.1), scale, n);
    for (int step = 0; step < 2; ++step) {
      Ref<T>::momentum_step(z.y0, z.m0, z.b, T(0.05), T(0.9), step == 0, scale, n);
      K::momentum_step(z.y1, z.m1, z.b, T(0.05), T(0.9), step == 0, scale, n);
    }
    for (int step = 1; step <= 2; ++step) {
      const T bc1 = T(1) - static_cast<T>(std::pow(0.9, step));
      const T bc2 = T(1) - static_cast<T>(std::pow(0.999, step));
      const simd::AdamStep<T> p{T(0.001) / bc1, T(0.9), T(0.999), std::sqrt(bc2), T(1e-8), T(0.99999), step == 2};
      Ref<T>::adam_step(z.y0, z.m0, z.v0, z.b, p, scale, n);
      K::adam_step(z.y1, z.m1, z.v1, z.b, p, scale, n);
    }
    for (std::size_t i = 0U; i < n; ++i) {
      mismatches += (same(z.y0[i], z.y1[i]) && same(z.m0[i], z.m1[i]) && same(z.v0[i], z.v1[i])) ? 0 : 1;
    }
  }
  if (mismatches != 0) {
    bt_test::print(K::kName);
    bt_test::print(": optimizer steps differ from the reference\n");
  }
  BT_CHECK(t, mismatches == 0);
}

template <class K>
void check_float(bt_test::Context& t) {
  check_reductions<K, float>(t);
  check_updates<K, float>(t);
  check_optimizers<K, float>(t);
}

template <class K>
void check_double(bt_test::Context& t) {
  check_reductions<K, double>(t);
  check_updates<K, double>(t);
  check_optimizers<K, double>(t);
}

void every_kernel_matches_the_reference(bt_test::Context& t) {
  bt_test::print("kernels tested: reference");
  check_float<Impl<isa::Reference>>(t);
  check_double<Impl<isa::Reference>>(t);
#if BURTORCH_SIMD_SSE2
  bt_test::print(" sse2");
  check_float<Impl<isa::Sse2>>(t);
  check_double<Impl<isa::Sse2>>(t);
#endif
#if BURTORCH_SIMD_AVX2
  bt_test::print(BURTORCH_SIMD_AVX2_FMA ? " avx2+fma" : " avx2");
  check_float<Impl<isa::Avx2>>(t);
  check_double<Impl<isa::Avx2>>(t);
#endif
#if BURTORCH_SIMD_NEON
  bt_test::print(" neon");
  check_float<Impl<isa::Neon>>(t);
#if BURTORCH_SIMD_NEON_F64
  check_double<Impl<isa::Neon>>(t);
#endif
#endif
#if BURTORCH_SIMD_MVE
  bt_test::print(BURTORCH_SIMD_MVE_FMA ? " mve+fma" : " mve");
  check_float<Impl<isa::Mve>>(t);
#endif
#if BURTORCH_SIMD_VFP
  bt_test::print(BURTORCH_SIMD_VFP_FMA ? " vfp+fma" : " vfp");
  check_float<Impl<isa::Vfp>>(t);
#if BURTORCH_SIMD_VFP_F64
  check_double<Impl<isa::Vfp>>(t);
#endif
#endif
  bt_test::print("; selected: float ");
  bt_test::print(simd::isa_float());
  bt_test::print(", double ");
  bt_test::print(simd::isa_double());
  bt_test::print("\n");
}

// --- the public functions -------------------------------------------------------

// The public float and double functions as a kernel set (a call with float
// or double arguments picks them over the templates).
struct Public {
  template <class T>
  static T dot(const T* a, const T* b, std::size_t n) {
    return simd::dot(a, b, n);
  }
  template <class T>
  static T sum_squares(const T* x, std::size_t n) {
    return simd::sum_squares(x, n);
  }
  template <class T>
  static void axpy(T* y, T alpha, const T* x, std::size_t n) {
    simd::axpy(y, alpha, x, n);
  }
  template <class T>
  static void scale(T* x, T s, std::size_t n) {
    simd::scale(x, s, n);
  }
  template <class T>
  static void sgd_step(T* w, const T* g, T lr, std::size_t n) {
    simd::sgd_step(w, g, lr, n);
  }
  template <class T>
  static void momentum_step(T* w, T* buf, const T* g, T lr, T mu, bool first, std::size_t n) {
    simd::momentum_step(w, buf, g, lr, mu, first, n);
  }
  template <class T>
  static void adam_step(T* w, T* m, T* v, const T* g, const simd::AdamStep<T>& p, std::size_t n) {
    simd::adam_step(w, m, v, g, p, n);
  }
};

// The public templates (the reference loops), instantiated in this file.
struct Templates {
  template <class T>
  static T dot(const T* a, const T* b, std::size_t n) {
    return simd::dot<T>(a, b, n);
  }
  template <class T>
  static T sum_squares(const T* x, std::size_t n) {
    return simd::sum_squares<T>(x, n);
  }
  template <class T>
  static void axpy(T* y, T alpha, const T* x, std::size_t n) {
    simd::axpy<T>(y, alpha, x, n);
  }
  template <class T>
  static void scale(T* x, T s, std::size_t n) {
    simd::scale<T>(x, s, n);
  }
  template <class T>
  static void sgd_step(T* w, const T* g, T lr, std::size_t n) {
    simd::sgd_step<T>(w, g, lr, n);
  }
  template <class T>
  static void momentum_step(T* w, T* buf, const T* g, T lr, T mu, bool first, std::size_t n) {
    simd::momentum_step<T>(w, buf, g, lr, mu, first, n);
  }
  template <class T>
  static void adam_step(T* w, T* m, T* v, const T* g, const simd::AdamStep<T>& p, std::size_t n) {
    simd::adam_step<T>(w, m, v, g, p, n);
  }
};

// Runs every kernel of K and of L on the same data (each kernel on the
// results of the previous ones) and counts the values that differ in any
// bit, elements past the end included.
template <class K, class L, class T>
long bitwise_differences() {
  Buffers<T>& z = buffers<T>();
  Lcg r;
  long mismatches = 0;
  const std::size_t lengths[] = {0U, 1U, 3U, 4U, 7U, 8U, 15U, 16U, 17U, 33U, kMax};
  for (std::size_t n : lengths) {
    fill(z.a, n, r, false);
    fill(z.b, n, r, false);
    fill(z.y0, n + kPad, r, false);
    fill(z.m0, n + kPad, r, false);
    for (std::size_t i = 0U; i < n + kPad; ++i) {
      z.v0[i] = static_cast<T>(std::fabs(r.unit()));
    }
    std::memcpy(z.y1, z.y0, sizeof(z.y1));
    std::memcpy(z.m1, z.m0, sizeof(z.m1));
    std::memcpy(z.v1, z.v0, sizeof(z.v1));
    mismatches += same(K::dot(z.a, z.b, n), L::dot(z.a, z.b, n)) ? 0 : 1;
    mismatches += same(K::sum_squares(z.a, n), L::sum_squares(z.a, n)) ? 0 : 1;
    const T alpha = static_cast<T>(r.unit());
    K::axpy(z.y0, alpha, z.a, n);
    L::axpy(z.y1, alpha, z.a, n);
    K::scale(z.y0, alpha, n);
    L::scale(z.y1, alpha, n);
    K::sgd_step(z.y0, z.b, T(0.1), n);
    L::sgd_step(z.y1, z.b, T(0.1), n);
    for (int step = 0; step < 2; ++step) {
      K::momentum_step(z.y0, z.m0, z.b, T(0.05), T(0.9), step == 0, n);
      L::momentum_step(z.y1, z.m1, z.b, T(0.05), T(0.9), step == 0, n);
    }
    for (int step = 1; step <= 2; ++step) {
      const T bc1 = T(1) - static_cast<T>(std::pow(0.9, step));
      const T bc2 = T(1) - static_cast<T>(std::pow(0.999, step));
      const simd::AdamStep<T> p{T(0.001) / bc1, T(0.9), T(0.999), std::sqrt(bc2), T(1e-8), T(0.99999), step == 2};
      K::adam_step(z.y0, z.m0, z.v0, z.b, p, n);
      L::adam_step(z.y1, z.m1, z.v1, z.b, p, n);
    }
    for (std::size_t i = 0U; i < n + kPad; ++i) {
      mismatches += (same(z.y0[i], z.y1[i]) && same(z.m0[i], z.m1[i]) && same(z.v0[i], z.v1[i])) ? 0 : 1;
    }
  }
  return mismatches;
}

// simd::dot(const float*, ...) etc. are the selected implementation's
// kernels (bitwise, fused multiply-adds included), and isa_float() and
// isa_double() name it.
void public_functions_are_the_selected_kernels(bt_test::Context& t) {
  BT_CHECK(t, (bitwise_differences<Public, Impl<isa::ForFloat>, float>() == 0));
  BT_CHECK(t, (bitwise_differences<Public, Impl<isa::ForDouble>, double>() == 0));
  BT_CHECK(t, std::strcmp(simd::isa_float(), isa::ForFloat::kName) == 0);
  BT_CHECK(t, std::strcmp(simd::isa_double(), isa::ForDouble::kName) == 0);
#if BURTORCH_SIMD_FUSED_FLOAT
  // Fused and unfused kernels differ somewhere, so the comparison above
  // tells the selected fused kernels from the reference (in float: the
  // products of the test values, 24-bit fractions, are exact in double).
  BT_CHECK(t, (bitwise_differences<Public, Impl<isa::Reference>, float>() != 0));
#endif
}

#if BURTORCH_SIMD_VFP
// The documented order with each term fused into its partial sum (one
// rounding per term: std::fma), written out independently of lib/simd.
template <class T, std::size_t kP = 64U / sizeof(T)>
T defined_fused_dot(const T* a, const T* b, std::size_t n) {
  T p[kP];
  for (std::size_t k = 0U; k < kP; ++k) {
    p[k] = T(0);
  }
  for (std::size_t i = 0U; i < n; ++i) {
    p[i % kP] = std::fma(a[i], b[i], p[i % kP]);
  }
  std::size_t width = kP;
  while (width > 1U) {
    width /= 2U;
    for (std::size_t k = 0U; k < width; ++k) {
      p[k] = p[k] + p[k + width];
    }
  }
  return p[0];
}

// The scalar-FPU kernels of the Cortex-M cores (lib/simd/vfp.hpp) are the
// documented order bit for bit at every length: unfused, the reference's
// (checked in every_kernel_matches_the_reference); with fused
// multiply-adds, one fma per term into the same partial, and axpy one fma
// per element. So the in-register partials and the unrolled loops drop no
// term and move none to another partial.
template <class T>
void vfp_kernels_are_the_documented_order_t(bt_test::Context& t) {
  using K = Impl<isa::Vfp>;
  Buffers<T>& z = buffers<T>();
  Lcg r;
  long mismatches = 0;
  for (std::size_t n = 0U; n <= kMax; ++n) {
    fill(z.a, n, r, false);
    fill(z.b, n, r, false);
    const T want = K::kFused ? defined_fused_dot(z.a, z.b, n) : defined_dot(z.a, z.b, n);
    mismatches += same(K::dot(z.a, z.b, n), want) ? 0 : 1;
    fill(z.y0, n + kPad, r, false);
    std::memcpy(z.y1, z.y0, sizeof(z.y1));
    const T alpha = static_cast<T>(r.unit());
    K::axpy(z.y1, alpha, z.a, n);
    for (std::size_t i = 0U; i < n + kPad; ++i) {
      const T y = (i < n) ? (K::kFused ? std::fma(alpha, z.a[i], z.y0[i]) : (z.y0[i] + (alpha * z.a[i]))) : z.y0[i];
      mismatches += same(z.y1[i], y) ? 0 : 1;
    }
  }
  BT_CHECK(t, mismatches == 0);
}

void vfp_kernels_are_the_documented_order(bt_test::Context& t) {
  vfp_kernels_are_the_documented_order_t<float>(t);
#if BURTORCH_SIMD_VFP_F64
  vfp_kernels_are_the_documented_order_t<double>(t);
#endif
}
#endif

// The templates are the reference: instantiated here for float and double,
// they give the bits of the library's reference implementation.
void templates_are_the_reference(bt_test::Context& t) {
  BT_CHECK(t, (bitwise_differences<Templates, Impl<isa::Reference>, float>() == 0));
  BT_CHECK(t, (bitwise_differences<Templates, Impl<isa::Reference>, double>() == 0));
}

// --- the tape uses the selected kernels ---------------------------------------

template <class T>
void tape_inner_products_use_the_kernels_t(bt_test::Context& t) {
  static bt::FixedTape<T, 80, 8> tape;  // 2 * 37 + 1 nodes, 3 slots: fits the 16 KB micro:bit
  tape.reset();
  Lcg r;
  constexpr std::size_t kN = 37U;
  bt::Value<T> w[kN];
  bt::Value<T> x[kN];
  for (std::size_t i = 0U; i < kN; ++i) {
    w[i] = tape.param(static_cast<T>(r.unit()));
  }
  for (std::size_t i = 0U; i < kN; ++i) {
    x[i] = tape.leaf(static_cast<T>(r.unit()));
  }
  const bt::Value<T> y = bt::inner_product(w, x, kN);
  const T* v = tape.values();
  BT_CHECK(t, same(y.value(), simd::dot(&v[w[0].index()], &v[x[0].index()], kN)));
  // d y / d w_i = x_i and d y / d x_i = w_i, through axpy from zero: exact.
  BT_CHECK(t, tape.backward(y) == bt::Status::kOk);
  long mismatches = 0;
  for (std::size_t i = 0U; i < kN; ++i) {
    mismatches += ((w[i].grad() == x[i].value()) && (x[i].grad() == w[i].value())) ? 0 : 1;
  }
  BT_CHECK(t, mismatches == 0);
}

void tape_inner_products_use_the_kernels(bt_test::Context& t) {
  tape_inner_products_use_the_kernels_t<float>(t);
  tape_inner_products_use_the_kernels_t<double>(t);
}

// --- SIMD registers as scalars -----------------------------------------------

// Two lanes on the 16 KB micro:bit, four elsewhere.
constexpr std::size_t kLaneCount = BURTORCH_TEST_SMALL_TARGET ? 2U : 4U;
using Lanes4 = bt::Lanes<double, kLaneCount>;
bt::FixedTape<Lanes4, 32, 32> g_lanes;
bt::FixedTape<double, 32, 32> g_scalar;

// Lanes from the first kLaneCount of four values.
Lanes4 lanes_of(const double (&v)[4]) {
  Lanes4 x;
  for (std::size_t k = 0U; k < kLaneCount; ++k) {
    x.lane[k] = v[k];
  }
  return x;
}

// The tiny and small graphs on a tape of 4 lanes, each lane another sample:
// every lane's value and gradients equal a scalar tape's for that sample
// (the oracle is the scalar tape, itself checked by the core suites against
// closed forms and PyTorch). Bitwise where the compiler fuses no
// multiply-adds on its own (x86-64, Cortex-M0); elsewhere the library's
// scalar tape may be fused (docs/floating-point.md) while this file is not,
// so the check allows 1e-12 relative.
void lane_tape_equals_scalar_tapes(bt_test::Context& t) {
  bt::FixedTape<Lanes4, 32, 32>& lanes = g_lanes;
  bt::FixedTape<double, 32, 32>& scalar = g_scalar;
  const double a_in[4] = {-41.0, -4.0, 1.5, 3.0};  // relu and pow3 take both branches
  const double b_in[4] = {2.0, 2.0, -0.5, 7.25};
  for (int small = 0; small < 2; ++small) {
    lanes.reset();
    const Lanes4 a = lanes_of(a_in);
    const Lanes4 b = lanes_of(b_in);
    bt::Value<Lanes4> la;
    bt::Value<Lanes4> lb;
    bt::Value<Lanes4> lg;
    if (small == 1) {
      const auto n = examples::small_graph(lanes, a, b);
      la = n.a;
      lb = n.b;
      lg = n.g;
    } else {
      const auto n = examples::tiny_graph(lanes, a, b);
      la = n.a;
      lb = n.b;
      lg = n.g;
    }
    BT_CHECK(t, lanes.backward(lg) == bt::Status::kOk);
    BT_CHECK(t, bt::all_finite(lanes));
    long mismatches = 0;
    for (std::size_t k = 0U; k < kLaneCount; ++k) {
      scalar.reset();
      bt::Value<double> sa;
      bt::Value<double> sb;
      bt::Value<double> sg;
      if (small == 1) {
        const auto n = examples::small_graph(scalar, a_in[k], b_in[k]);
        sa = n.a;
        sb = n.b;
        sg = n.g;
      } else {
        const auto n = examples::tiny_graph(scalar, a_in[k], b_in[k]);
        sa = n.a;
        sb = n.b;
        sg = n.g;
      }
      static_cast<void>(scalar.backward(sg));
      mismatches += (bt_test::near(lg.value().lane[k], sg.value(), 1e-12, 0.0) &&
                     bt_test::near(la.grad().lane[k], sa.grad(), 1e-12, 0.0) &&
                     bt_test::near(lb.grad().lane[k], sb.grad(), 1e-12, 0.0))
                        ? 0
                        : 1;
    }
    BT_CHECK(t, mismatches == 0);
    if (small == 0) {
      // Lane 0 is the paper's tiny graph: closed form (the paper's worked example).
      BT_CHECK(t, lg.value().lane[0] == 612.5);
      BT_CHECK(t, la.grad().lane[0] == -35.0);
      BT_CHECK(t, lb.grad().lane[0] == 1050.0);
    } else {
      // Lane 1 is micrograd's example (a = -4, b = 2).
      BT_CHECK_NEAR(t, lg.value().lane[1], 24.70408163265306, 1e-15);
      BT_CHECK_NEAR(t, la.grad().lane[1], 138.83381924198252, 1e-15);
      BT_CHECK_NEAR(t, lb.grad().lane[1], 645.5772594752186, 1e-15);
    }
  }
}

// Lane-wise selects and reductions: log-sum-exp's maximum, the product's
// backward with zeros in different lanes, relu.
void lane_selects_and_products(bt_test::Context& t) {
  bt::FixedTape<Lanes4, 32, 32>& lanes = g_lanes;
  lanes.reset();
  const double x0[4] = {0.0, 2.0, -1.0, 3.0};
  const double x1[4] = {5.0, 0.0, 4.0, -2.0};
  const double x2[4] = {-3.0, 1.5, 0.0, 0.5};
  const bt::Value<Lanes4> xs[3] = {lanes.leaf(lanes_of(x0)), lanes.leaf(lanes_of(x1)), lanes.leaf(lanes_of(x2))};
  const bt::Value<Lanes4> p = bt::reduce_mul(xs, 3U);
  const bt::Value<Lanes4> l = bt::log_sum_exp(xs, 3U);
  const bt::Value<Lanes4> r = bt::relu(xs[0]);
  const bt::Value<Lanes4> parts[3] = {p, l, r};
  BT_CHECK(t, lanes.backward(bt::reduce_sum(parts, 3U)) == bt::Status::kOk);
  long mismatches = 0;
  for (std::size_t k = 0U; k < kLaneCount; ++k) {
    const double v[3] = {x0[k], x1[k], x2[k]};
    double top = v[0];
    for (double u : v) {
      top = (u > top) ? u : top;
    }
    double sum = 0.0;
    for (double u : v) {
      sum += std::exp(u - top);
    }
    for (std::size_t i = 0U; i < 3U; ++i) {
      // d/dx_i: product of the other two + softmax_i + relu'(x0) for i = 0.
      const double others = v[(i + 1U) % 3U] * v[(i + 2U) % 3U];
      const double softmax = std::exp(v[i] - top) / sum;
      const double relu = ((i == 0U) && (v[0] > 0.0)) ? 1.0 : 0.0;
      const double want = others + softmax + relu;
      mismatches += bt_test::near(xs[i].grad().lane[k], want, 1e-14, 1e-14) ? 0 : 1;
    }
    mismatches += (p.value().lane[k] == (v[0] * v[1]) * v[2]) ? 0 : 1;
    mismatches += bt_test::near(l.value().lane[k], top + std::log(sum), 1e-15, 0.0) ? 0 : 1;
  }
  BT_CHECK(t, mismatches == 0);
}

// --- the templates for other scalar types ------------------------------------

struct Twelve {
  char bytes[12];
};

// A lane type's kernels are the reference's in every lane: each lane of the
// element-wise steps is bitwise the library's reference for double, and
// each lane of an inner product is the documented order with the lane
// type's own P. long double's inner product likewise.
void templates_serve_other_scalar_types(bt_test::Context& t) {
  // P: the largest power of two with P * sizeof(T) <= 64, at least 1.
  BT_CHECK(t, simd::partials<float>() == 16U);
  BT_CHECK(t, simd::partials<double>() == 8U);
  BT_CHECK(t, simd::partials<Twelve>() == 4U);
  BT_CHECK(t, (simd::partials<bt::Lanes<double, 2>>() == 4U));
  BT_CHECK(t, (simd::partials<bt::Lanes<double, 8>>() == 1U));
  BT_CHECK(t, (simd::partials<bt::Lanes<double, 16>>() == 1U));

  using L = bt::Lanes<double, kLaneCount>;
  constexpr std::size_t kN = BURTORCH_TEST_SMALL_TARGET ? 5U : 13U;
  constexpr std::size_t kP = simd::partials<L>();
  static L w[kN];
  static L g[kN];
  static L m[kN];
  static L v[kN];
  Lcg r;
  for (std::size_t i = 0U; i < kN; ++i) {
    for (std::size_t k = 0U; k < kLaneCount; ++k) {
      w[i].lane[k] = r.unit();
      g[i].lane[k] = r.unit();
      m[i].lane[k] = r.unit();
      v[i].lane[k] = std::fabs(r.unit());
    }
  }
  // Lane k of every array, as double, into the scalar buffers.
  Buffers<double>& z = g_d;
  for (std::size_t i = 0U; i < kN; ++i) {
    for (std::size_t k = 0U; k < kLaneCount; ++k) {
      const std::size_t at = (k * kN) + i;
      z.y0[at] = w[i].lane[k];
      z.b[at] = g[i].lane[k];
      z.m0[at] = m[i].lane[k];
      z.v0[at] = v[i].lane[k];
    }
  }
  long mismatches = 0;
  for (std::size_t k = 0U; k < kLaneCount; ++k) {
    double a[kN];
    double b[kN];
    for (std::size_t i = 0U; i < kN; ++i) {
      a[i] = w[i].lane[k];
      b[i] = g[i].lane[k];
    }
    for (std::size_t n = 0U; n <= kN; ++n) {
      mismatches += same(simd::dot(w, g, n).lane[k], defined_dot<double, kP>(a, b, n)) ? 0 : 1;
      mismatches += same(simd::sum_squares(w, n).lane[k], defined_dot<double, kP>(a, a, n)) ? 0 : 1;
    }
  }
  simd::axpy(w, L(0.25), g, kN);
  simd::scale(w, L(0.75), kN);
  simd::sgd_step(w, g, L(0.1), kN);
  simd::momentum_step(w, m, g, L(0.05), L(0.9), false, kN);
  const simd::AdamStep<L> p{L(0.01), L(0.9), L(0.999), L(0.03), L(1e-8), L(0.999), true};
  simd::adam_step(w, m, v, g, p, kN);
  const simd::AdamStep<double> q{0.01, 0.9, 0.999, 0.03, 1e-8, 0.999, true};
  for (std::size_t k = 0U; k < kLaneCount; ++k) {
    double* wk = &z.y0[k * kN];
    double* mk = &z.m0[k * kN];
    double* vk = &z.v0[k * kN];
    const double* gk = &z.b[k * kN];
    Ref<double>::axpy(wk, 0.25, gk, kN);
    Ref<double>::scale(wk, 0.75, kN);
    Ref<double>::sgd_step(wk, gk, 0.1, kN);
    Ref<double>::momentum_step(wk, mk, gk, 0.05, 0.9, false, kN);
    Ref<double>::adam_step(wk, mk, vk, gk, q, kN);
    for (std::size_t i = 0U; i < kN; ++i) {
      mismatches += (same(w[i].lane[k], wk[i]) && same(m[i].lane[k], mk[i]) && same(v[i].lane[k], vk[i])) ? 0 : 1;
    }
  }
  BT_CHECK(t, mismatches == 0);

  // long double: the documented order with P = 64 / sizeof(long double).
  static long double la[kN];
  static long double lb[kN];
  for (std::size_t i = 0U; i < kN; ++i) {
    la[i] = static_cast<long double>(r.unit());
    lb[i] = static_cast<long double>(r.unit());
  }
  mismatches = 0;
  for (std::size_t n = 0U; n <= kN; ++n) {
    mismatches += (simd::dot(la, lb, n) == defined_dot(la, lb, n)) ? 0 : 1;
  }
  BT_CHECK(t, mismatches == 0);
}

const bt_test::TestCase kCases[] = {
    {"reference_is_the_documented_order", reference_is_the_documented_order},
    {"reference_optimizer_steps_follow_torch", reference_optimizer_steps_follow_torch},
    {"every_kernel_matches_the_reference", every_kernel_matches_the_reference},
    {"public_functions_are_the_selected_kernels", public_functions_are_the_selected_kernels},
    {"templates_are_the_reference", templates_are_the_reference},
#if BURTORCH_SIMD_VFP
    {"vfp_kernels_are_the_documented_order", vfp_kernels_are_the_documented_order},
#endif
    {"tape_inner_products_use_the_kernels", tape_inner_products_use_the_kernels},
    {"lane_tape_equals_scalar_tapes", lane_tape_equals_scalar_tapes},
    {"lane_selects_and_products", lane_selects_and_products},
    {"templates_serve_other_scalar_types", templates_serve_other_scalar_types},
};

}  // namespace

BT_TEST_MAIN("simd", kCases)
