// SPDX-License-Identifier: Apache-2.0
/// @file
/// Functions beyond the paper, with PyTorch 1.13's semantics: GELU (tanh),
/// SiLU, |x|, leaky ReLU, the elements of binary cross-entropy with logits
/// and of the Huber loss, and the maximum (max pooling). Two op families
/// (ext/extension.hpp), so that a program carries the code of the family it
/// records and no other: the piecewise ones (|x|, leaky ReLU, Huber, max:
/// selects and arithmetic, no libm) and the smooth ones (GELU, SiLU, BCE:
/// tanh, exp, log1p).
#ifndef BURTORCH_EXT_FUNCTIONS_HPP
#define BURTORCH_EXT_FUNCTIONS_HPP

#include <cmath>
#include <cstddef>

#include "burtorch/ext/extension.hpp"
#include "burtorch/index.hpp"
#include "burtorch/core/ops.hpp"
#include "burtorch/scalar.hpp"
#include "burtorch/core/tape.hpp"

namespace burtorch {

// clang-format off
namespace detail {
/// The maximum's backward on a lane type: in each lane, g goes to the
/// operand the forward scan picked there, i.e. the first operand equal to
/// the lane's maximum or, where the maximum is NaN, the last NaN; the
/// other operands' lanes keep their bits.
template <class T, class At>
void max_backward_lanes(const T* v, T* gr, At at, Index n, T g, T out) noexcept {
  using S = ScalarOps<T>;
  T waiting = S::select_nan(out, T(0), T(1));  // 1 in the lanes still looking for their maximum
  for (Index i = 0U; i < n; ++i) {
    const T hit = S::select_equal(v[at[i]], out, waiting, T(0));
    gr[at[i]] = S::select_greater(hit, T(0.5), gr[at[i]] + g, gr[at[i]]);
    waiting = waiting - hit;
  }
  waiting = S::select_nan(out, T(1), T(0));  // the lanes whose maximum is NaN, from the last operand
  for (Index i = n; i-- > 0U;) {
    const T hit = S::select_nan(v[at[i]], waiting, T(0));
    gr[at[i]] = S::select_greater(hit, T(0.5), gr[at[i]] + g, gr[at[i]]);
    waiting = waiting - hit;
  }
}
}  // namespace detail
// clang-format on

/// The rows of the op families of the library's extensions (each a struct
/// with the members of a core row, core/op.hpp).
namespace rows {
/// @cond OP_ROWS
// clang-format off
struct GeluTanh {  // GELU, tanh approximation: 0.5 x (1 + tanh(b (x + k x^3)))
  static constexpr OpKind kKind = OpKind::kUnary;
  static constexpr const char* kName = "gelu_tanh";
  // b = sqrt(2 / pi), k = 0.044715; forward and backward as PyTorch's
  // gelu(approximate='tanh') computes them (the derivative from x, not out).
  template <class T> static T beta() noexcept { return T(0.7978845608028654); }
  template <class T> static T kappa() noexcept { return T(0.044715); }
  template <class T> static T forward(T x) noexcept {
    const T inner = beta<T>() * (x + (kappa<T>() * ((x * x) * x)));
    return (T(0.5) * x) * (T(1) + ScalarOps<T>::tanh(inner));
  }
  template <class T> static void backward(T g, T x, T /*out*/, T& dx) noexcept {
    const T x_sq = x * x;
    const T t = ScalarOps<T>::tanh(beta<T>() * (x + (kappa<T>() * (x_sq * x))));
    const T left = T(0.5) * x;
    const T inner_derivative = beta<T>() * (T(1) + ((T(3) * kappa<T>()) * x_sq));
    dx += g * ((T(0.5) * (T(1) + t)) + ((left * (T(1) - (t * t))) * inner_derivative));
  }
};
struct Silu {  // x * sigmoid(x), computed as x / (1 + exp(-x))
  static constexpr OpKind kKind = OpKind::kUnary;
  static constexpr const char* kName = "silu";
  template <class T> static T forward(T x) noexcept { return x / (T(1) + ScalarOps<T>::exp(-x)); }
  template <class T> static void backward(T g, T x, T /*out*/, T& dx) noexcept {
    const T s = T(1) / (T(1) + ScalarOps<T>::exp(-x));
    dx += (g * s) * (T(1) + (x * (T(1) - s)));
  }
};
struct BceWithLogits {  // binary cross-entropy of a logit x, target c
  static constexpr OpKind kKind = OpKind::kConstant;
  static constexpr const char* kName = "bce_with_logits";
  // max(x, 0) - c x + log(1 + exp(-|x|)), arranged as PyTorch arranges it,
  // (1 - c) x + max(-x, 0) + ..., so that infinite logits give what
  // PyTorch gives; log1p keeps the tail PyTorch's log(1 + ...) rounds away
  // for |x| > 37. Derivative sigmoid(x) - c.
  template <class T> static T forward(T x, T c) noexcept {
    return (((T(1) - c) * x) + ScalarOps<T>::relu(-x)) + ScalarOps<T>::log1p(ScalarOps<T>::exp(-ScalarOps<T>::abs(x)));
  }
  template <class T> static void backward(T g, T x, T c, T /*out*/, T& dx) noexcept {
    dx += g * ((T(1) / (T(1) + ScalarOps<T>::exp(-x))) - c);
  }
};
struct Abs {  // |x|; derivative sign(x): 0 at x == 0 and for NaN, as PyTorch's
  static constexpr OpKind kKind = OpKind::kUnary;
  static constexpr const char* kName = "abs";
  template <class T> static T forward(T x) noexcept { return ScalarOps<T>::abs(x); }
  template <class T> static void backward(T g, T x, T /*out*/, T& dx) noexcept {
    const T sign = ScalarOps<T>::select_greater(x, T(0), T(1), ScalarOps<T>::select_greater(T(0), x, T(-1), T(0)));
    dx += g * sign;
  }
};
struct LeakyRelu {  // x if x > 0, else c x (c: the negative slope)
  static constexpr OpKind kKind = OpKind::kConstant;
  static constexpr const char* kName = "leaky_relu";
  // NaN passes through (c NaN = NaN); the derivative is c at x == 0 and for
  // NaN, as PyTorch's leaky_relu.
  template <class T> static T forward(T x, T c) noexcept { return ScalarOps<T>::select_greater(x, T(0), x, x * c); }
  template <class T> static void backward(T g, T x, T c, T /*out*/, T& dx) noexcept {
    dx += ScalarOps<T>::select_greater(x, T(0), g, g * c);
  }
};
struct Huber {  // Huber function of a residual d, c = delta > 0
  static constexpr OpKind kKind = OpKind::kConstant;
  static constexpr const char* kName = "huber";
  // 0.5 d^2 if |d| < c, else c (|d| - 0.5 c): at |d| == c the linear branch,
  // as torch.nn.HuberLoss (equal values there). Derivative d for |d| <= c,
  // +-c beyond (both give +-c at |d| == c); NaN gives NaN.
  template <class T> static T forward(T d, T c) noexcept {
    const T z = ScalarOps<T>::abs(d);
    return ScalarOps<T>::select_greater(c, z, (T(0.5) * z) * z, c * (z - (T(0.5) * c)));
  }
  template <class T> static void backward(T g, T d, T c, T /*out*/, T& dx) noexcept {
    dx += ScalarOps<T>::select_greater(d, c, g * c, ScalarOps<T>::select_greater(-c, d, -(g * c), d * g));
  }
};
/// The maximum, as max pooling in PyTorch picks it (torch.nn.functional.
/// max_pool1d/max_pool2d on the CPU): operands are scanned in order and
/// one replaces the current maximum if it is greater or NaN. So among
/// equal maxima the first wins (-0 and +0 are equal), a NaN wins over any
/// number and the last NaN wins, and all -inf gives the first. The
/// backward sends the whole gradient to that one operand.
struct MaxR {
  static constexpr OpKind kKind = OpKind::kViewReduce;
  static constexpr Empty kEmpty = Empty::kMinusInf;  // the maximum of nothing (PyTorch raises)
  static constexpr const char* kName = "max";
  template <class T> static T step(T m, T x) noexcept {
    return ScalarOps<T>::select_nan(x, x, ScalarOps<T>::select_greater(x, m, x, m));
  }
  template <class T, class At> static T forward(const T* v, At at, Index n) noexcept {
    T m = v[at[0U]];
    for (Index i = 1U; i < n; ++i) { m = step(m, v[at[i]]); }
    return m;
  }
  template <class T, class At> static void backward(const T* v, T* gr, At at, Index n, T g, T out) noexcept {
    if constexpr (ScalarOps<T>::kSingleLane) {
      // The forward scan again, keeping the position of the maximum.
      T m = v[at[0U]];
      Index k = 0U;
      for (Index i = 1U; i < n; ++i) {
        const T x = v[at[i]];
        if ((x > m) || std::isnan(x)) {
          m = x;
          k = i;
        }
      }
      gr[at[k]] += g;
    } else {
      detail::max_backward_lanes(v, gr, at, n, g, out);
    }
  }
};
/// reduce_max over a list of indices: MaxR's row read through a list.
struct MaxL {
  static constexpr OpKind kKind = OpKind::kListReduce;
  static constexpr Empty kEmpty = MaxR::kEmpty;
  static constexpr const char* kName = MaxR::kName;
  template <class T, class At> static T forward(const T* v, At at, Index n) noexcept { return MaxR::forward(v, at, n); }
  template <class T, class At> static void backward(const T* v, T* gr, At at, Index n, T g, T out) noexcept {
    MaxR::backward(v, gr, at, n, g, out);
  }
};
// clang-format on
/// @endcond
}  // namespace rows

/// The piecewise functions' family: |x|, leaky ReLU, Huber, the maximum.
using PiecewiseOps = OpFamily<family::kPiecewise, rows::Abs, rows::LeakyRelu, rows::Huber, rows::MaxR, rows::MaxL>;
/// The smooth functions' family: GELU (tanh), SiLU, BCE with logits.
using SmoothOps = OpFamily<family::kSmooth, rows::GeluTanh, rows::Silu, rows::BceWithLogits>;

/// Leaky ReLU, as torch.nn.functional.leaky_relu: x if x > 0, else
/// negative_slope * x (NaN passed through). Its derivative is 1 for x > 0
/// and negative_slope otherwise, also at x == 0 and for NaN (PyTorch's
/// convention). One node; the slope is stored (Recorder::kConstantSlots
/// slots).
template <class T>
inline Value<T> leaky_relu(Value<T> x, detail::PlainT<T> negative_slope = detail::PlainT<T>(0.01)) noexcept {
  return PiecewiseOps::constant<rows::LeakyRelu>(x, static_cast<T>(negative_slope));
}
/// GELU, tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))),
/// torch.nn.functional.gelu(x, approximate='tanh'), value and derivative
/// computed as PyTorch computes them (so, like PyTorch's, the derivative is
/// NaN where x^2 overflows). One node.
template <class T>
inline Value<T> gelu_tanh(Value<T> x) noexcept {
  return SmoothOps::unary<rows::GeluTanh>(x);
}
/// SiLU (swish), x * sigmoid(x), computed as PyTorch does: x / (1 + exp(-x)).
/// One node.
template <class T>
inline Value<T> silu(Value<T> x) noexcept {
  return SmoothOps::unary<rows::Silu>(x);
}
/// |x|. Its derivative is sign(x): 0 at x == 0 and for NaN, as PyTorch's.
/// One node.
template <class T>
inline Value<T> abs(Value<T> x) noexcept {
  return PiecewiseOps::unary<rows::Abs>(x);
}
/// Binary cross-entropy of a logit x with target y, one element of
/// torch.nn.functional.binary_cross_entropy_with_logits (reduction='none'):
/// max(x, 0) - x y + log(1 + exp(-|x|)), never overflowing; derivative
/// sigmoid(x) - y. One node; y is stored (Recorder::kConstantSlots slots).
/// nn::binary_cross_entropy_with_logits averages it over a view.
template <class T>
inline Value<T> bce_with_logits(Value<T> x, detail::PlainT<T> target) noexcept {
  return SmoothOps::constant<rows::BceWithLogits>(x, static_cast<T>(target));
}
/// The Huber function of a residual d (e.g. prediction - target), one
/// element of torch.nn.HuberLoss(delta) (reduction='none'): 0.5 d^2 where
/// |d| < delta, else delta (|d| - delta / 2). At |d| == delta the two
/// agree; the derivative is d where |d| <= delta, else +-delta. delta must
/// be > 0 (nn::huber checks it). One node; delta is stored.
template <class T>
inline Value<T> huber(Value<T> d, detail::PlainT<T> delta = detail::PlainT<T>(1)) noexcept {
  return PiecewiseOps::constant<rows::Huber>(d, static_cast<T>(delta));
}
/// The maximum of xs[0..n) (one node), picked as PyTorch's max pooling
/// picks it: the first of equal maxima, a NaN over any number (the last
/// NaN if there are several). The gradient goes to that one operand.
/// Stored as a view if the nodes are consecutive, else as a list (n slots).
template <class T>
inline Value<T> reduce_max(const Value<T>* xs, std::size_t n) noexcept {
  return PiecewiseOps::reduce<rows::MaxR, rows::MaxL>(xs, n);
}
/// The same on `tape`: over no operands, -inf (the maximum of nothing;
/// PyTorch raises), with no error.
template <class T>
inline Value<T> reduce_max(Tape<T>& tape, const detail::PlainT<Value<T>>* xs, std::size_t n) noexcept {
  return PiecewiseOps::reduce<rows::MaxR, rows::MaxL>(tape, xs, n);
}
/// reduce_max() of the view x of `tape` (a pooling window, read in place:
/// no handles, no slots). kInvalidArgument if x is empty, kInvalidHandle
/// if a node of x is not recorded.
template <class T>
inline Value<T> reduce_max(Tape<T>& tape, View x) noexcept {
  return PiecewiseOps::reduce<rows::MaxR>(tape, x);
}

}  // namespace burtorch

#endif  // BURTORCH_EXT_FUNCTIONS_HPP
