// SPDX-License-Identifier: Apache-2.0
/// @file
/// What the tape needs from its scalar type T beyond construction from a
/// number (T(0), T(0.5), static_cast<T>(n)) and + - * / (also compound and
/// unary minus): elementary functions, the two selects of relu, the maximum
/// (log-sum-exp), the selects of the piecewise ops (leaky ReLU, |x|, Huber,
/// the maximum of a reduction) and the finiteness test. float and double use `<cmath>`
/// (but float's tanh, the library's own: tanh_float() below); a
/// type whose values are several independent lanes (burtorch/lanes/lanes.hpp)
/// specializes ScalarOps so that every select acts lane by lane.
#ifndef BURTORCH_SCALAR_HPP
#define BURTORCH_SCALAR_HPP

#include <cmath>
#include <type_traits>

namespace burtorch {

/// tanh_float: the library's own tanh of a float (lib/tanh_float.cpp), which
/// ScalarOps<float>::tanh uses instead of the C library's tanhf: no libm
/// code (tanhf, expm1f, errno) linked into a float firmware, and the same
/// bits on every target (compiled with -ffp-contract=off, IEEE-754
/// single-precision +, -, *, / only).
///
/// |x| < 0.5: the odd Taylor series to the 15th power (the first term left
/// out is below 2^-25 relative); 0.5 <= |x| < 9.5: 1 - 2 / (e^(2|x|) + 1)
/// with e^y = 2^n e^r, n = round(y / ln 2), r = y - n ln 2 (ln 2 in two
/// parts: n ln 2 exact), e^r by its Taylor series to the 7th power; |x| >=
/// 9.5 (tanh rounds to 1 there): 1. The sign of x copied in (tanh(-0) is
/// -0), NaN for NaN. Within 2.5 ulp of the exact tanh
/// (tests/targets/host_tanh_float.cpp measures it against the C
/// library's double tanh over every 61st float and every float of
/// [0.25, 10], and prints the largest error it finds).
float tanh_float(float x) noexcept;

/// The elementary functions, selects and tests the tape applies to T
/// (here: the `<cmath>` functions of float and double).
template <class T>
struct ScalarOps {
  /// true: `x == T(0)` is one answer for the whole value (the product's
  /// backward counts zero factors); false: lanes may differ, and the
  /// product's backward multiplies out the other factors instead.
  static constexpr bool kSingleLane = true;
  static T exp(T x) noexcept { return std::exp(x); }    ///< e to the x
  static T log(T x) noexcept { return std::log(x); }    ///< natural logarithm
  /// Hyperbolic tangent: the library's own for float (tanh_float(), within
  /// 2.5 ulp, the same bits on every target, no libm code linked), `<cmath>`'s
  /// for any other type.
  static T tanh(T x) noexcept {
    if constexpr (std::is_same<T, float>::value) {
      return tanh_float(x);
    } else {
      return std::tanh(x);
    }
  }
  static T sqrt(T x) noexcept { return std::sqrt(x); }  ///< square root
  /// The relu's forward, as PyTorch's: max(x, 0) with NaN passed through
  /// (relu(-0) is +0 here, -0 in PyTorch).
  static T relu(T x) noexcept { return ((x > T(0)) || std::isnan(x)) ? x : T(0); }
  /// The relu's backward, as PyTorch's: g where x > 0 or x is NaN, else 0
  /// (relu'(0) = 0).
  static T relu_grad(T x, T g) noexcept { return ((x > T(0)) || std::isnan(x)) ? g : T(0); }
  /// b if b > a, else a.
  static T max(T a, T b) noexcept { return (b > a) ? b : a; }
  /// |x| (|-0| is +0).
  static T abs(T x) noexcept { return std::fabs(x); }
  /// log(1 + x), accurate for small x.
  static T log1p(T x) noexcept { return std::log1p(x); }
  /// x if a > b, else y (false when a or b is NaN).
  static T select_greater(T a, T b, T x, T y) noexcept { return (a > b) ? x : y; }
  /// x if a == b, else y (false when a or b is NaN; -0 equals +0).
  static T select_equal(T a, T b, T x, T y) noexcept { return (a == b) ? x : y; }  // BT-DEV-004: exact test
  /// x if a is NaN, else y.
  static T select_nan(T a, T x, T y) noexcept { return std::isnan(a) ? x : y; }
  /// False for NaN and infinities.
  static bool finite(T x) noexcept { return std::isfinite(x); }
  /// x if finite, else 0 (log-sum-exp's shift).
  static T finite_or_zero(T x) noexcept { return std::isfinite(x) ? x : T(0); }
  /// True if x is zero (every lane, for a lane type): backward skips it.
  static bool is_zero(T x) noexcept { return x == T(0); }  // BT-DEV-004: exact zero test
};

}  // namespace burtorch

#endif  // BURTORCH_SCALAR_HPP
