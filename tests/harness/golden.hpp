// SPDX-License-Identifier: Apache-2.0
// Comparing against golden data (values PyTorch computed in FP64, in the
// headers of tests/golden/): the tolerances per scalar type and the array
// comparison the nn suites share. The absolute floor scales with the
// largest magnitude of the expected array (1 at least), for values that
// cross zero.
#ifndef BURTORCH_TESTS_GOLDEN_HPP
#define BURTORCH_TESTS_GOLDEN_HPP

#include <cmath>
#include <cstddef>

#include "harness.hpp"

namespace bt_test {

/// Relative tolerance and absolute floor against FP64 golden data.
template <class T>
struct Tol;
template <>
struct Tol<double> {
  static constexpr double rel = 1e-10;
  static constexpr double abs_floor = 1e-12;
  static constexpr double trajectory = 1e-8;  ///< losses along a training run
};
template <>
struct Tol<float> {
  static constexpr double rel = 1e-4;
  static constexpr double abs_floor = 2e-5;
  static constexpr double trajectory = 1e-4;
};

/// The largest |v[i]|, and 1 if that is less.
inline double max_abs(const double* v, std::size_t n) {
  double m = 1.0;
  for (std::size_t i = 0U; i < n; ++i) {
    m = (std::fabs(v[i]) > m) ? std::fabs(v[i]) : m;
  }
  return m;
}

/// Compares n values (node values or gradients) with golden ones, to rel
/// with an absolute floor of floor * max_abs(expected); on a mismatch every
/// element is reported, then `what`.
template <class T>
void check_array(Context& t, const T* got, const double* expected, std::size_t n, const char* what,
                 double rel = Tol<T>::rel, double floor = Tol<T>::abs_floor) {
  const double abs_tol = floor * max_abs(expected, n);
  bool all = true;
  for (std::size_t i = 0U; i < n; ++i) {
    all = all && near(static_cast<double>(got[i]), expected[i], rel, abs_tol);
  }
  if (!all) {
    for (std::size_t i = 0U; i < n; ++i) {
      BT_CHECK_CLOSE(t, static_cast<double>(got[i]), expected[i], rel, abs_tol);
    }
    print("    in ");
    print(what);
    print("\n");
  }
  BT_CHECK(t, all);
}

/// A lane batch's gradients against a serial batch's (docs/floating-point.md,
/// "Lane batches"): every got[i] within rel of the largest |expected[i]|,
/// which must not be 0.
template <class T>
void check_of_largest(Context& t, const T* got, const double* expected, std::size_t n, double rel) {
  double largest = 0.0;
  for (std::size_t i = 0U; i < n; ++i) {
    largest = (std::fabs(expected[i]) > largest) ? std::fabs(expected[i]) : largest;
  }
  BT_CHECK(t, largest > 0.0);
  std::size_t bad = 0U;
  for (std::size_t i = 0U; i < n; ++i) {
    bad += near(static_cast<double>(got[i]), expected[i], 0.0, rel * largest) ? 0U : 1U;
  }
  BT_CHECK(t, bad == 0U);
}

}  // namespace bt_test

#endif  // BURTORCH_TESTS_GOLDEN_HPP
