/// @file
/// What the tape needs from its scalar type T beyond construction from a
/// number (T(0), T(0.5), static_cast<T>(n)) and + - * / (also compound and
/// unary minus): elementary functions, the two selects of relu, the maximum
/// (log-sum-exp) and the finiteness test. float and double use `<cmath>`; a
/// type whose values are several independent lanes (burtorch/lanes.hpp)
/// specializes ScalarOps so that every select acts lane by lane.
#ifndef BURTORCH_SCALAR_HPP
#define BURTORCH_SCALAR_HPP

#include <cmath>

namespace burtorch {

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
  static T tanh(T x) noexcept { return std::tanh(x); }  ///< hyperbolic tangent
  static T sqrt(T x) noexcept { return std::sqrt(x); }  ///< square root
  /// max(x, 0): the relu's forward.
  static T relu(T x) noexcept { return (x > T(0)) ? x : T(0); }
  /// g where x > 0, else 0: the relu's backward.
  static T relu_grad(T x, T g) noexcept { return (x > T(0)) ? g : T(0); }
  /// b if b > a, else a.
  static T max(T a, T b) noexcept { return (b > a) ? b : a; }
  /// False for NaN and infinities.
  static bool finite(T x) noexcept { return std::isfinite(x); }
};

}  // namespace burtorch

#endif  // BURTORCH_SCALAR_HPP
