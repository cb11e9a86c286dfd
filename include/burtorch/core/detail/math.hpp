// SPDX-License-Identifier: Apache-2.0
/// @file
/// Internal: the loops behind the wide ops (include/burtorch/core/op.hpp): sums,
/// products, log-sum-exp and inner products over operands that are a run of
/// consecutive nodes or a list of node indices, and the bridge from inner
/// products of runs to the vector kernels of burtorch/simd.hpp. Every loop
/// has a fixed order, so a result has the same bits on every target.
#ifndef BURTORCH_CORE_DETAIL_MATH_HPP
#define BURTORCH_CORE_DETAIL_MATH_HPP

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "burtorch/config.hpp"
#include "burtorch/index.hpp"
#include "burtorch/scalar.hpp"
#include "burtorch/core/simd.hpp"

namespace burtorch {
namespace detail {

/// Operand i of a wide op: a run of consecutive nodes from `first` ...
struct ViewOperand {
  Index first;  ///< the run's first node
  Index operator[](Index i) const noexcept { return first + i; }
};
/// ... or a list of node indices stored in argument slots.
struct ListOperand {
  const Index* slots;  ///< the list's first slot
  Index operator[](Index i) const noexcept { return slots[i]; }
};
#if defined(__OPTIMIZE_SIZE__)
/// At -Os a run and a list are one operand type, so that the loop of every
/// reduction (and of inner products over lists) is compiled once for both:
/// a test per operand instead of a second copy of each loop (flash). The
/// operands, their order and the arithmetic are the same, so the results.
struct AnyOperand {
  const Index* slots;  ///< the list's first slot, or null for a run
  Index first;         ///< the run's first node
  BURTORCH_ALWAYS_INLINE Index operator[](Index i) const noexcept { return (slots != nullptr) ? slots[i] : (first + i); }
};
/// The operand of a run of nodes from `first`.
inline AnyOperand view_operand(Index first) noexcept { return AnyOperand{nullptr, first}; }
/// The operand of a list of nodes in slots from `slots`.
inline AnyOperand list_operand(const Index* slots) noexcept { return AnyOperand{slots, 0U}; }
#else
/// The operand of a run of nodes from `first`.
inline ViewOperand view_operand(Index first) noexcept { return ViewOperand{first}; }
/// The operand of a list of nodes in slots from `slots`.
inline ListOperand list_operand(const Index* slots) noexcept { return ListOperand{slots}; }
#endif

/// Sum of v[at[i]] with four accumulators: independent add chains keep the
/// FPU pipeline full, and the fixed order gives the same bits on every target.
template <class T, class Operand>
T sum_of(const T* v, Operand at, Index n) noexcept {
  T s0 = T(0);
  T s1 = T(0);
  T s2 = T(0);
  T s3 = T(0);
  // Blocks of four up to n rounded down, then at most three more (a bound
  // the compiler sees: no wrapping i + 4U).
  const Index blocks = n & ~static_cast<Index>(3U);
  Index i = 0U;
  for (; i < blocks; i += 4U) {
    s0 += v[at[i]];
    s1 += v[at[i + 1U]];
    s2 += v[at[i + 2U]];
    s3 += v[at[i + 3U]];
  }
  for (; i < n; ++i) {
    s0 += v[at[i]];
  }
  return (s0 + s1) + (s2 + s3);
}

/// Sum of v[at[i]]^2, in sum_of's order.
template <class T, class Operand>
T sum_of_squares(const T* v, Operand at, Index n) noexcept {
  T s0 = T(0);
  T s1 = T(0);
  T s2 = T(0);
  T s3 = T(0);
  // Blocks of four up to n rounded down, then at most three more (a bound
  // the compiler sees: no wrapping i + 4U).
  const Index blocks = n & ~static_cast<Index>(3U);
  Index i = 0U;
  for (; i < blocks; i += 4U) {
    const T a = v[at[i]];
    const T b = v[at[i + 1U]];
    const T c = v[at[i + 2U]];
    const T d = v[at[i + 3U]];
    s0 += a * a;
    s1 += b * b;
    s2 += c * c;
    s3 += d * d;
  }
  for (; i < n; ++i) {
    const T a = v[at[i]];
    s0 += a * a;
  }
  return (s0 + s1) + (s2 + s3);
}

/// Sum of v[w[i]] * v[x[i]], in sum_of's order.
template <class T, class WOperand, class XOperand>
T dot_of(const T* v, WOperand w, XOperand x, Index n) noexcept {
  T s0 = T(0);
  T s1 = T(0);
  T s2 = T(0);
  T s3 = T(0);
  // Blocks of four up to n rounded down, then at most three more (a bound
  // the compiler sees: no wrapping i + 4U).
  const Index blocks = n & ~static_cast<Index>(3U);
  Index i = 0U;
  for (; i < blocks; i += 4U) {
    s0 += v[w[i]] * v[x[i]];
    s1 += v[w[i + 1U]] * v[x[i + 1U]];
    s2 += v[w[i + 2U]] * v[x[i + 2U]];
    s3 += v[w[i + 3U]] * v[x[i + 3U]];
  }
  for (; i < n; ++i) {
    s0 += v[w[i]] * v[x[i]];
  }
  return (s0 + s1) + (s2 + s3);
}

/// Sum of (x - m)^2, the second pass of a two-pass variance.
template <class T, class Operand>
T centered_squares(const T* v, Operand at, Index n, T m) noexcept {
  T s = T(0);
  for (Index i = 0U; i < n; ++i) {
    const T d = v[at[i]] - m;
    s += d * d;
  }
  return s;
}

/// The product of v[at[i]], in index order.
template <class T, class Operand>
T product_of(const T* v, Operand at, Index n) noexcept {
  T p = T(1);
  for (Index i = 0U; i < n; ++i) {
    p *= v[at[i]];
  }
  return p;
}

/// d(x_0 * ... * x_(n-1))/dx_i = product of the others, times g, into grads.
template <class T, class Operand>
void product_backward(const T* v, T* grads, Operand at, Index n, T g) noexcept {
  if constexpr (ScalarOps<T>::kSingleLane) {
    // Without scratch memory: count zeros; with none, divide the product;
    // with one, only that operand gets the product of the rest; with two
    // or more, every term is zero.
    Index zeros = 0U;
    Index zero_at = 0U;
    T rest = T(1);
    for (Index i = 0U; i < n; ++i) {
      const T x = v[at[i]];
      if (x == T(0)) {  // BT-DEV-004: exact zero test, not a tolerance
        ++zeros;
        zero_at = i;
      } else {
        rest *= x;
      }
    }
    if (zeros == 0U) {
      for (Index i = 0U; i < n; ++i) {
        grads[at[i]] += g * (rest / v[at[i]]);
      }
    } else if (zeros == 1U) {
      grads[at[zero_at]] += g * rest;
    } else {
      // Every partial derivative has a zero factor.
    }
  } else {
    // Lanes may have zeros in different places: multiply the others out
    // (O(n^2), no scratch memory, no test).
    for (Index i = 0U; i < n; ++i) {
      T others = T(1);
      for (Index j = 0U; j < n; ++j) {
        others = (j == i) ? others : (others * v[at[j]]);
      }
      grads[at[i]] += g * others;
    }
  }
}

/// log(sum(exp(x_i))) = m + log(sum(exp(x_i - m))), m = max x_i. An infinite
/// maximum is not subtracted (inf - inf would be NaN): the sum is then
/// exp(+inf) = inf or exp(-inf) + ... = 0, so the result is +inf when any x_i
/// is +inf and -inf when all are -inf; NaN in any x_i gives NaN.
template <class T, class Operand>
T log_sum_exp_of(const T* v, Operand at, Index n) noexcept {
  T m = v[at[0U]];
  for (Index i = 1U; i < n; ++i) {
    m = ScalarOps<T>::max(m, v[at[i]]);
  }
  m = ScalarOps<T>::finite_or_zero(m);
  T s = T(0);
  for (Index i = 0U; i < n; ++i) {
    s += ScalarOps<T>::exp(v[at[i]] - m);
  }
  return m + ScalarOps<T>::log(s);
}

/// grads[w[i]] += g * v[x[i]], then grads[x[i]] += g * v[w[i]].
template <class T, class WOperand, class XOperand>
void dot_backward(const T* v, T* grads, WOperand w, XOperand x, Index n, T g) noexcept {
  for (Index i = 0U; i < n; ++i) {
    grads[w[i]] += g * v[x[i]];
  }
  for (Index i = 0U; i < n; ++i) {
    grads[x[i]] += g * v[w[i]];
  }
}

// Inner products of two runs of consecutive nodes and their backward (two
// axpy updates) go to the vector kernels of burtorch/core/simd.hpp for float and
// double; other scalar types use the generic loops above.

/// The inner product of the runs of n nodes from w and from x.
template <class T>
inline T view_dot(const T* v, Index w, Index x, Index n) noexcept {
  return dot_of(v, view_operand(w), view_operand(x), n);
}
/// Up to this many terms an inner product is computed inline (layer norm's
/// one-term products, attention heads of width 4).
constexpr Index kShortDot = 4U;
/// Up to kShortDot terms, in the kernels' order: partial i holds term i,
/// combined by halving. Below P terms every kernel rounds each product
/// once, fused or not, so this is bitwise what the kernel would return.
template <class T>
inline T short_dot(const T* a, const T* b, Index n) noexcept {
  T s = a[0] * b[0];
  if (n == 2U) {
    s += a[1] * b[1];
  } else if (n == 3U) {
    s = (s + (a[2] * b[2])) + (a[1] * b[1]);
  } else if (n == 4U) {
    s = (s + (a[2] * b[2])) + ((a[1] * b[1]) + (a[3] * b[3]));
  } else {
    // one term
  }
  return s;
}
/// @copydoc view_dot
inline float view_dot(const float* v, Index w, Index x, Index n) noexcept {
  return (n <= kShortDot) ? short_dot(&v[w], &v[x], n) : simd::dot(&v[w], &v[x], n);
}
/// @copydoc view_dot
inline double view_dot(const double* v, Index w, Index x, Index n) noexcept {
  return (n <= kShortDot) ? short_dot(&v[w], &v[x], n) : simd::dot(&v[w], &v[x], n);
}

/// The backward of view_dot: each run's gradients get g times the other run.
template <class T>
inline void view_dot_backward(const T* v, T* grads, Index w, Index x, Index n, T g) noexcept {
  dot_backward(v, grads, view_operand(w), view_operand(x), n, g);
}
/// y[i] += g * x[i], rounded as simd::axpy rounds: fused where the
/// selected kernels of T fuse (BURTORCH_SIMD_FUSED_FLOAT, _DOUBLE).
template <bool kFused, class T>
inline void short_axpy(T* y, T g, const T* x, Index n) noexcept {
  for (Index i = 0U; i < n; ++i) {
    if constexpr (kFused) {
      y[i] = std::fma(g, x[i], y[i]);
    } else {
      y[i] += g * x[i];
    }
  }
}
/// @copydoc view_dot_backward
inline void view_dot_backward(const float* v, float* grads, Index w, Index x, Index n, float g) noexcept {
  if (n <= kShortDot) {
    short_axpy<BURTORCH_SIMD_FUSED_FLOAT != 0>(&grads[w], g, &v[x], n);
    short_axpy<BURTORCH_SIMD_FUSED_FLOAT != 0>(&grads[x], g, &v[w], n);
  } else {
    simd::axpy(&grads[w], g, &v[x], n);
    simd::axpy(&grads[x], g, &v[w], n);
  }
}
/// @copydoc view_dot_backward
inline void view_dot_backward(const double* v, double* grads, Index w, Index x, Index n, double g) noexcept {
  if (n <= kShortDot) {
    short_axpy<BURTORCH_SIMD_FUSED_DOUBLE != 0>(&grads[w], g, &v[x], n);
    short_axpy<BURTORCH_SIMD_FUSED_DOUBLE != 0>(&grads[x], g, &v[w], n);
  } else {
    simd::axpy(&grads[w], g, &v[x], n);
    simd::axpy(&grads[x], g, &v[w], n);
  }
}

/// grads[w + i] += g * v[x + i] for i < n: one side of view_dot_backward.
template <class T>
inline void view_axpy(const T* v, T* grads, Index w, Index x, Index n, T g) noexcept {
  for (Index i = 0U; i < n; ++i) {
    grads[w + i] += g * v[x + i];
  }
}
/// @copydoc view_axpy
inline void view_axpy(const float* v, float* grads, Index w, Index x, Index n, float g) noexcept {
  if (n <= kShortDot) {
    short_axpy<BURTORCH_SIMD_FUSED_FLOAT != 0>(&grads[w], g, &v[x], n);
  } else {
    simd::axpy(&grads[w], g, &v[x], n);
  }
}
/// @copydoc view_axpy
inline void view_axpy(const double* v, double* grads, Index w, Index x, Index n, double g) noexcept {
  if (n <= kShortDot) {
    short_axpy<BURTORCH_SIMD_FUSED_DOUBLE != 0>(&grads[w], g, &v[x], n);
  } else {
    simd::axpy(&grads[w], g, &v[x], n);
  }
}

/// A view list in argument slots: list[0] the number of runs (and the flag
/// kListOfInputs), then a first/count pair per run.
/// The flag in list[0] that says every node of the runs is an input
/// (Tape::input, op kInput): no gradient is computed for them.
constexpr Index kListOfInputs = 0x80000000U;
/// The number of runs of a view list.
inline Index list_views(const Index* list) noexcept { return list[0] & ~kListOfInputs; }
/// True if a view list holds inputs only.
inline bool list_of_inputs(const Index* list) noexcept { return (list[0] & kListOfInputs) != 0U; }

/// The inner product of the weight run starting at w with the runs of a
/// view list, in run order.
template <class T>
T dot_list_of(const T* v, Index w, const Index* list) noexcept {
  const Index runs = list_views(list);
  if (runs == 1U) {
    return view_dot(v, w, list[1], list[2]);
  }
  T s = T(0);
  for (Index r = 0U; r < runs; ++r) {
    const Index first = list[1U + (2U * r)];
    const Index count = list[2U + (2U * r)];
    s += view_dot(v, w, first, count);
    w += count;
  }
  return s;
}

/// The backward of dot_list_of; over a list of inputs, the weights' side
/// alone (the inputs need no gradient).
template <class T>
void dot_list_backward(const T* v, T* grads, Index w, const Index* list, T g) noexcept {
  const Index runs = list_views(list);
  const bool inputs = list_of_inputs(list);
  for (Index r = 0U; r < runs; ++r) {
    const Index first = list[1U + (2U * r)];
    const Index count = list[2U + (2U * r)];
    if (inputs) {
      view_axpy(v, grads, w, first, count, g);
    } else {
      view_dot_backward(v, grads, w, first, count, g);
    }
    w += count;
  }
}

}  // namespace detail
}  // namespace burtorch

#endif  // BURTORCH_CORE_DETAIL_MATH_HPP
