// Arm kernels of burtorch/simd.hpp: Neon (AArch64: float and double;
// ARMv7-A: float) and Helium/MVE (Cortex-M55: float). Multiply and add are
// separate instructions (vmulq + vaddq), so results are bitwise those of the
// reference; reductions keep the reference's P partial sums in four 16-byte
// accumulators. MVE and ARMv7 Neon have no vector divide or square root:
// their Adam step is the reference's.
#include "common.hpp"

#if BURTORCH_SIMD_NEON
#include <arm_neon.h>
#endif
#if BURTORCH_SIMD_MVE
#include <arm_mve.h>
#endif

namespace burtorch {
namespace simd {

#if BURTORCH_SIMD_NEON || BURTORCH_SIMD_MVE
namespace {

// The float kernels are the same source for Neon and MVE: both name their
// 4 x float vector float32x4_t and their operations vld1q_f32, vst1q_f32,
// vaddq_f32, vsubq_f32, vmulq_f32, vdupq_n_f32.
float dot_f32(const float* a, const float* b, std::size_t n) noexcept {
  float32x4_t s0 = vdupq_n_f32(0.0F);
  float32x4_t s1 = vdupq_n_f32(0.0F);
  float32x4_t s2 = vdupq_n_f32(0.0F);
  float32x4_t s3 = vdupq_n_f32(0.0F);
  std::size_t i = 0U;
  for (; (i + 16U) <= n; i += 16U) {
    s0 = vaddq_f32(s0, vmulq_f32(vld1q_f32(&a[i]), vld1q_f32(&b[i])));
    s1 = vaddq_f32(s1, vmulq_f32(vld1q_f32(&a[i + 4U]), vld1q_f32(&b[i + 4U])));
    s2 = vaddq_f32(s2, vmulq_f32(vld1q_f32(&a[i + 8U]), vld1q_f32(&b[i + 8U])));
    s3 = vaddq_f32(s3, vmulq_f32(vld1q_f32(&a[i + 12U]), vld1q_f32(&b[i + 12U])));
  }
  // The tail: 4 terms at a time into accumulators 0, 1, 2, then a
  // zero-padded last vector (the padding adds exact zeros).
  const std::size_t full = (n - i) / 4U;
  if (full > 0U) {
    s0 = vaddq_f32(s0, vmulq_f32(vld1q_f32(&a[i]), vld1q_f32(&b[i])));
  }
  if (full > 1U) {
    s1 = vaddq_f32(s1, vmulq_f32(vld1q_f32(&a[i + 4U]), vld1q_f32(&b[i + 4U])));
  }
  if (full > 2U) {
    s2 = vaddq_f32(s2, vmulq_f32(vld1q_f32(&a[i + 8U]), vld1q_f32(&b[i + 8U])));
  }
  i += 4U * full;
  if (i < n) {
    float ta[4] = {};
    float tb[4] = {};
    for (std::size_t k = 0U; (i + k) < n; ++k) {
      ta[k] = a[i + k];
      tb[k] = b[i + k];
    }
    const float32x4_t t = vmulq_f32(vld1q_f32(ta), vld1q_f32(tb));
    s0 = (full == 0U) ? vaddq_f32(s0, t) : s0;
    s1 = (full == 1U) ? vaddq_f32(s1, t) : s1;
    s2 = (full == 2U) ? vaddq_f32(s2, t) : s2;
    s3 = (full == 3U) ? vaddq_f32(s3, t) : s3;
  }
  // The halving tree: k + 8, k + 4 in vectors, then k + 2, k + 1.
  const float32x4_t q = vaddq_f32(vaddq_f32(s0, s2), vaddq_f32(s1, s3));
  return (vgetq_lane_f32(q, 0) + vgetq_lane_f32(q, 2)) + (vgetq_lane_f32(q, 1) + vgetq_lane_f32(q, 3));
}

void axpy_f32(float* y, float alpha, const float* x, std::size_t n) noexcept {
  const float32x4_t k = vdupq_n_f32(alpha);
  std::size_t i = 0U;
  for (; (i + 4U) <= n; i += 4U) {
    vst1q_f32(&y[i], vaddq_f32(vld1q_f32(&y[i]), vmulq_f32(k, vld1q_f32(&x[i]))));
  }
  detail::axpy(y, alpha, x, i, n);
}

void scale_f32(float* x, float s, std::size_t n) noexcept {
  const float32x4_t k = vdupq_n_f32(s);
  std::size_t i = 0U;
  for (; (i + 4U) <= n; i += 4U) {
    vst1q_f32(&x[i], vmulq_f32(vld1q_f32(&x[i]), k));
  }
  detail::scale(x, s, i, n);
}

void sgd_f32(float* w, const float* g, float lr, std::size_t n) noexcept {
  const float32x4_t k = vdupq_n_f32(lr);
  std::size_t i = 0U;
  for (; (i + 4U) <= n; i += 4U) {
    vst1q_f32(&w[i], vsubq_f32(vld1q_f32(&w[i]), vmulq_f32(k, vld1q_f32(&g[i]))));
  }
  detail::sgd_step(w, g, lr, i, n);
}

void momentum_f32(float* w, float* buf, const float* g, float lr, float momentum, bool first,
                  std::size_t n) noexcept {
  const float32x4_t k = vdupq_n_f32(lr);
  const float32x4_t mu = vdupq_n_f32(momentum);
  std::size_t i = 0U;
  for (; (i + 4U) <= n; i += 4U) {
    const float32x4_t gi = vld1q_f32(&g[i]);
    const float32x4_t b = first ? gi : vaddq_f32(vmulq_f32(vld1q_f32(&buf[i]), mu), gi);
    vst1q_f32(&buf[i], b);
    vst1q_f32(&w[i], vsubq_f32(vld1q_f32(&w[i]), vmulq_f32(k, b)));
  }
  detail::momentum_step(w, buf, g, lr, momentum, first, i, n);
}

}  // namespace
#endif

#if BURTORCH_SIMD_NEON
namespace neon {

float dot(const float* a, const float* b, std::size_t n) noexcept { return dot_f32(a, b, n); }
float sum_squares(const float* x, std::size_t n) noexcept { return dot_f32(x, x, n); }
void axpy(float* y, float alpha, const float* x, std::size_t n) noexcept { axpy_f32(y, alpha, x, n); }
void scale(float* x, float s, std::size_t n) noexcept { scale_f32(x, s, n); }
void sgd_step(float* w, const float* g, float lr, std::size_t n) noexcept { sgd_f32(w, g, lr, n); }
void momentum_step(float* w, float* buf, const float* g, float lr, float momentum, bool first,
                   std::size_t n) noexcept {
  momentum_f32(w, buf, g, lr, momentum, first, n);
}

#if BURTORCH_SIMD_NEON_F64
void adam_step(float* w, float* m, float* v, const float* g, const AdamStep<float>& p, std::size_t n) noexcept {
  const float32x4_t b1 = vdupq_n_f32(p.beta1);
  const float32x4_t b2 = vdupq_n_f32(p.beta2);
  const float32x4_t c1 = vdupq_n_f32(1.0F - p.beta1);
  const float32x4_t c2 = vdupq_n_f32(1.0F - p.beta2);
  const float32x4_t root = vdupq_n_f32(p.correction2_sqrt);
  const float32x4_t eps = vdupq_n_f32(p.eps);
  const float32x4_t step = vdupq_n_f32(-p.step_size);
  const float32x4_t decay = vdupq_n_f32(p.decay);
  std::size_t i = 0U;
  for (; (i + 4U) <= n; i += 4U) {
    float32x4_t wi = vld1q_f32(&w[i]);
    if (p.decoupled) {
      wi = vmulq_f32(wi, decay);
    }
    const float32x4_t gi = vld1q_f32(&g[i]);
    const float32x4_t mi = vaddq_f32(vmulq_f32(vld1q_f32(&m[i]), b1), vmulq_f32(gi, c1));
    const float32x4_t vi = vaddq_f32(vmulq_f32(vld1q_f32(&v[i]), b2), vmulq_f32(vmulq_f32(gi, gi), c2));
    const float32x4_t denominator = vaddq_f32(vdivq_f32(vsqrtq_f32(vi), root), eps);
    vst1q_f32(&m[i], mi);
    vst1q_f32(&v[i], vi);
    vst1q_f32(&w[i], vaddq_f32(wi, vmulq_f32(step, vdivq_f32(mi, denominator))));
  }
  detail::adam_step(w, m, v, g, p, i, n);
}

double dot(const double* a, const double* b, std::size_t n) noexcept {
  float64x2_t s0 = vdupq_n_f64(0.0);
  float64x2_t s1 = vdupq_n_f64(0.0);
  float64x2_t s2 = vdupq_n_f64(0.0);
  float64x2_t s3 = vdupq_n_f64(0.0);
  std::size_t i = 0U;
  for (; (i + 8U) <= n; i += 8U) {
    s0 = vaddq_f64(s0, vmulq_f64(vld1q_f64(&a[i]), vld1q_f64(&b[i])));
    s1 = vaddq_f64(s1, vmulq_f64(vld1q_f64(&a[i + 2U]), vld1q_f64(&b[i + 2U])));
    s2 = vaddq_f64(s2, vmulq_f64(vld1q_f64(&a[i + 4U]), vld1q_f64(&b[i + 4U])));
    s3 = vaddq_f64(s3, vmulq_f64(vld1q_f64(&a[i + 6U]), vld1q_f64(&b[i + 6U])));
  }
  const std::size_t full = (n - i) / 2U;
  if (full > 0U) {
    s0 = vaddq_f64(s0, vmulq_f64(vld1q_f64(&a[i]), vld1q_f64(&b[i])));
  }
  if (full > 1U) {
    s1 = vaddq_f64(s1, vmulq_f64(vld1q_f64(&a[i + 2U]), vld1q_f64(&b[i + 2U])));
  }
  if (full > 2U) {
    s2 = vaddq_f64(s2, vmulq_f64(vld1q_f64(&a[i + 4U]), vld1q_f64(&b[i + 4U])));
  }
  i += 2U * full;
  if (i < n) {  // one term left: lane 0 of the next accumulator
    const float64x2_t t = vsetq_lane_f64(a[i] * b[i], vdupq_n_f64(0.0), 0);
    s0 = (full == 0U) ? vaddq_f64(s0, t) : s0;
    s1 = (full == 1U) ? vaddq_f64(s1, t) : s1;
    s2 = (full == 2U) ? vaddq_f64(s2, t) : s2;
    s3 = (full == 3U) ? vaddq_f64(s3, t) : s3;
  }
  // k + 4, k + 2, k + 1.
  const float64x2_t q = vaddq_f64(vaddq_f64(s0, s2), vaddq_f64(s1, s3));
  return vgetq_lane_f64(q, 0) + vgetq_lane_f64(q, 1);
}

double sum_squares(const double* x, std::size_t n) noexcept { return dot(x, x, n); }

void axpy(double* y, double alpha, const double* x, std::size_t n) noexcept {
  const float64x2_t k = vdupq_n_f64(alpha);
  std::size_t i = 0U;
  for (; (i + 2U) <= n; i += 2U) {
    vst1q_f64(&y[i], vaddq_f64(vld1q_f64(&y[i]), vmulq_f64(k, vld1q_f64(&x[i]))));
  }
  detail::axpy(y, alpha, x, i, n);
}

void scale(double* x, double s, std::size_t n) noexcept {
  const float64x2_t k = vdupq_n_f64(s);
  std::size_t i = 0U;
  for (; (i + 2U) <= n; i += 2U) {
    vst1q_f64(&x[i], vmulq_f64(vld1q_f64(&x[i]), k));
  }
  detail::scale(x, s, i, n);
}

void sgd_step(double* w, const double* g, double lr, std::size_t n) noexcept {
  const float64x2_t k = vdupq_n_f64(lr);
  std::size_t i = 0U;
  for (; (i + 2U) <= n; i += 2U) {
    vst1q_f64(&w[i], vsubq_f64(vld1q_f64(&w[i]), vmulq_f64(k, vld1q_f64(&g[i]))));
  }
  detail::sgd_step(w, g, lr, i, n);
}

void momentum_step(double* w, double* buf, const double* g, double lr, double momentum, bool first,
                   std::size_t n) noexcept {
  const float64x2_t k = vdupq_n_f64(lr);
  const float64x2_t mu = vdupq_n_f64(momentum);
  std::size_t i = 0U;
  for (; (i + 2U) <= n; i += 2U) {
    const float64x2_t gi = vld1q_f64(&g[i]);
    const float64x2_t b = first ? gi : vaddq_f64(vmulq_f64(vld1q_f64(&buf[i]), mu), gi);
    vst1q_f64(&buf[i], b);
    vst1q_f64(&w[i], vsubq_f64(vld1q_f64(&w[i]), vmulq_f64(k, b)));
  }
  detail::momentum_step(w, buf, g, lr, momentum, first, i, n);
}

void adam_step(double* w, double* m, double* v, const double* g, const AdamStep<double>& p,
               std::size_t n) noexcept {
  const float64x2_t b1 = vdupq_n_f64(p.beta1);
  const float64x2_t b2 = vdupq_n_f64(p.beta2);
  const float64x2_t c1 = vdupq_n_f64(1.0 - p.beta1);
  const float64x2_t c2 = vdupq_n_f64(1.0 - p.beta2);
  const float64x2_t root = vdupq_n_f64(p.correction2_sqrt);
  const float64x2_t eps = vdupq_n_f64(p.eps);
  const float64x2_t step = vdupq_n_f64(-p.step_size);
  const float64x2_t decay = vdupq_n_f64(p.decay);
  std::size_t i = 0U;
  for (; (i + 2U) <= n; i += 2U) {
    float64x2_t wi = vld1q_f64(&w[i]);
    if (p.decoupled) {
      wi = vmulq_f64(wi, decay);
    }
    const float64x2_t gi = vld1q_f64(&g[i]);
    const float64x2_t mi = vaddq_f64(vmulq_f64(vld1q_f64(&m[i]), b1), vmulq_f64(gi, c1));
    const float64x2_t vi = vaddq_f64(vmulq_f64(vld1q_f64(&v[i]), b2), vmulq_f64(vmulq_f64(gi, gi), c2));
    const float64x2_t denominator = vaddq_f64(vdivq_f64(vsqrtq_f64(vi), root), eps);
    vst1q_f64(&m[i], mi);
    vst1q_f64(&v[i], vi);
    vst1q_f64(&w[i], vaddq_f64(wi, vmulq_f64(step, vdivq_f64(mi, denominator))));
  }
  detail::adam_step(w, m, v, g, p, i, n);
}
#else
void adam_step(float* w, float* m, float* v, const float* g, const AdamStep<float>& p, std::size_t n) noexcept {
  detail::adam_step(w, m, v, g, p, 0U, n);  // ARMv7 Neon: no vector divide or square root
}
#endif  // BURTORCH_SIMD_NEON_F64

}  // namespace neon
#endif  // BURTORCH_SIMD_NEON

#if BURTORCH_SIMD_MVE
namespace mve {

float dot(const float* a, const float* b, std::size_t n) noexcept { return dot_f32(a, b, n); }
float sum_squares(const float* x, std::size_t n) noexcept { return dot_f32(x, x, n); }
void axpy(float* y, float alpha, const float* x, std::size_t n) noexcept { axpy_f32(y, alpha, x, n); }
void scale(float* x, float s, std::size_t n) noexcept { scale_f32(x, s, n); }
void sgd_step(float* w, const float* g, float lr, std::size_t n) noexcept { sgd_f32(w, g, lr, n); }
void momentum_step(float* w, float* buf, const float* g, float lr, float momentum, bool first,
                   std::size_t n) noexcept {
  momentum_f32(w, buf, g, lr, momentum, first, n);
}
void adam_step(float* w, float* m, float* v, const float* g, const AdamStep<float>& p, std::size_t n) noexcept {
  detail::adam_step(w, m, v, g, p, 0U, n);  // MVE: no vector divide or square root
}

}  // namespace mve
#endif  // BURTORCH_SIMD_MVE

}  // namespace simd
}  // namespace burtorch
