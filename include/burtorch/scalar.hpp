// What the tape needs from its scalar type T beyond construction from a
// number (T(0), T(0.5), static_cast<T>(n)) and + - * / (also compound and
// unary minus): elementary functions, the two selects of relu, the maximum
// (log-sum-exp) and the finiteness test. float and double use <cmath>; a
// type whose values are several independent lanes (burtorch/lanes.hpp)
// specializes ScalarOps so that every select acts lane by lane.
#ifndef BURTORCH_SCALAR_HPP
#define BURTORCH_SCALAR_HPP

#include <cmath>

namespace burtorch {

template <class T>
struct ScalarOps {
  // true: `x == T(0)` is one answer for the whole value (the product's
  // backward counts zero factors); false: lanes may differ, and the
  // product's backward multiplies out the other factors instead.
  static constexpr bool kSingleLane = true;
  static T exp(T x) noexcept { return std::exp(x); }
  static T log(T x) noexcept { return std::log(x); }
  static T tanh(T x) noexcept { return std::tanh(x); }
  static T sqrt(T x) noexcept { return std::sqrt(x); }
  // The relu's forward and backward, as PyTorch's: max(x, 0) with NaN passed
  // through (relu(-0) is +0 here, -0 in PyTorch); the gradient passes where
  // x > 0 or x is NaN, else 0 (relu'(0) = 0).
  static T relu(T x) noexcept { return ((x > T(0)) || std::isnan(x)) ? x : T(0); }
  static T relu_grad(T x, T g) noexcept { return ((x > T(0)) || std::isnan(x)) ? g : T(0); }
  // b if b > a, else a.
  static T max(T a, T b) noexcept { return (b > a) ? b : a; }
  static bool finite(T x) noexcept { return std::isfinite(x); }
  // x if finite, else 0 (log-sum-exp's shift).
  static T finite_or_zero(T x) noexcept { return std::isfinite(x) ? x : T(0); }
  // True if x is zero (every lane, for a lane type): backward skips it.
  static bool is_zero(T x) noexcept { return x == T(0); }  // BT-DEV-004: exact zero test
};

}  // namespace burtorch

#endif  // BURTORCH_SCALAR_HPP
