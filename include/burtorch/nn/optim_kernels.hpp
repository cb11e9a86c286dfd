// SPDX-License-Identifier: Apache-2.0
/// @file
/// The optimizers' update kernels over the parameter range: SGD, SGD with
/// momentum and Adam/AdamW steps, each with or without a gradient scale
/// folded in (the 1/B of a serial batch). Declared like the kernels of
/// core/simd.hpp (a float and a double function of the implementation the
/// library was compiled with, and a reference template for any other type),
/// and defined with them in the library; the same results and ordering rules
/// (core/simd.hpp's file comment). Element-wise steps never fuse: they are
/// bitwise equal to the reference on every target.
#ifndef BURTORCH_NN_OPTIM_KERNELS_HPP
#define BURTORCH_NN_OPTIM_KERNELS_HPP

#include <cstddef>

#include "burtorch/core/simd.hpp"
#include "burtorch/scalar.hpp"

namespace burtorch {
namespace simd {

/// One Adam/AdamW update, in the order of torch.optim (1.13, single tensor):
///   w *= decay (AdamW only); m = m*beta1 + g*(1-beta1);
///   v = v*beta2 + (g*g)*(1-beta2); w += -step_size * (m / (sqrt(v)/c2 + eps))
/// with step_size = lr / (1 - beta1^t) and c2 = sqrt(1 - beta2^t).
template <class T>
struct AdamStep {
  T step_size;         ///< lr / (1 - beta1^t)
  T beta1;             ///< first-moment decay
  T beta2;             ///< second-moment decay
  T correction2_sqrt;  ///< sqrt(1 - beta2^t)
  T eps;               ///< added to the denominator
  T decay;  ///< 1 - lr * weight_decay
  bool decoupled;  ///< true: AdamW (apply decay)
};

/// SGD: w[i] -= lr * g[i] for i < n.
/// @{
void sgd_step(float* w, const float* g, float lr, std::size_t n) noexcept;
void sgd_step(double* w, const double* g, double lr, std::size_t n) noexcept;
template <class T>
void sgd_step(T* w, const T* g, T lr, std::size_t n) noexcept {
  for (std::size_t i = 0U; i < n; ++i) {
    w[i] -= lr * g[i];
  }
}
/// @}

/// SGD on a gradient to be scaled first: w[i] -= lr * (g[i] * scale) for
/// i < n, g unchanged. With scale = 1/B after a serial batch of B samples,
/// bitwise scale(g, scale, n) then sgd_step(w, g, lr, n) in one pass (the
/// batch's division folded into the step).
/// @{
void sgd_step(float* w, const float* g, float lr, float scale, std::size_t n) noexcept;
void sgd_step(double* w, const double* g, double lr, double scale, std::size_t n) noexcept;
template <class T>
void sgd_step(T* w, const T* g, T lr, T scale, std::size_t n) noexcept {
  for (std::size_t i = 0U; i < n; ++i) {
    w[i] -= lr * (g[i] * scale);
  }
}
/// @}

/// SGD with momentum (torch.optim.SGD, dampening 0): buf[i] = g[i] on the
/// first step, else buf[i] * momentum + g[i]; then w[i] -= lr * buf[i].
/// @{
void momentum_step(float* w, float* buf, const float* g, float lr, float momentum, bool first,
                   std::size_t n) noexcept;
void momentum_step(double* w, double* buf, const double* g, double lr, double momentum, bool first,
                   std::size_t n) noexcept;
template <class T>
void momentum_step(T* w, T* buf, const T* g, T lr, T momentum, bool first, std::size_t n) noexcept {
  for (std::size_t i = 0U; i < n; ++i) {
    buf[i] = first ? g[i] : ((buf[i] * momentum) + g[i]);
    w[i] -= lr * buf[i];
  }
}
/// @}

/// The same on a gradient to be scaled first: g[i] * scale for g[i]
/// (bitwise scale() then momentum_step(), g unchanged).
/// @{
void momentum_step(float* w, float* buf, const float* g, float lr, float momentum, bool first, float scale,
                   std::size_t n) noexcept;
void momentum_step(double* w, double* buf, const double* g, double lr, double momentum, bool first, double scale,
                   std::size_t n) noexcept;
template <class T>
void momentum_step(T* w, T* buf, const T* g, T lr, T momentum, bool first, T scale, std::size_t n) noexcept {
  for (std::size_t i = 0U; i < n; ++i) {
    const T gi = g[i] * scale;
    buf[i] = first ? gi : ((buf[i] * momentum) + gi);
    w[i] -= lr * buf[i];
  }
}
/// @}

/// One Adam/AdamW update of w, m and v from g (AdamStep has the formulas).
/// The square root is ScalarOps<T>::sqrt (std::sqrt for float and double).
/// @{
void adam_step(float* w, float* m, float* v, const float* g, const AdamStep<float>& p, std::size_t n) noexcept;
void adam_step(double* w, double* m, double* v, const double* g, const AdamStep<double>& p, std::size_t n) noexcept;
template <class T>
void adam_step(T* w, T* m, T* v, const T* g, const AdamStep<T>& p, std::size_t n) noexcept {
  const T one_minus_b1 = T(1) - p.beta1;
  const T one_minus_b2 = T(1) - p.beta2;
  for (std::size_t i = 0U; i < n; ++i) {
    if (p.decoupled) {
      w[i] *= p.decay;
    }
    m[i] = (m[i] * p.beta1) + (g[i] * one_minus_b1);
    v[i] = (v[i] * p.beta2) + ((g[i] * g[i]) * one_minus_b2);
    const T denominator = (ScalarOps<T>::sqrt(v[i]) / p.correction2_sqrt) + p.eps;
    w[i] += -p.step_size * (m[i] / denominator);
  }
}
/// @}

/// The same on a gradient to be scaled first: g[i] * scale for g[i]
/// (bitwise scale() then adam_step(), g unchanged).
/// @{
void adam_step(float* w, float* m, float* v, const float* g, const AdamStep<float>& p, float scale,
               std::size_t n) noexcept;
void adam_step(double* w, double* m, double* v, const double* g, const AdamStep<double>& p, double scale,
               std::size_t n) noexcept;
template <class T>
void adam_step(T* w, T* m, T* v, const T* g, const AdamStep<T>& p, T scale, std::size_t n) noexcept {
  const T one_minus_b1 = T(1) - p.beta1;
  const T one_minus_b2 = T(1) - p.beta2;
  for (std::size_t i = 0U; i < n; ++i) {
    if (p.decoupled) {
      w[i] *= p.decay;
    }
    const T gi = g[i] * scale;
    m[i] = (m[i] * p.beta1) + (gi * one_minus_b1);
    v[i] = (v[i] * p.beta2) + ((gi * gi) * one_minus_b2);
    const T denominator = (ScalarOps<T>::sqrt(v[i]) / p.correction2_sqrt) + p.eps;
    w[i] += -p.step_size * (m[i] / denominator);
  }
}
/// @}

}  // namespace simd
}  // namespace burtorch

#endif  // BURTORCH_NN_OPTIM_KERNELS_HPP
