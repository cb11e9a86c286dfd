// SPDX-License-Identifier: Apache-2.0
// Names and macros a product may well have before it includes libburtorch:
// ordinary globals called tape, value, grad, status, min and max, and common
// macros (DEBUG, MAX, ERROR, assert) defined, or redefined, by the product.
// All legal C++. tools/check.d/40-compliance-kit.sh includes this first, then
// every header under include/burtorch/ (found, not listed), then
// consumer.cpp; the kit must report nothing in libburtorch's headers: no
// finding may depend on the names or macros a user picks.
#ifndef BURTORCH_TEST_HOSTILE_HPP
#define BURTORCH_TEST_HOSTILE_HPP

#include <cstdint>

// NOLINTBEGIN(cppcoreguidelines-macro-usage): the product's own macros, on purpose.
#define DEBUG 1
#define ERROR (-1)
#define MAX(a, b) (((a) > (b)) ? (a) : (b))
#undef assert
#define assert(x) static_cast<void>(x)
// NOLINTEND(cppcoreguidelines-macro-usage)

// NOLINTBEGIN(cppcoreguidelines-avoid-non-const-global-variables): the product's globals, on purpose.
inline std::int32_t tape = 0;
inline float value = 0.0F;
inline float grad = 0.0F;
inline std::int32_t status = 0;
inline std::int32_t min = 0;
inline std::int32_t max = 0;
// NOLINTEND(cppcoreguidelines-avoid-non-const-global-variables)

/// Reads every hostile name once, so none is unused.
inline std::int32_t hostile_total() noexcept {
  return tape + status + min + MAX(max, ERROR) + DEBUG + static_cast<std::int32_t>(value + grad);
}

#endif  // BURTORCH_TEST_HOSTILE_HPP
