// SPDX-License-Identifier: Apache-2.0
/// @file
/// Optimizers over a model's parameters: a View of the tape (model.params()),
/// stepped with opt.step(tape, model.params()). Their state lives in a
/// caller buffer whose capacity the optimizer knows (Momentum: 1 scalar per
/// parameter, Adam/AdamW: 2), sized at compile time by the memory plan; a
/// step over more parameters than it holds is refused. Formulas and the order
/// of operations follow torch.optim (1.13, single-tensor path) so
/// trajectories match.
/// The element-wise updates are the kernels of nn/optim_kernels.hpp: the
/// library's vector kernels for float and double, the reference loops for
/// any other scalar type (bitwise the same: tests/core/test_simd.cpp).
#ifndef BURTORCH_NN_OPTIM_HPP
#define BURTORCH_NN_OPTIM_HPP

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "burtorch/nn/params.hpp"
#include "burtorch/nn/optim_kernels.hpp"
#include "burtorch/status.hpp"
#include "burtorch/core/tape.hpp"

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
struct OptimizerOptions {
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

/// Global L2 norm of the gradients of `params`; NaN if the view is not
/// recorded on the tape (see is_recorded()).
template <class T>
inline T gradient_norm(const Tape<T>& tape, View params) noexcept {
  if (!is_recorded(tape, params)) {
    return std::numeric_limits<T>::quiet_NaN();
  }
  const T* grads = tape.grads() + params.first;
  T s = T(0);
  for (std::size_t i = 0U; i < params.count; ++i) {
    s += grads[i] * grads[i];
  }
  return std::sqrt(s);
}

/// torch.nn.utils.clip_grad_norm_ over the gradients of `params`: scales them
/// by min(1, max_norm / (norm + 1e-6)). Returns the norm before clipping; NaN,
/// changing nothing, if the view is not recorded on the tape.
template <class T>
inline T clip_gradient_norm(Tape<T>& tape, View params, T max_norm) noexcept {
  if (!is_recorded(tape, params)) {
    return std::numeric_limits<T>::quiet_NaN();
  }
  const T norm = gradient_norm(tape, params);
  T coefficient = max_norm / (norm + T(1e-6));
  coefficient = (coefficient < T(1)) ? coefficient : T(1);
  scale_gradients(tape.grads() + params.first, params.count, coefficient);
  return norm;
}

/// Updates parameters from their gradients with the rule of its config:
/// opt.step(tape, model.params()). Owns no memory: its state (momentum
/// buffer, Adam moments) is a caller array whose capacity it is given; it
/// holds the state of max_parameters() parameters. Step the same view every
/// time: parameter i of the view owns state()[i] (and, for Adam/AdamW, the
/// second moment state()[max_parameters() + i]).
template <class T>
class Optimizer {
 public:
  /// `state` is a caller array of `capacity` scalars (nullptr and 0 for
  /// SGD), zeroed here. It holds the state of capacity /
  /// state_per_parameter(kind) parameters (SGD: any number).
  Optimizer(const OptimizerOptions<T>& config, T* state, std::size_t capacity) noexcept
      : options_(config),
        state_(state),
        max_parameters_(max_parameters_for(config.kind, state, capacity)) {
    const std::size_t words = (state_ != nullptr) ? capacity : 0U;
    for (std::size_t i = 0U; i < words; ++i) {
      state_[i] = T(0);
    }
  }
  /// The same for a static array, whose size is the capacity:
  /// `float moments[kPlan.optimizer_bytes / sizeof(float)]; nn::Optimizer<float> opt(config, moments);`
  template <std::size_t N>
  Optimizer(const OptimizerOptions<T>& config, T (&state)[N]) noexcept : Optimizer(config, state, N) {}
  /// Without state: plain SGD (another rule is not ready()).
  explicit Optimizer(const OptimizerOptions<T>& config) noexcept : Optimizer(config, nullptr, 0U) {}

  /// False if the rule needs state and the buffer holds none (every step()
  /// is refused).
  bool ready() const noexcept { return max_parameters_ != 0U; }
  /// The most parameters a step may update: the state's capacity divided by
  /// state_per_parameter(kind); the largest size_t for SGD.
  std::size_t max_parameters() const noexcept { return max_parameters_; }
  /// Changes the learning rate (schedules).
  void set_lr(T lr) noexcept { options_.lr = lr; }
  /// The rule and hyperparameters.
  const OptimizerOptions<T>& options() const noexcept { return options_; }
  /// Updates made so far.
  std::uint64_t steps() const noexcept { return steps_; }
  /// The parameters a rule with state (momentum, Adam, AdamW) is bound to:
  /// the view of its first step; a step over another view, or on another
  /// tape, is refused (kInvalidArgument), since the state holds that view's
  /// moments. kNoView before the first step, and for SGD (no state: it
  /// steps any view).
  View bound_params() const noexcept { return bound_; }
  /// Forgets the state, the step count and the binding: the optimizer is as
  /// constructed (to train other parameters with it).
  void reset() noexcept {
    const std::size_t words = state_size();
    for (std::size_t i = 0U; i < words; ++i) {
      state_[i] = T(0);
    }
    steps_ = 0U;
    bound_ = kNoView;
    bound_tape_ = nullptr;
  }
  /// For checkpoints: the state array, the scalars of it in use
  /// (state_per_parameter(kind) * max_parameters(); 0 for SGD), and the step
  /// counter.
  /// @{
  T* state() noexcept { return state_; }
  std::size_t state_size() const noexcept {
    return (state_per_parameter(options_.kind) == 0U) ? 0U : (state_per_parameter(options_.kind) * max_parameters_);
  }
  std::uint64_t* step_counter() noexcept { return &steps_; }
  /// @}

  /// One update of the parameters `params` of `tape` from their gradients.
  /// Returns kOk, or refuses, changing nothing (parameters, state, steps()),
  /// and returns why: the tape's status if it holds an error (its gradients
  /// may be those of a failed sample); kInvalidArgument if `params` is empty
  /// or not recorded on the tape, the rule needs state and has none, or it
  /// is bound to other parameters (bound_params()); kCapacityExceeded if
  /// `params` has more parameters than max_parameters().
  /// The tape's status is not changed: the returned value is the outcome.
  /// The rule is chosen at run time (options().kind), so the code of every
  /// rule is compiled in (Adam's powf and square roots included); step<K>()
  /// compiles only rule K's.
  Status step(Tape<T>& tape, View params) noexcept { return dispatch(tape, params, T(1), false); }
  /// The same on gradients to be multiplied by `grad_scale` first (1/B after
  /// a serial batch of B samples whose gradients were summed): bitwise
  /// scale_gradients(grad_scale) then step(), in one pass, the gradients
  /// left as they are (nn::serial_batch with an optimizer folds its 1/B
  /// here).
  Status step(Tape<T>& tape, View params, T grad_scale) noexcept { return dispatch(tape, params, grad_scale, true); }
  /// step() with the rule chosen at compile time: only rule K's code is
  /// compiled in (a firmware that trains with SGD links no Adam step, no
  /// powf). Refused with kInvalidArgument, changing nothing, if options().kind
  /// is not K; otherwise as step().
  template <OptimizerKind K>
  Status step(Tape<T>& tape, View params) noexcept {
    return static_step<K>(tape, params, T(1), false);
  }
  /// step(tape, params, grad_scale) with the rule chosen at compile time.
  template <OptimizerKind K>
  Status step(Tape<T>& tape, View params, T grad_scale) noexcept {
    return static_step<K>(tape, params, grad_scale, true);
  }

 private:
  /// The refusals of step(), in its order; kOk if the step may run.
  Status check(const Tape<T>& tape, View params) const noexcept {
    if (tape.status() != Status::kOk) {
      return tape.status();
    }
    if (!is_recorded(tape, params) || !ready()) {
      return Status::kInvalidArgument;
    }
    if (params.count > max_parameters_) {
      return Status::kCapacityExceeded;
    }
    const bool other = (bound_tape_ != nullptr) &&
                       ((bound_tape_ != &tape) || (bound_.first != params.first) || (bound_.count != params.count));
    return other ? Status::kInvalidArgument : Status::kOk;
  }
  /// A rule with state binds to the parameters of its first step.
  void bind(const Tape<T>& tape, View params) noexcept {
    if ((bound_tape_ == nullptr) && (state_per_parameter(options_.kind) != 0U)) {
      bound_tape_ = &tape;
      bound_ = params;
    }
  }
  /// Rule K on w[0..n) from g[0..n) (scaled: from g[i] * scale), the step
  /// counter already advanced. (`scaled` is a constant where it is inlined.)
  template <OptimizerKind K>
  void update(T* w, const T* g, std::size_t n, T scale, bool scaled) noexcept {
    const T lr = options_.lr;
    if constexpr (K == OptimizerKind::kSgd) {
      if (scaled) {
        simd::sgd_step(w, g, lr, scale, n);
      } else {
        simd::sgd_step(w, g, lr, n);
      }
    } else if constexpr (K == OptimizerKind::kMomentum) {
      if (scaled) {
        simd::momentum_step(w, state_, g, lr, options_.momentum, steps_ == 1U, scale, n);
      } else {
        simd::momentum_step(w, state_, g, lr, options_.momentum, steps_ == 1U, n);
      }
    } else {
      static_assert((K == OptimizerKind::kAdam) || (K == OptimizerKind::kAdamW), "an OptimizerKind");
      // The second moments follow the first: state_[max_parameters_ ..).
      // (max_parameters_ is capacity / 2 for these rules; the guard keeps
      // the offset in the array on every path a compiler may consider.)
      const std::size_t second = (max_parameters_ != std::numeric_limits<std::size_t>::max()) ? max_parameters_ : 0U;
      T* m = state_;
      T* v = state_ + second;
      const T b1 = options_.beta1;
      const T b2 = options_.beta2;
      const T t = static_cast<T>(steps_);
      const T correction1 = T(1) - std::pow(b1, t);
      const T correction2 = T(1) - std::pow(b2, t);
      const T step_size = lr / correction1;
      const T correction2_sqrt = std::sqrt(correction2);
      const T decay = T(1) - (lr * options_.weight_decay);
      const bool decoupled = K == OptimizerKind::kAdamW;
      const simd::AdamStep<T> p{step_size, b1, b2, correction2_sqrt, options_.eps, decay, decoupled};
      if (scaled) {
        simd::adam_step(w, m, v, g, p, scale, n);
      } else {
        simd::adam_step(w, m, v, g, p, n);
      }
    }
  }
  /// step() over the rule chosen at run time.
  Status dispatch(Tape<T>& tape, View params, T scale, bool scaled) noexcept {
    const Status refused = check(tape, params);
    if (refused != Status::kOk) {
      return refused;
    }
    bind(tape, params);
    T* const w = tape.values() + params.first;
    const T* const g = tape.grads() + params.first;
    ++steps_;
    switch (options_.kind) {
      case OptimizerKind::kSgd:
        update<OptimizerKind::kSgd>(w, g, params.count, scale, scaled);
        break;
      case OptimizerKind::kMomentum:
        update<OptimizerKind::kMomentum>(w, g, params.count, scale, scaled);
        break;
      case OptimizerKind::kAdam:
        update<OptimizerKind::kAdam>(w, g, params.count, scale, scaled);
        break;
      case OptimizerKind::kAdamW:
        update<OptimizerKind::kAdamW>(w, g, params.count, scale, scaled);
        break;
      default:
        break;
    }
    return Status::kOk;
  }
  /// step() over rule K.
  template <OptimizerKind K>
  Status static_step(Tape<T>& tape, View params, T scale, bool scaled) noexcept {
    if (options_.kind != K) {
      return Status::kInvalidArgument;
    }
    const Status refused = check(tape, params);
    if (refused != Status::kOk) {
      return refused;
    }
    bind(tape, params);
    ++steps_;
    update<K>(tape.values() + params.first, tape.grads() + params.first, params.count, scale, scaled);
    return Status::kOk;
  }

  static std::size_t max_parameters_for(OptimizerKind kind, const T* state, std::size_t capacity) noexcept {
    const std::size_t per = state_per_parameter(kind);
    if (per == 0U) {
      return std::numeric_limits<std::size_t>::max();
    }
    return (state != nullptr) ? (capacity / per) : 0U;
  }

  OptimizerOptions<T> options_;
  T* state_ = nullptr;
  std::size_t max_parameters_ = 0U;
  std::uint64_t steps_ = 0U;
  /// The parameters a rule with state is bound to (bind()).
  const Tape<T>* bound_tape_ = nullptr;
  View bound_ = kNoView;
};

}  // namespace nn
}  // namespace burtorch

#endif  // BURTORCH_NN_OPTIM_HPP
