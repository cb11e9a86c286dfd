// SPDX-License-Identifier: Apache-2.0
/// @file
/// Operators and scalar functions on Value<T> (the BurTorch paper, Tables 8
/// and 10). Each call computes its result eagerly and records one node.
/// Domain errors follow IEEE-754 (log(0) = -inf, 1/0 = inf, sqrt(-1) = NaN);
/// ask tape.all_finite() when inputs are untrusted.
#ifndef BURTORCH_OPS_HPP
#define BURTORCH_OPS_HPP

#include <cmath>
#include <cstddef>

#include "burtorch/tape.hpp"

namespace burtorch {

namespace detail {
/// Keeps a scalar argument out of template deduction, so Value<float> + 1.0
/// converts the constant instead of failing to deduce T.
template <class T>
struct Plain {
  using Type = T;
};
template <class T>
using PlainT = typename Plain<T>::Type;

/// The recorders of Tape<T> the operators use (private to the tape).
template <class T>
struct Record {
  /// op K (a binary row) on x's tape, or on y's if x is empty (so the
  /// misuse is reported whichever side it is on).
  template <Op K>
  static Value<T> binary(Value<T> x, Value<T> y) noexcept {
    Tape<T>* owner = (x.tape() != nullptr) ? x.tape() : y.tape();
    return (owner != nullptr) ? owner->template record_binary<K>(x, y) : Value<T>();
  }
  /// op K (a unary row) of x.
  template <Op K>
  static Value<T> unary(Value<T> x) noexcept {
    Tape<T>* owner = x.tape();
    return (owner != nullptr) ? owner->template record_unary<K>(x) : x;
  }
  /// op K (a unary row) of x with the constant c folded into the value.
  template <Op K>
  static Value<T> unary(Value<T> x, T c) noexcept {
    Tape<T>* owner = x.tape();
    return (owner != nullptr) ? owner->template record_unary<K>(x, c) : x;
  }
  /// op K (a row with a stored constant) of x and c.
  template <Op K>
  static Value<T> constant(Value<T> x, T c) noexcept {
    Tape<T>* owner = x.tape();
    return (owner != nullptr) ? owner->template record_constant<K>(x, c) : x;
  }
  /// The run reduction K linked on use over xs[0..n), on the tape of the
  /// first operand that has one (first_tape below); an empty handle if none.
  template <Op K>
  static Value<T> reduce(const Value<T>* xs, std::size_t n) noexcept;
  /// The run reduction K linked on use over a run of nodes of `tape`.
  template <Op K>
  static Value<T> reduce_range(Tape<T>& tape, View run) noexcept {
    return tape.template record_reduce_range<K>(run.first, run.count);
  }
};

/// The tape of the first operand that has one (nullptr if none): an empty
/// handle anywhere in a list is then reported by that tape.
template <class T>
inline Tape<T>* first_tape(const Value<T>* xs, std::size_t n) noexcept {
  Tape<T>* owner = nullptr;
  if (xs != nullptr) {
    for (std::size_t i = 0U; (i < n) && (owner == nullptr); ++i) {
      owner = xs[i].tape();
    }
  }
  return owner;
}
template <class T>
template <Op K>
inline Value<T> Record<T>::reduce(const Value<T>* xs, std::size_t n) noexcept {
  Tape<T>* owner = first_tape(xs, n);
  return (owner != nullptr) ? owner->template record_reduce<K>(xs, n) : Value<T>();
}
}  // namespace detail

// --- arithmetic between values --------------------------------------------
/// x + y (one node).
template <class T>
inline Value<T> operator+(Value<T> x, Value<T> y) noexcept {
  return detail::Record<T>::template binary<Op::kAdd>(x, y);
}
/// x - y (one node).
template <class T>
inline Value<T> operator-(Value<T> x, Value<T> y) noexcept {
  return detail::Record<T>::template binary<Op::kSub>(x, y);
}
/// x * y (one node).
template <class T>
inline Value<T> operator*(Value<T> x, Value<T> y) noexcept {
  return detail::Record<T>::template binary<Op::kMul>(x, y);
}
/// x / y (one node; IEEE: x / 0 is +-inf or NaN).
template <class T>
inline Value<T> operator/(Value<T> x, Value<T> y) noexcept {
  return detail::Record<T>::template binary<Op::kDiv>(x, y);
}
/// -x (one node).
template <class T>
inline Value<T> operator-(Value<T> x) noexcept {
  return detail::Record<T>::template unary<Op::kNeg>(x);
}

// --- arithmetic with plain scalars (no node for the constant) --------------
/// x + c: one node, the constant is folded into the value.
template <class T>
inline Value<T> operator+(Value<T> x, detail::PlainT<T> c) noexcept {
  return detail::Record<T>::template unary<Op::kAddConst>(x, static_cast<T>(c));
}
/// c + x: one node, the constant is folded into the value.
template <class T>
inline Value<T> operator+(detail::PlainT<T> c, Value<T> x) noexcept {
  return detail::Record<T>::template unary<Op::kAddConst>(x, static_cast<T>(c));
}
/// x - c: one node, the constant is folded into the value.
template <class T>
inline Value<T> operator-(Value<T> x, detail::PlainT<T> c) noexcept {
  return detail::Record<T>::template unary<Op::kAddConst>(x, -static_cast<T>(c));  // x + (-c) == x - c, bit for bit
}
/// c - x: one node, the constant is folded into the value.
template <class T>
inline Value<T> operator-(detail::PlainT<T> c, Value<T> x) noexcept {
  return detail::Record<T>::template unary<Op::kConstSub>(x, static_cast<T>(c));
}
/// x * c: one node, c kept in argument slots.
template <class T>
inline Value<T> operator*(Value<T> x, detail::PlainT<T> c) noexcept {
  return detail::Record<T>::template constant<Op::kMulConst>(x, static_cast<T>(c));
}
/// c * x: one node, c kept in argument slots.
template <class T>
inline Value<T> operator*(detail::PlainT<T> c, Value<T> x) noexcept {
  return detail::Record<T>::template constant<Op::kMulConst>(x, static_cast<T>(c));
}
/// x / c: one node, c kept in argument slots.
template <class T>
inline Value<T> operator/(Value<T> x, detail::PlainT<T> c) noexcept {
  return detail::Record<T>::template constant<Op::kDivConst>(x, static_cast<T>(c));
}
/// c / x: one node, no storage for c.
template <class T>
inline Value<T> operator/(detail::PlainT<T> c, Value<T> x) noexcept {
  return detail::Record<T>::template unary<Op::kConstDiv>(x, static_cast<T>(c));
}

template <class T>
inline Value<T>& Value<T>::operator+=(Value<T> rhs) noexcept {
  *this = *this + rhs;
  return *this;
}
template <class T>
inline Value<T>& Value<T>::operator-=(Value<T> rhs) noexcept {
  *this = *this - rhs;
  return *this;
}
template <class T>
inline Value<T>& Value<T>::operator*=(Value<T> rhs) noexcept {
  *this = *this * rhs;
  return *this;
}
template <class T>
inline Value<T>& Value<T>::operator/=(Value<T> rhs) noexcept {
  *this = *this / rhs;
  return *this;
}
template <class T>
inline Value<T>& Value<T>::operator+=(T rhs) noexcept {
  *this = *this + rhs;
  return *this;
}
template <class T>
inline Value<T>& Value<T>::operator-=(T rhs) noexcept {
  *this = *this - rhs;
  return *this;
}
template <class T>
inline Value<T>& Value<T>::operator*=(T rhs) noexcept {
  *this = *this * rhs;
  return *this;
}
template <class T>
inline Value<T>& Value<T>::operator/=(T rhs) noexcept {
  *this = *this / rhs;
  return *this;
}

// --- scalar functions (Table 8) ----------------------------------------------
/// max(x, 0), NaN passed through; relu'(0) = 0.
template <class T>
inline Value<T> relu(Value<T> x) noexcept {
  return detail::Record<T>::template unary<Op::kRelu>(x);
}
/// tanh(x).
template <class T>
inline Value<T> tanh(Value<T> x) noexcept {
  return detail::Record<T>::template unary<Op::kTanh>(x);
}
/// e to the x.
template <class T>
inline Value<T> exp(Value<T> x) noexcept {
  return detail::Record<T>::template unary<Op::kExp>(x);
}
/// Natural logarithm (log(0) = -inf, log of a negative = NaN).
template <class T>
inline Value<T> log(Value<T> x) noexcept {
  return detail::Record<T>::template unary<Op::kLog>(x);
}
/// -log(x): the loss of a probability, one node instead of two.
template <class T>
inline Value<T> neg_log(Value<T> x) noexcept {
  return detail::Record<T>::template unary<Op::kNegLog>(x);
}
/// 1 / (1 + exp(-x)).
template <class T>
inline Value<T> sigmoid(Value<T> x) noexcept {
  return detail::Record<T>::template unary<Op::kSigmoid>(x);
}
/// 1 / x.
template <class T>
inline Value<T> inv(Value<T> x) noexcept {
  return detail::Record<T>::template unary<Op::kInv>(x);
}
/// x squared.
template <class T>
inline Value<T> sqr(Value<T> x) noexcept {
  return detail::Record<T>::template unary<Op::kSqr>(x);
}
/// x cubed.
template <class T>
inline Value<T> pow3(Value<T> x) noexcept {
  return detail::Record<T>::template unary<Op::kPow3>(x);
}
/// Square root (its derivative at 0 is +inf).
template <class T>
inline Value<T> sqrt(Value<T> x) noexcept {
  return detail::Record<T>::template unary<Op::kSqrt>(x);
}
/// 1 / sqrt(x).
template <class T>
inline Value<T> inv_sqrt(Value<T> x) noexcept {
  return detail::Record<T>::template unary<Op::kInvSqrt>(x);
}
/// Leaky ReLU, as torch.nn.functional.leaky_relu: x if x > 0, else
/// negative_slope * x (NaN passed through). Its derivative is 1 for x > 0
/// and negative_slope otherwise, also at x == 0 and for NaN (PyTorch's
/// convention). One node; the slope is stored (Tape::kConstantSlots slots).
template <class T>
inline Value<T> leaky_relu(Value<T> x, detail::PlainT<T> negative_slope = detail::PlainT<T>(0.01)) noexcept {
  return detail::Record<T>::template constant<Op::kLeakyRelu>(x, static_cast<T>(negative_slope));
}
/// GELU, tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))),
/// torch.nn.functional.gelu(x, approximate='tanh'), value and derivative
/// computed as PyTorch computes them (so, like PyTorch's, the derivative is
/// NaN where x^2 overflows). One node.
template <class T>
inline Value<T> gelu_tanh(Value<T> x) noexcept {
  return detail::Record<T>::template unary<Op::kGeluTanh>(x);
}
/// SiLU (swish), x * sigmoid(x), computed as PyTorch does: x / (1 + exp(-x)).
/// One node.
template <class T>
inline Value<T> silu(Value<T> x) noexcept {
  return detail::Record<T>::template unary<Op::kSilu>(x);
}
/// |x|. Its derivative is sign(x): 0 at x == 0 and for NaN, as PyTorch's.
/// One node.
template <class T>
inline Value<T> abs(Value<T> x) noexcept {
  return detail::Record<T>::template unary<Op::kAbs>(x);
}
/// Binary cross-entropy of a logit x with target y, one element of
/// torch.nn.functional.binary_cross_entropy_with_logits (reduction='none'):
/// max(x, 0) - x y + log(1 + exp(-|x|)), never overflowing; derivative
/// sigmoid(x) - y. One node; y is stored (Tape::kConstantSlots slots).
/// nn::binary_cross_entropy_with_logits averages it over a view.
template <class T>
inline Value<T> bce_with_logits(Value<T> x, detail::PlainT<T> target) noexcept {
  return detail::Record<T>::template constant<Op::kBceWithLogits>(x, static_cast<T>(target));
}
/// The Huber function of a residual d (e.g. prediction - target), one
/// element of torch.nn.HuberLoss(delta) (reduction='none'): 0.5 d^2 where
/// |d| < delta, else delta (|d| - delta / 2). At |d| == delta the two
/// agree; the derivative is d where |d| <= delta, else +-delta. delta must
/// be > 0 (nn::huber checks it). One node; delta is stored.
template <class T>
inline Value<T> huber(Value<T> d, detail::PlainT<T> delta = detail::PlainT<T>(1)) noexcept {
  return detail::Record<T>::template constant<Op::kHuber>(d, static_cast<T>(delta));
}
/// x * c (the paper's name for it).
template <class T>
inline Value<T> mul_by_const(Value<T> x, detail::PlainT<T> c) noexcept {
  return x * c;
}
/// Two-argument helpers of Table 8.
template <class T>
inline Value<T> mean(Value<T> x, Value<T> y) noexcept {
  return detail::Record<T>::template binary<Op::kMean2>(x, y);
}
/// x^2 + y^2 (one node).
template <class T>
inline Value<T> add_squares(Value<T> x, Value<T> y) noexcept {
  return detail::Record<T>::template binary<Op::kAddSquares2>(x, y);
}
/// (x^2 + y^2) / 2 (one node).
template <class T>
inline Value<T> mean_squares(Value<T> x, Value<T> y) noexcept {
  return detail::Record<T>::template binary<Op::kMeanSquares2>(x, y);
}
/// -(x + y) / 2 (one node).
template <class T>
inline Value<T> negative_mean(Value<T> x, Value<T> y) noexcept {
  return detail::Record<T>::template binary<Op::kNegMean2>(x, y);
}

// --- varying arity (Tables 8 and 10) ------------------------------------------
/// xs[0..n) must be on one tape. If they are consecutive nodes the node stores
/// only (first, n); otherwise their indices go to n argument slots. With no
/// operand that has a tape (n == 0, xs null, all empty) there is no tape to
/// report to: the result is an empty handle, and using it in a later op
/// reports kEmptyHandle on that op's tape.
namespace detail {
template <class T>
inline Value<T> reduce(Op range_op, const Value<T>* xs, std::size_t n) noexcept {
  Tape<T>* owner = first_tape(xs, n);
  return (owner != nullptr) ? owner->reduce(range_op, xs, n) : Value<T>();
}
template <class T>
inline Value<T> dot(const Value<T>* w, const Value<T>* x, std::size_t n, const Value<T>* bias) noexcept {
  Tape<T>* owner = first_tape(w, n);
  owner = (owner != nullptr) ? owner : first_tape(x, n);
  return ((owner != nullptr) && (w != nullptr) && (x != nullptr)) ? owner->dot(w, x, n, bias) : Value<T>();
}
}  // namespace detail

/// xs[0] + ... + xs[n-1] (one node).
template <class T>
inline Value<T> reduce_sum(const Value<T>* xs, std::size_t n) noexcept {
  return detail::reduce(Op::kSumR, xs, n);
}
/// xs[0] - xs[1] - ... - xs[n-1]
template <class T>
inline Value<T> reduce_sub(const Value<T>* xs, std::size_t n) noexcept {
  return detail::reduce(Op::kSubR, xs, n);
}
/// xs[0] * ... * xs[n-1] (one node; exact zeros handled in backward).
template <class T>
inline Value<T> reduce_mul(const Value<T>* xs, std::size_t n) noexcept {
  return detail::reduce(Op::kProdR, xs, n);
}
/// The mean of xs[0..n) (one node).
template <class T>
inline Value<T> reduce_mean(const Value<T>* xs, std::size_t n) noexcept {
  return detail::reduce(Op::kMeanR, xs, n);
}
/// sum(xs[i]^2) (one node).
template <class T>
inline Value<T> reduce_sum_of_squares(const Value<T>* xs, std::size_t n) noexcept {
  return detail::reduce(Op::kSumSqR, xs, n);
}
/// mean(xs[i]^2) (one node).
template <class T>
inline Value<T> reduce_mean_squares(const Value<T>* xs, std::size_t n) noexcept {
  return detail::reduce(Op::kMeanSqR, xs, n);
}
/// -mean(xs) (one node).
template <class T>
inline Value<T> reduce_negative_mean(const Value<T>* xs, std::size_t n) noexcept {
  return detail::reduce(Op::kNegMeanR, xs, n);
}
/// Unbiased sample variance, sum((x - mean)^2) / (n - 1); NaN for n == 1.
template <class T>
inline Value<T> variance(const Value<T>* xs, std::size_t n) noexcept {
  return detail::reduce(Op::kVarR, xs, n);
}
/// Population variance, sum((x - mean)^2) / n.
template <class T>
inline Value<T> variance_biased(const Value<T>* xs, std::size_t n) noexcept {
  return detail::reduce(Op::kVarBiasedR, xs, n);
}

/// The maximum of xs[0..n) (one node), picked as PyTorch's max pooling
/// picks it: the first of equal maxima, a NaN over any number (the last
/// NaN if there are several). The gradient goes to that one operand.
/// Stored as a run if the nodes are consecutive, else as a list (n slots).
template <class T>
inline Value<T> reduce_max(const Value<T>* xs, std::size_t n) noexcept {
  return detail::Record<T>::template reduce<Op::kMaxR>(xs, n);
}
/// reduce_max() of the run of consecutive nodes `run` of `tape` (a pooling
/// window of a view, read in place: no handles, no slots).
/// kInvalidArgument if run.count == 0, kInvalidHandle if a node of the run
/// is not recorded.
template <class T>
inline Value<T> reduce_max(Tape<T>& tape, View run) noexcept {
  return detail::Record<T>::template reduce_range<Op::kMaxR>(tape, run);
}

/// The two results of reduce_mean_and_mean_squares.
template <class T>
struct MeanAndMeanSquares {
  Value<T> mean;          ///< mean(xs)
  Value<T> mean_squares;  ///< mean(xs^2)
};
/// mean(xs) and mean(xs^2), two nodes (the paper's Table 10).
template <class T>
inline MeanAndMeanSquares<T> reduce_mean_and_mean_squares(const Value<T>* xs, std::size_t n) noexcept {
  MeanAndMeanSquares<T> out;
  out.mean = reduce_mean(xs, n);
  out.mean_squares = reduce_mean_squares(xs, n);
  return out;
}

/// sum(w[i] * x[i]); each side is stored as a range when its nodes are
/// consecutive (parameters usually are), else as a list of slots.
template <class T>
inline Value<T> inner_product(const Value<T>* w, const Value<T>* x, std::size_t n) noexcept {
  return detail::dot(w, x, n, static_cast<const Value<T>*>(nullptr));
}
/// sum(w[i] * x[i]) + bias (one node).
template <class T>
inline Value<T> inner_product_with_bias(const Value<T>* w, const Value<T>* x, std::size_t n,
                                        Value<T> bias) noexcept {
  return detail::dot(w, x, n, &bias);
}

/// sum(w[i] * x[i]) where w is the range of x.total nodes starting at `w` and
/// x is a view list (Tape::segments): e.g. 16 embedding rows read in place.
template <class T>
inline Value<T> inner_product_views(Value<T> w, ViewList x) noexcept {
  return (w.tape() != nullptr) ? w.tape()->dot_views(w.index(), x, nullptr) : w;
}
/// inner_product_views(w, x) + bias (one node).
template <class T>
inline Value<T> inner_product_views_with_bias(Value<T> w, ViewList x, Value<T> bias) noexcept {
  return (w.tape() != nullptr) ? w.tape()->dot_views(w.index(), x, &bias) : w;
}

/// log(sum(exp(xs[i]))), max-shifted (never overflows); its gradient is the
/// softmax of xs. Cross-entropy of logits z with target y: log_sum_exp(z) - z[y].
template <class T>
inline Value<T> log_sum_exp(const Value<T>* xs, std::size_t n) noexcept {
  return detail::reduce(Op::kLogSumExpR, xs, n);
}

}  // namespace burtorch

#endif  // BURTORCH_OPS_HPP
