// SPDX-License-Identifier: Apache-2.0
/// @file
/// Optimizers over a parameter range [0, n) of value and gradient arrays
/// (Tape::values() + first, Tape::grads() + first). Their state lives in
/// caller buffers of n scalars each (Momentum: 1, Adam/AdamW: 2), sized at
/// compile time by the memory plan. Formulas and the order of operations
/// follow torch.optim (1.13, single-tensor path) so trajectories match.
/// The element-wise updates are the kernels of burtorch/simd.hpp: the
/// library's vector kernels for float and double, the reference loops for
/// any other scalar type (the vector optimizer steps are bitwise the
/// reference loops: tests/test_simd.cpp).
#ifndef BURTORCH_NN_OPTIM_HPP
#define BURTORCH_NN_OPTIM_HPP

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "burtorch/simd.hpp"

namespace burtorch {
namespace nn {

/// The update rule of an Optimizer (torch.optim's formulas and order).
enum class OptimizerKind : unsigned char {
  kSgd,       ///< w -= lr * g
  kMomentum,  ///< SGD with momentum (torch.optim.SGD, dampening 0)
  kAdam,      ///< Adam
  kAdamW,     ///< Adam with decoupled weight decay
};

/// Scalars of optimizer state per parameter.
constexpr std::size_t state_per_parameter(OptimizerKind kind) noexcept {
  return (kind == OptimizerKind::kSgd) ? 0U : ((kind == OptimizerKind::kMomentum) ? 1U : 2U);
}

/// The update rule and its hyperparameters (torch.optim's defaults, lr 0.1).
template <class T>
struct OptimizerConfig {
  OptimizerKind kind = OptimizerKind::kSgd;  ///< the update rule
  T lr = T(0.1);                             ///< learning rate
  T momentum = T(0.9);                       ///< kMomentum only
  T beta1 = T(0.9);                          ///< Adam/AdamW first-moment decay
  T beta2 = T(0.999);                        ///< Adam/AdamW second-moment decay
  T eps = T(1e-8);                           ///< Adam/AdamW denominator term
  T weight_decay = T(0.01);  ///< AdamW only (decoupled)
};

/// g *= scale over n gradients (e.g. 1/B after a serial batch of B samples).
template <class T>
inline void scale_gradients(T* grads, std::size_t n, T scale) noexcept {
  simd::scale(grads, scale, n);
}

/// Global L2 norm of the gradients.
template <class T>
inline T gradient_norm(const T* grads, std::size_t n) noexcept {
  T s = T(0);
  for (std::size_t i = 0U; i < n; ++i) {
    s += grads[i] * grads[i];
  }
  return std::sqrt(s);
}

/// torch.nn.utils.clip_grad_norm_: scales by min(1, max_norm / (norm + 1e-6)).
/// Returns the norm before clipping.
template <class T>
inline T clip_gradient_norm(T* grads, std::size_t n, T max_norm) noexcept {
  const T norm = gradient_norm(grads, n);
  T coefficient = max_norm / (norm + T(1e-6));
  coefficient = (coefficient < T(1)) ? coefficient : T(1);
  scale_gradients(grads, n, coefficient);
  return norm;
}

/// Updates n parameters from their gradients with the rule of its config.
/// Owns no memory: its state (momentum buffer, Adam moments) is a caller
/// array of state_per_parameter(kind) * n scalars.
template <class T>
class Optimizer {
 public:
  /// `state` holds state_per_parameter(kind) * n scalars (may be null for
  /// SGD). It is zeroed here.
  Optimizer(const OptimizerConfig<T>& config, T* state, std::size_t n) noexcept
      : config_(config), state_(state), n_(n) {
    const std::size_t words = state_per_parameter(config.kind) * n;
    for (std::size_t i = 0U; (state_ != nullptr) && (i < words); ++i) {
      state_[i] = T(0);
    }
  }

  /// False if the rule needs state and none was given (step() does nothing).
  bool ready() const noexcept { return (state_per_parameter(config_.kind) == 0U) || (state_ != nullptr); }
  /// Changes the learning rate (schedules).
  void set_lr(T lr) noexcept { config_.lr = lr; }
  /// The rule and hyperparameters.
  const OptimizerConfig<T>& config() const noexcept { return config_; }
  /// Updates made so far.
  std::uint64_t steps() const noexcept { return steps_; }
  /// For checkpoints: the state array, its size in scalars, and the step counter.
  /// @{
  T* state() noexcept { return state_; }
  std::size_t state_size() const noexcept { return state_per_parameter(config_.kind) * n_; }
  std::uint64_t* step_counter() noexcept { return &steps_; }
  /// @}

  /// One update of w[0..n) from g[0..n).
  void step(T* w, const T* g) noexcept {
    if (!ready()) {
      return;
    }
    ++steps_;
    const T lr = config_.lr;
    switch (config_.kind) {
      case OptimizerKind::kSgd:
        simd::sgd_step(w, g, lr, n_);
        break;
      case OptimizerKind::kMomentum:
        simd::momentum_step(w, state_, g, lr, config_.momentum, steps_ == 1U, n_);
        break;
      case OptimizerKind::kAdam:
      case OptimizerKind::kAdamW: {
        T* m = state_;
        T* v = state_ + n_;
        const T b1 = config_.beta1;
        const T b2 = config_.beta2;
        const T t = static_cast<T>(steps_);
        const T correction1 = T(1) - std::pow(b1, t);
        const T correction2 = T(1) - std::pow(b2, t);
        const T step_size = lr / correction1;
        const T correction2_sqrt = std::sqrt(correction2);
        const T decay = T(1) - (lr * config_.weight_decay);
        const bool decoupled = config_.kind == OptimizerKind::kAdamW;
        const simd::AdamStep<T> p{step_size, b1, b2, correction2_sqrt, config_.eps, decay, decoupled};
        simd::adam_step(w, m, v, g, p, n_);
        break;
      }
      default:
        break;
    }
  }

 private:
  OptimizerConfig<T> config_;
  T* state_ = nullptr;
  std::size_t n_ = 0U;
  std::uint64_t steps_ = 0U;
};

}  // namespace nn
}  // namespace burtorch

#endif  // BURTORCH_NN_OPTIM_HPP
