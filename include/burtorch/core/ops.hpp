// SPDX-License-Identifier: Apache-2.0
/// @file
/// Operators and scalar functions on Value<T> (the BurTorch paper, Tables 8
/// and 10). Each call computes its result eagerly and records one node.
/// Functions beyond the paper (GELU, SiLU, |x|, leaky ReLU, the losses'
/// elements, reduce_max) are op families of ext/functions.hpp.
/// Domain errors follow IEEE-754 (log(0) = -inf, 1/0 = inf, sqrt(-1) = NaN);
/// ask all_finite(tape) (tools/inspect.hpp) when inputs are untrusted.
#ifndef BURTORCH_CORE_OPS_HPP
#define BURTORCH_CORE_OPS_HPP

#include <cmath>
#include <cstddef>

#include "burtorch/core/record.hpp"
#include "burtorch/core/tape.hpp"
#include "burtorch/core/views.hpp"

namespace burtorch {

namespace detail {
/// The core rows' recorders (Recorder<T>) on the tape of the operands.
template <class T>
struct Record {
  /// op K (a binary row) on x's tape, or on y's if x is empty (so the
  /// misuse is reported whichever side it is on).
  template <Op K>
  static Value<T> binary(Value<T> x, Value<T> y) noexcept {
    Tape<T>* const on = (x.tape() != nullptr) ? x.tape() : y.tape();
    return (on != nullptr) ? Recorder<T>::template binary<K>(*on, x, y) : Value<T>();
  }
  /// op K (a unary row) of x.
  template <Op K>
  static Value<T> unary(Value<T> x) noexcept {
    Tape<T>* const on = x.tape();
    return (on != nullptr) ? Recorder<T>::template unary<K>(*on, x) : x;
  }
  /// op K (a unary row) of x with the constant c folded into the value.
  template <Op K>
  static Value<T> unary(Value<T> x, T c) noexcept {
    Tape<T>* const on = x.tape();
    return (on != nullptr) ? Recorder<T>::template unary<K>(*on, x, c) : x;
  }
  /// op K (a row with a stored constant) of x and c.
  template <Op K>
  static Value<T> constant(Value<T> x, T c) noexcept {
    Tape<T>* const on = x.tape();
    return (on != nullptr) ? Recorder<T>::template constant<K>(*on, x, c) : x;
  }
};
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
/// reports kEmptyHandle on that op's tape. Each reduction also takes the
/// tape first (reduce_sum(tape, xs, n)): over no operands it then records
/// the value PyTorch gives for nothing (sum 0, product 1, mean and variance
/// NaN, log-sum-exp -inf), with no error.
namespace detail {
template <Op K, class T>
inline Value<T> reduce(const Value<T>* xs, std::size_t n) noexcept {
  Tape<T>* const on = first_tape(xs, n);
  return (on != nullptr) ? burtorch::reduce<K>(*on, xs, n) : Value<T>();
}
template <class T>
inline Value<T> dot(const Value<T>* w, const Value<T>* x, std::size_t n, const Value<T>* bias) noexcept {
  Tape<T>* on = first_tape(w, n);
  on = (on != nullptr) ? on : first_tape(x, n);
  return ((on != nullptr) && (w != nullptr) && (x != nullptr)) ? burtorch::inner_product(*on, w, x, n, bias)
                                                                : Value<T>();
}
}  // namespace detail

/// xs[0] + ... + xs[n-1] (one node).
template <class T>
inline Value<T> reduce_sum(const Value<T>* xs, std::size_t n) noexcept {
  return detail::reduce<Op::kSumR>(xs, n);
}
/// xs[0] - xs[1] - ... - xs[n-1]
template <class T>
inline Value<T> reduce_sub(const Value<T>* xs, std::size_t n) noexcept {
  return detail::reduce<Op::kSubR>(xs, n);
}
/// xs[0] * ... * xs[n-1] (one node; exact zeros handled in backward).
template <class T>
inline Value<T> reduce_mul(const Value<T>* xs, std::size_t n) noexcept {
  return detail::reduce<Op::kProdR>(xs, n);
}
/// The mean of xs[0..n) (one node).
template <class T>
inline Value<T> reduce_mean(const Value<T>* xs, std::size_t n) noexcept {
  return detail::reduce<Op::kMeanR>(xs, n);
}
/// sum(xs[i]^2) (one node).
template <class T>
inline Value<T> reduce_sum_of_squares(const Value<T>* xs, std::size_t n) noexcept {
  return detail::reduce<Op::kSumSqR>(xs, n);
}
/// mean(xs[i]^2) (one node).
template <class T>
inline Value<T> reduce_mean_squares(const Value<T>* xs, std::size_t n) noexcept {
  return detail::reduce<Op::kMeanSqR>(xs, n);
}
/// -mean(xs) (one node).
template <class T>
inline Value<T> reduce_negative_mean(const Value<T>* xs, std::size_t n) noexcept {
  return detail::reduce<Op::kNegMeanR>(xs, n);
}
/// Unbiased sample variance, sum((x - mean)^2) / (n - 1); NaN for n == 1.
template <class T>
inline Value<T> variance(const Value<T>* xs, std::size_t n) noexcept {
  return detail::reduce<Op::kVarR>(xs, n);
}
/// Population variance, sum((x - mean)^2) / n.
template <class T>
inline Value<T> variance_biased(const Value<T>* xs, std::size_t n) noexcept {
  return detail::reduce<Op::kVarBiasedR>(xs, n);
}


// --- the same reductions on a given tape: defined over no operands too ------
/// xs[0] + ... + xs[n-1]; 0 over no operands (on tape).
template <class T>
inline Value<T> reduce_sum(Tape<T>& tape, const detail::PlainT<Value<T>>* xs, std::size_t n) noexcept {
  return reduce<Op::kSumR>(tape, xs, n);
}
/// xs[0] - xs[1] - ... - xs[n-1]; 0 over no operands (on tape).
template <class T>
inline Value<T> reduce_sub(Tape<T>& tape, const detail::PlainT<Value<T>>* xs, std::size_t n) noexcept {
  return reduce<Op::kSubR>(tape, xs, n);
}
/// xs[0] * ... * xs[n-1]; 1 over no operands (on tape).
template <class T>
inline Value<T> reduce_mul(Tape<T>& tape, const detail::PlainT<Value<T>>* xs, std::size_t n) noexcept {
  return reduce<Op::kProdR>(tape, xs, n);
}
/// the mean of xs[0..n); NaN over no operands (on tape).
template <class T>
inline Value<T> reduce_mean(Tape<T>& tape, const detail::PlainT<Value<T>>* xs, std::size_t n) noexcept {
  return reduce<Op::kMeanR>(tape, xs, n);
}
/// sum(xs[i]^2); 0 over no operands (on tape).
template <class T>
inline Value<T> reduce_sum_of_squares(Tape<T>& tape, const detail::PlainT<Value<T>>* xs, std::size_t n) noexcept {
  return reduce<Op::kSumSqR>(tape, xs, n);
}
/// mean(xs[i]^2); NaN over no operands (on tape).
template <class T>
inline Value<T> reduce_mean_squares(Tape<T>& tape, const detail::PlainT<Value<T>>* xs, std::size_t n) noexcept {
  return reduce<Op::kMeanSqR>(tape, xs, n);
}
/// -mean(xs); NaN over no operands (on tape).
template <class T>
inline Value<T> reduce_negative_mean(Tape<T>& tape, const detail::PlainT<Value<T>>* xs, std::size_t n) noexcept {
  return reduce<Op::kNegMeanR>(tape, xs, n);
}
/// the unbiased variance; NaN over fewer than two operands (on tape).
template <class T>
inline Value<T> variance(Tape<T>& tape, const detail::PlainT<Value<T>>* xs, std::size_t n) noexcept {
  return reduce<Op::kVarR>(tape, xs, n);
}
/// the population variance; NaN over no operands (on tape).
template <class T>
inline Value<T> variance_biased(Tape<T>& tape, const detail::PlainT<Value<T>>* xs, std::size_t n) noexcept {
  return reduce<Op::kVarBiasedR>(tape, xs, n);
}
/// log(sum(exp(xs[i]))), max-shifted; -inf over no operands (on tape).
template <class T>
inline Value<T> log_sum_exp(Tape<T>& tape, const detail::PlainT<Value<T>>* xs, std::size_t n) noexcept {
  return reduce<Op::kLogSumExpR>(tape, xs, n);
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

/// sum(w[i] * x[i]) where w is the view of x.total nodes from `w` and x a
/// view list (core/views.hpp): e.g. 16 embedding rows read in place.
template <class T>
inline Value<T> inner_product_views(Value<T> w, ViewList x) noexcept {
  return (w.tape() != nullptr) ? inner_product(*w.tape(), w.index(), x) : w;
}
/// inner_product_views(w, x) + bias (one node).
template <class T>
inline Value<T> inner_product_views_with_bias(Value<T> w, ViewList x, Value<T> bias) noexcept {
  return (w.tape() != nullptr) ? inner_product(*w.tape(), w.index(), x, &bias) : w;
}

/// log(sum(exp(xs[i]))), max-shifted (never overflows); its gradient is the
/// softmax of xs. Cross-entropy of logits z with target y: log_sum_exp(z) - z[y].
template <class T>
inline Value<T> log_sum_exp(const Value<T>* xs, std::size_t n) noexcept {
  return detail::reduce<Op::kLogSumExpR>(xs, n);
}

}  // namespace burtorch

#endif  // BURTORCH_CORE_OPS_HPP
