// x86-64 kernels of burtorch/simd.hpp: SSE2 (every x86-64) and AVX2 (with
// -mavx2; fused multiply-add with -mfma and BURTORCH_CONFIG_SIMD_FMA 1).
// Reductions keep the reference's P = 64 / sizeof(T) partial sums in
// registers (SSE2: four 16-byte accumulators, AVX2: two 32-byte ones), add
// the tail to the same lanes (zero-padded or masked), and combine them with
// the reference's halving tree in registers.
#include "common.hpp"

#if BURTORCH_SIMD_SSE2
#include <emmintrin.h>
#endif
#if BURTORCH_SIMD_AVX2
#include <immintrin.h>
#endif

namespace burtorch {
namespace simd {

#if BURTORCH_SIMD_SSE2
namespace sse2 {

// Accumulators hold partials 0-3, 4-7, 8-11, 12-15 (float) or 0-1, 2-3,
// 4-5, 6-7 (double). A tail of r < P terms goes, 4 (2) at a time, to
// accumulators 0, 1, 2, ...; its last partial vector is zero-padded (the
// padding adds exact zeros). The halving tree then runs in registers.
float dot(const float* a, const float* b, std::size_t n) noexcept {
  __m128 s0 = _mm_setzero_ps();
  __m128 s1 = _mm_setzero_ps();
  __m128 s2 = _mm_setzero_ps();
  __m128 s3 = _mm_setzero_ps();
  std::size_t i = 0U;
  for (; (i + 16U) <= n; i += 16U) {
    s0 = _mm_add_ps(s0, _mm_mul_ps(_mm_loadu_ps(&a[i]), _mm_loadu_ps(&b[i])));
    s1 = _mm_add_ps(s1, _mm_mul_ps(_mm_loadu_ps(&a[i + 4U]), _mm_loadu_ps(&b[i + 4U])));
    s2 = _mm_add_ps(s2, _mm_mul_ps(_mm_loadu_ps(&a[i + 8U]), _mm_loadu_ps(&b[i + 8U])));
    s3 = _mm_add_ps(s3, _mm_mul_ps(_mm_loadu_ps(&a[i + 12U]), _mm_loadu_ps(&b[i + 12U])));
  }
  const std::size_t full = (n - i) / 4U;  // complete vectors in the tail (0..3)
  if (full > 0U) {
    s0 = _mm_add_ps(s0, _mm_mul_ps(_mm_loadu_ps(&a[i]), _mm_loadu_ps(&b[i])));
  }
  if (full > 1U) {
    s1 = _mm_add_ps(s1, _mm_mul_ps(_mm_loadu_ps(&a[i + 4U]), _mm_loadu_ps(&b[i + 4U])));
  }
  if (full > 2U) {
    s2 = _mm_add_ps(s2, _mm_mul_ps(_mm_loadu_ps(&a[i + 8U]), _mm_loadu_ps(&b[i + 8U])));
  }
  i += 4U * full;
  if (i < n) {
    float ta[4] = {};
    float tb[4] = {};
    for (std::size_t k = 0U; (i + k) < n; ++k) {
      ta[k] = a[i + k];
      tb[k] = b[i + k];
    }
    const __m128 t = _mm_mul_ps(_mm_loadu_ps(ta), _mm_loadu_ps(tb));
    s0 = (full == 0U) ? _mm_add_ps(s0, t) : s0;
    s1 = (full == 1U) ? _mm_add_ps(s1, t) : s1;
    s2 = (full == 2U) ? _mm_add_ps(s2, t) : s2;
    s3 = (full == 3U) ? _mm_add_ps(s3, t) : s3;
  }
  // k + 8, k + 4, k + 2, k + 1.
  __m128 s = _mm_add_ps(_mm_add_ps(s0, s2), _mm_add_ps(s1, s3));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
  return _mm_cvtss_f32(s);
}

double dot(const double* a, const double* b, std::size_t n) noexcept {
  __m128d s0 = _mm_setzero_pd();
  __m128d s1 = _mm_setzero_pd();
  __m128d s2 = _mm_setzero_pd();
  __m128d s3 = _mm_setzero_pd();
  std::size_t i = 0U;
  for (; (i + 8U) <= n; i += 8U) {
    s0 = _mm_add_pd(s0, _mm_mul_pd(_mm_loadu_pd(&a[i]), _mm_loadu_pd(&b[i])));
    s1 = _mm_add_pd(s1, _mm_mul_pd(_mm_loadu_pd(&a[i + 2U]), _mm_loadu_pd(&b[i + 2U])));
    s2 = _mm_add_pd(s2, _mm_mul_pd(_mm_loadu_pd(&a[i + 4U]), _mm_loadu_pd(&b[i + 4U])));
    s3 = _mm_add_pd(s3, _mm_mul_pd(_mm_loadu_pd(&a[i + 6U]), _mm_loadu_pd(&b[i + 6U])));
  }
  const std::size_t full = (n - i) / 2U;
  if (full > 0U) {
    s0 = _mm_add_pd(s0, _mm_mul_pd(_mm_loadu_pd(&a[i]), _mm_loadu_pd(&b[i])));
  }
  if (full > 1U) {
    s1 = _mm_add_pd(s1, _mm_mul_pd(_mm_loadu_pd(&a[i + 2U]), _mm_loadu_pd(&b[i + 2U])));
  }
  if (full > 2U) {
    s2 = _mm_add_pd(s2, _mm_mul_pd(_mm_loadu_pd(&a[i + 4U]), _mm_loadu_pd(&b[i + 4U])));
  }
  i += 2U * full;
  if (i < n) {  // one term left: lane 0 of the next accumulator
    const __m128d t = _mm_set_sd(a[i] * b[i]);
    s0 = (full == 0U) ? _mm_add_pd(s0, t) : s0;
    s1 = (full == 1U) ? _mm_add_pd(s1, t) : s1;
    s2 = (full == 2U) ? _mm_add_pd(s2, t) : s2;
    s3 = (full == 3U) ? _mm_add_pd(s3, t) : s3;
  }
  // k + 4, k + 2, k + 1.
  const __m128d s = _mm_add_pd(_mm_add_pd(s0, s2), _mm_add_pd(s1, s3));
  return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}

float sum_squares(const float* x, std::size_t n) noexcept { return dot(x, x, n); }
double sum_squares(const double* x, std::size_t n) noexcept { return dot(x, x, n); }

void axpy(float* y, float alpha, const float* x, std::size_t n) noexcept {
  const __m128 k = _mm_set1_ps(alpha);
  std::size_t i = 0U;
  for (; (i + 4U) <= n; i += 4U) {
    _mm_storeu_ps(&y[i], _mm_add_ps(_mm_loadu_ps(&y[i]), _mm_mul_ps(k, _mm_loadu_ps(&x[i]))));
  }
  detail::axpy(y, alpha, x, i, n);
}

void axpy(double* y, double alpha, const double* x, std::size_t n) noexcept {
  const __m128d k = _mm_set1_pd(alpha);
  std::size_t i = 0U;
  for (; (i + 2U) <= n; i += 2U) {
    _mm_storeu_pd(&y[i], _mm_add_pd(_mm_loadu_pd(&y[i]), _mm_mul_pd(k, _mm_loadu_pd(&x[i]))));
  }
  detail::axpy(y, alpha, x, i, n);
}

void scale(float* x, float s, std::size_t n) noexcept {
  const __m128 k = _mm_set1_ps(s);
  std::size_t i = 0U;
  for (; (i + 4U) <= n; i += 4U) {
    _mm_storeu_ps(&x[i], _mm_mul_ps(_mm_loadu_ps(&x[i]), k));
  }
  detail::scale(x, s, i, n);
}

void scale(double* x, double s, std::size_t n) noexcept {
  const __m128d k = _mm_set1_pd(s);
  std::size_t i = 0U;
  for (; (i + 2U) <= n; i += 2U) {
    _mm_storeu_pd(&x[i], _mm_mul_pd(_mm_loadu_pd(&x[i]), k));
  }
  detail::scale(x, s, i, n);
}

void sgd_step(float* w, const float* g, float lr, std::size_t n) noexcept {
  const __m128 k = _mm_set1_ps(lr);
  std::size_t i = 0U;
  for (; (i + 4U) <= n; i += 4U) {
    _mm_storeu_ps(&w[i], _mm_sub_ps(_mm_loadu_ps(&w[i]), _mm_mul_ps(k, _mm_loadu_ps(&g[i]))));
  }
  detail::sgd_step(w, g, lr, i, n);
}

void sgd_step(double* w, const double* g, double lr, std::size_t n) noexcept {
  const __m128d k = _mm_set1_pd(lr);
  std::size_t i = 0U;
  for (; (i + 2U) <= n; i += 2U) {
    _mm_storeu_pd(&w[i], _mm_sub_pd(_mm_loadu_pd(&w[i]), _mm_mul_pd(k, _mm_loadu_pd(&g[i]))));
  }
  detail::sgd_step(w, g, lr, i, n);
}

void momentum_step(float* w, float* buf, const float* g, float lr, float momentum, bool first,
                   std::size_t n) noexcept {
  const __m128 k = _mm_set1_ps(lr);
  const __m128 mu = _mm_set1_ps(momentum);
  std::size_t i = 0U;
  for (; (i + 4U) <= n; i += 4U) {
    const __m128 gi = _mm_loadu_ps(&g[i]);
    const __m128 b = first ? gi : _mm_add_ps(_mm_mul_ps(_mm_loadu_ps(&buf[i]), mu), gi);
    _mm_storeu_ps(&buf[i], b);
    _mm_storeu_ps(&w[i], _mm_sub_ps(_mm_loadu_ps(&w[i]), _mm_mul_ps(k, b)));
  }
  detail::momentum_step(w, buf, g, lr, momentum, first, i, n);
}

void momentum_step(double* w, double* buf, const double* g, double lr, double momentum, bool first,
                   std::size_t n) noexcept {
  const __m128d k = _mm_set1_pd(lr);
  const __m128d mu = _mm_set1_pd(momentum);
  std::size_t i = 0U;
  for (; (i + 2U) <= n; i += 2U) {
    const __m128d gi = _mm_loadu_pd(&g[i]);
    const __m128d b = first ? gi : _mm_add_pd(_mm_mul_pd(_mm_loadu_pd(&buf[i]), mu), gi);
    _mm_storeu_pd(&buf[i], b);
    _mm_storeu_pd(&w[i], _mm_sub_pd(_mm_loadu_pd(&w[i]), _mm_mul_pd(k, b)));
  }
  detail::momentum_step(w, buf, g, lr, momentum, first, i, n);
}

void adam_step(float* w, float* m, float* v, const float* g, const AdamStep<float>& p, std::size_t n) noexcept {
  const __m128 b1 = _mm_set1_ps(p.beta1);
  const __m128 b2 = _mm_set1_ps(p.beta2);
  const __m128 c1 = _mm_set1_ps(1.0F - p.beta1);
  const __m128 c2 = _mm_set1_ps(1.0F - p.beta2);
  const __m128 root = _mm_set1_ps(p.correction2_sqrt);
  const __m128 eps = _mm_set1_ps(p.eps);
  const __m128 step = _mm_set1_ps(-p.step_size);
  const __m128 decay = _mm_set1_ps(p.decay);
  std::size_t i = 0U;
  for (; (i + 4U) <= n; i += 4U) {
    __m128 wi = _mm_loadu_ps(&w[i]);
    if (p.decoupled) {
      wi = _mm_mul_ps(wi, decay);
    }
    const __m128 gi = _mm_loadu_ps(&g[i]);
    const __m128 mi = _mm_add_ps(_mm_mul_ps(_mm_loadu_ps(&m[i]), b1), _mm_mul_ps(gi, c1));
    const __m128 vi = _mm_add_ps(_mm_mul_ps(_mm_loadu_ps(&v[i]), b2), _mm_mul_ps(_mm_mul_ps(gi, gi), c2));
    const __m128 denominator = _mm_add_ps(_mm_div_ps(_mm_sqrt_ps(vi), root), eps);
    _mm_storeu_ps(&m[i], mi);
    _mm_storeu_ps(&v[i], vi);
    _mm_storeu_ps(&w[i], _mm_add_ps(wi, _mm_mul_ps(step, _mm_div_ps(mi, denominator))));
  }
  detail::adam_step(w, m, v, g, p, i, n);
}

void adam_step(double* w, double* m, double* v, const double* g, const AdamStep<double>& p,
               std::size_t n) noexcept {
  const __m128d b1 = _mm_set1_pd(p.beta1);
  const __m128d b2 = _mm_set1_pd(p.beta2);
  const __m128d c1 = _mm_set1_pd(1.0 - p.beta1);
  const __m128d c2 = _mm_set1_pd(1.0 - p.beta2);
  const __m128d root = _mm_set1_pd(p.correction2_sqrt);
  const __m128d eps = _mm_set1_pd(p.eps);
  const __m128d step = _mm_set1_pd(-p.step_size);
  const __m128d decay = _mm_set1_pd(p.decay);
  std::size_t i = 0U;
  for (; (i + 2U) <= n; i += 2U) {
    __m128d wi = _mm_loadu_pd(&w[i]);
    if (p.decoupled) {
      wi = _mm_mul_pd(wi, decay);
    }
    const __m128d gi = _mm_loadu_pd(&g[i]);
    const __m128d mi = _mm_add_pd(_mm_mul_pd(_mm_loadu_pd(&m[i]), b1), _mm_mul_pd(gi, c1));
    const __m128d vi = _mm_add_pd(_mm_mul_pd(_mm_loadu_pd(&v[i]), b2), _mm_mul_pd(_mm_mul_pd(gi, gi), c2));
    const __m128d denominator = _mm_add_pd(_mm_div_pd(_mm_sqrt_pd(vi), root), eps);
    _mm_storeu_pd(&m[i], mi);
    _mm_storeu_pd(&v[i], vi);
    _mm_storeu_pd(&w[i], _mm_add_pd(wi, _mm_mul_pd(step, _mm_div_pd(mi, denominator))));
  }
  detail::adam_step(w, m, v, g, p, i, n);
}

}  // namespace sse2
#endif  // BURTORCH_SIMD_SSE2

#if BURTORCH_SIMD_AVX2
namespace avx2 {
namespace {

// acc + a * b: fused where the build allows it.
inline __m256 mul_add(__m256 a, __m256 b, __m256 acc) noexcept {
#if BURTORCH_SIMD_AVX2_FMA
  return _mm256_fmadd_ps(a, b, acc);
#else
  return _mm256_add_ps(acc, _mm256_mul_ps(a, b));
#endif
}

inline __m256d mul_add(__m256d a, __m256d b, __m256d acc) noexcept {
#if BURTORCH_SIMD_AVX2_FMA
  return _mm256_fmadd_pd(a, b, acc);
#else
  return _mm256_add_pd(acc, _mm256_mul_pd(a, b));
#endif
}

// Lane masks for the first `count` lanes (count <= 8, resp. <= 4).
inline __m256i mask8(std::size_t count) noexcept {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(count)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
inline __m256i mask4(std::size_t count) noexcept {
  return _mm256_cmpgt_epi64(_mm256_set1_epi64x(static_cast<long long>(count)), _mm256_setr_epi64x(0, 1, 2, 3));
}

}  // namespace

float dot(const float* a, const float* b, std::size_t n) noexcept {
  __m256 s0 = _mm256_setzero_ps();
  __m256 s1 = _mm256_setzero_ps();
  std::size_t i = 0U;
  for (; (i + 16U) <= n; i += 16U) {
    s0 = mul_add(_mm256_loadu_ps(&a[i]), _mm256_loadu_ps(&b[i]), s0);
    s1 = mul_add(_mm256_loadu_ps(&a[i + 8U]), _mm256_loadu_ps(&b[i + 8U]), s1);
  }
  if (i < n) {
    // The tail through masked loads: lanes past the end add exact zeros.
    const std::size_t r = n - i;
    const __m256i m0 = mask8(r);
    s0 = mul_add(_mm256_maskload_ps(&a[i], m0), _mm256_maskload_ps(&b[i], m0), s0);
    if (r > 8U) {
      const __m256i m1 = mask8(r - 8U);
      s1 = mul_add(_mm256_maskload_ps(&a[i + 8U], m1), _mm256_maskload_ps(&b[i + 8U], m1), s1);
    }
  }
  // The halving tree in registers: k + 8, k + 4, k + 2, k + 1.
  const __m256 s8 = _mm256_add_ps(s0, s1);
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
  return _mm_cvtss_f32(s);
}

double dot(const double* a, const double* b, std::size_t n) noexcept {
  __m256d s0 = _mm256_setzero_pd();
  __m256d s1 = _mm256_setzero_pd();
  std::size_t i = 0U;
  for (; (i + 8U) <= n; i += 8U) {
    s0 = mul_add(_mm256_loadu_pd(&a[i]), _mm256_loadu_pd(&b[i]), s0);
    s1 = mul_add(_mm256_loadu_pd(&a[i + 4U]), _mm256_loadu_pd(&b[i + 4U]), s1);
  }
  if (i < n) {
    const std::size_t r = n - i;
    const __m256i m0 = mask4(r);
    s0 = mul_add(_mm256_maskload_pd(&a[i], m0), _mm256_maskload_pd(&b[i], m0), s0);
    if (r > 4U) {
      const __m256i m1 = mask4(r - 4U);
      s1 = mul_add(_mm256_maskload_pd(&a[i + 4U], m1), _mm256_maskload_pd(&b[i + 4U], m1), s1);
    }
  }
  // k + 4, k + 2, k + 1.
  const __m256d s4 = _mm256_add_pd(s0, s1);
  const __m128d s = _mm_add_pd(_mm256_castpd256_pd128(s4), _mm256_extractf128_pd(s4, 1));
  return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}

float sum_squares(const float* x, std::size_t n) noexcept { return dot(x, x, n); }
double sum_squares(const double* x, std::size_t n) noexcept { return dot(x, x, n); }

void axpy(float* y, float alpha, const float* x, std::size_t n) noexcept {
  const __m256 k = _mm256_set1_ps(alpha);
  std::size_t i = 0U;
  for (; (i + 16U) <= n; i += 16U) {
    _mm256_storeu_ps(&y[i], mul_add(k, _mm256_loadu_ps(&x[i]), _mm256_loadu_ps(&y[i])));
    _mm256_storeu_ps(&y[i + 8U], mul_add(k, _mm256_loadu_ps(&x[i + 8U]), _mm256_loadu_ps(&y[i + 8U])));
  }
  for (; (i + 8U) <= n; i += 8U) {
    _mm256_storeu_ps(&y[i], mul_add(k, _mm256_loadu_ps(&x[i]), _mm256_loadu_ps(&y[i])));
  }
  if (i < n) {
    const __m256i m = mask8(n - i);
    _mm256_maskstore_ps(&y[i], m, mul_add(k, _mm256_maskload_ps(&x[i], m), _mm256_maskload_ps(&y[i], m)));
  }
}

void axpy(double* y, double alpha, const double* x, std::size_t n) noexcept {
  const __m256d k = _mm256_set1_pd(alpha);
  std::size_t i = 0U;
  for (; (i + 8U) <= n; i += 8U) {
    _mm256_storeu_pd(&y[i], mul_add(k, _mm256_loadu_pd(&x[i]), _mm256_loadu_pd(&y[i])));
    _mm256_storeu_pd(&y[i + 4U], mul_add(k, _mm256_loadu_pd(&x[i + 4U]), _mm256_loadu_pd(&y[i + 4U])));
  }
  for (; (i + 4U) <= n; i += 4U) {
    _mm256_storeu_pd(&y[i], mul_add(k, _mm256_loadu_pd(&x[i]), _mm256_loadu_pd(&y[i])));
  }
  if (i < n) {
    const __m256i m = mask4(n - i);
    _mm256_maskstore_pd(&y[i], m, mul_add(k, _mm256_maskload_pd(&x[i], m), _mm256_maskload_pd(&y[i], m)));
  }
}

void scale(float* x, float s, std::size_t n) noexcept {
  const __m256 k = _mm256_set1_ps(s);
  std::size_t i = 0U;
  for (; (i + 8U) <= n; i += 8U) {
    _mm256_storeu_ps(&x[i], _mm256_mul_ps(_mm256_loadu_ps(&x[i]), k));
  }
  detail::scale(x, s, i, n);
}

void scale(double* x, double s, std::size_t n) noexcept {
  const __m256d k = _mm256_set1_pd(s);
  std::size_t i = 0U;
  for (; (i + 4U) <= n; i += 4U) {
    _mm256_storeu_pd(&x[i], _mm256_mul_pd(_mm256_loadu_pd(&x[i]), k));
  }
  detail::scale(x, s, i, n);
}

void sgd_step(float* w, const float* g, float lr, std::size_t n) noexcept {
  const __m256 k = _mm256_set1_ps(lr);
  std::size_t i = 0U;
  for (; (i + 8U) <= n; i += 8U) {
    _mm256_storeu_ps(&w[i], _mm256_sub_ps(_mm256_loadu_ps(&w[i]), _mm256_mul_ps(k, _mm256_loadu_ps(&g[i]))));
  }
  detail::sgd_step(w, g, lr, i, n);
}

void sgd_step(double* w, const double* g, double lr, std::size_t n) noexcept {
  const __m256d k = _mm256_set1_pd(lr);
  std::size_t i = 0U;
  for (; (i + 4U) <= n; i += 4U) {
    _mm256_storeu_pd(&w[i], _mm256_sub_pd(_mm256_loadu_pd(&w[i]), _mm256_mul_pd(k, _mm256_loadu_pd(&g[i]))));
  }
  detail::sgd_step(w, g, lr, i, n);
}

void momentum_step(float* w, float* buf, const float* g, float lr, float momentum, bool first,
                   std::size_t n) noexcept {
  const __m256 k = _mm256_set1_ps(lr);
  const __m256 mu = _mm256_set1_ps(momentum);
  std::size_t i = 0U;
  for (; (i + 8U) <= n; i += 8U) {
    const __m256 gi = _mm256_loadu_ps(&g[i]);
    const __m256 b = first ? gi : _mm256_add_ps(_mm256_mul_ps(_mm256_loadu_ps(&buf[i]), mu), gi);
    _mm256_storeu_ps(&buf[i], b);
    _mm256_storeu_ps(&w[i], _mm256_sub_ps(_mm256_loadu_ps(&w[i]), _mm256_mul_ps(k, b)));
  }
  detail::momentum_step(w, buf, g, lr, momentum, first, i, n);
}

void momentum_step(double* w, double* buf, const double* g, double lr, double momentum, bool first,
                   std::size_t n) noexcept {
  const __m256d k = _mm256_set1_pd(lr);
  const __m256d mu = _mm256_set1_pd(momentum);
  std::size_t i = 0U;
  for (; (i + 4U) <= n; i += 4U) {
    const __m256d gi = _mm256_loadu_pd(&g[i]);
    const __m256d b = first ? gi : _mm256_add_pd(_mm256_mul_pd(_mm256_loadu_pd(&buf[i]), mu), gi);
    _mm256_storeu_pd(&buf[i], b);
    _mm256_storeu_pd(&w[i], _mm256_sub_pd(_mm256_loadu_pd(&w[i]), _mm256_mul_pd(k, b)));
  }
  detail::momentum_step(w, buf, g, lr, momentum, first, i, n);
}

void adam_step(float* w, float* m, float* v, const float* g, const AdamStep<float>& p, std::size_t n) noexcept {
  const __m256 b1 = _mm256_set1_ps(p.beta1);
  const __m256 b2 = _mm256_set1_ps(p.beta2);
  const __m256 c1 = _mm256_set1_ps(1.0F - p.beta1);
  const __m256 c2 = _mm256_set1_ps(1.0F - p.beta2);
  const __m256 root = _mm256_set1_ps(p.correction2_sqrt);
  const __m256 eps = _mm256_set1_ps(p.eps);
  const __m256 step = _mm256_set1_ps(-p.step_size);
  const __m256 decay = _mm256_set1_ps(p.decay);
  std::size_t i = 0U;
  for (; (i + 8U) <= n; i += 8U) {
    __m256 wi = _mm256_loadu_ps(&w[i]);
    if (p.decoupled) {
      wi = _mm256_mul_ps(wi, decay);
    }
    const __m256 gi = _mm256_loadu_ps(&g[i]);
    const __m256 mi = _mm256_add_ps(_mm256_mul_ps(_mm256_loadu_ps(&m[i]), b1), _mm256_mul_ps(gi, c1));
    const __m256 vi =
        _mm256_add_ps(_mm256_mul_ps(_mm256_loadu_ps(&v[i]), b2), _mm256_mul_ps(_mm256_mul_ps(gi, gi), c2));
    const __m256 denominator = _mm256_add_ps(_mm256_div_ps(_mm256_sqrt_ps(vi), root), eps);
    _mm256_storeu_ps(&m[i], mi);
    _mm256_storeu_ps(&v[i], vi);
    _mm256_storeu_ps(&w[i], _mm256_add_ps(wi, _mm256_mul_ps(step, _mm256_div_ps(mi, denominator))));
  }
  detail::adam_step(w, m, v, g, p, i, n);
}

void adam_step(double* w, double* m, double* v, const double* g, const AdamStep<double>& p,
               std::size_t n) noexcept {
  const __m256d b1 = _mm256_set1_pd(p.beta1);
  const __m256d b2 = _mm256_set1_pd(p.beta2);
  const __m256d c1 = _mm256_set1_pd(1.0 - p.beta1);
  const __m256d c2 = _mm256_set1_pd(1.0 - p.beta2);
  const __m256d root = _mm256_set1_pd(p.correction2_sqrt);
  const __m256d eps = _mm256_set1_pd(p.eps);
  const __m256d step = _mm256_set1_pd(-p.step_size);
  const __m256d decay = _mm256_set1_pd(p.decay);
  std::size_t i = 0U;
  for (; (i + 4U) <= n; i += 4U) {
    __m256d wi = _mm256_loadu_pd(&w[i]);
    if (p.decoupled) {
      wi = _mm256_mul_pd(wi, decay);
    }
    const __m256d gi = _mm256_loadu_pd(&g[i]);
    const __m256d mi = _mm256_add_pd(_mm256_mul_pd(_mm256_loadu_pd(&m[i]), b1), _mm256_mul_pd(gi, c1));
    const __m256d vi =
        _mm256_add_pd(_mm256_mul_pd(_mm256_loadu_pd(&v[i]), b2), _mm256_mul_pd(_mm256_mul_pd(gi, gi), c2));
    const __m256d denominator = _mm256_add_pd(_mm256_div_pd(_mm256_sqrt_pd(vi), root), eps);
    _mm256_storeu_pd(&m[i], mi);
    _mm256_storeu_pd(&v[i], vi);
    _mm256_storeu_pd(&w[i], _mm256_add_pd(wi, _mm256_mul_pd(step, _mm256_div_pd(mi, denominator))));
  }
  detail::adam_step(w, m, v, g, p, i, n);
}

}  // namespace avx2
#endif  // BURTORCH_SIMD_AVX2

}  // namespace simd
}  // namespace burtorch
