// SPDX-License-Identifier: Apache-2.0
// Host tests only: the C library's printf("%.*g") (glibc converts exactly
// and rounds to nearest, ties to even) rewritten into the layout of
// burtorch::format_double and format_float (positional for decimal
// exponents -5..significant-1, exponent without '+' or leading zeros, no
// trailing zeros, "nan", "inf"): the oracle of host_format_double and
// host_format_float, a small parser independent of the library's code.
#ifndef BURTORCH_TESTS_PRINTF_LAYOUT_HPP
#define BURTORCH_TESTS_PRINTF_LAYOUT_HPP

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace printf_layout {

// printf("%.*g", significant, v) in the library's layout.
inline void reference(double v, int significant, char* out, std::size_t capacity) {
  char g[64];
  std::snprintf(g, sizeof(g), "%.*g", significant, v);
  const char* p = g;
  std::size_t n = 0U;
  if (*p == '-') {
    out[n++] = '-';
    ++p;
  }
  if ((std::strcmp(p, "nan") == 0) || (std::strcmp(p, "inf") == 0)) {
    // The library spells every NaN "nan" (glibc writes "-nan" for a set sign bit).
    n = ((p[0] == 'n') || (n == 0U)) ? 0U : 1U;
    std::memcpy(&out[n], p, 4U);
    return;
  }
  // All mantissa digits in order, how many stand before the point, and the
  // exponent after 'e'.
  char digits[64];
  std::size_t count = 0U;
  std::size_t before_point = 0U;
  bool seen_point = false;
  int e_part = 0;
  for (; *p != '\0'; ++p) {
    if ((*p >= '0') && (*p <= '9')) {
      digits[count++] = *p;
      before_point += seen_point ? 0U : 1U;
    } else if (*p == '.') {
      seen_point = true;
    } else if (*p == 'e') {
      e_part = std::atoi(p + 1);
      break;
    }
  }
  std::size_t first = 0U;
  while ((first < count) && (digits[first] == '0')) {
    ++first;
  }
  if (first == count) {
    std::snprintf(&out[n], capacity - n, "0");
    return;
  }
  std::size_t last = count;
  while (digits[last - 1U] == '0') {
    --last;
  }
  const int exponent = static_cast<int>(before_point) - 1 - static_cast<int>(first) + e_part;
  const char* sig = &digits[first];
  const int sig_count = static_cast<int>(last - first);
  if ((exponent >= -5) && (exponent < significant)) {
    if (exponent < 0) {
      n += static_cast<std::size_t>(std::snprintf(&out[n], capacity - n, "0."));
      for (int z = -1; z > exponent; --z) {
        out[n++] = '0';
      }
      std::snprintf(&out[n], capacity - n, "%.*s", sig_count, sig);
    } else {
      for (int k = 0; k <= exponent; ++k) {
        out[n++] = (k < sig_count) ? sig[k] : '0';
      }
      out[n] = '\0';
      if (sig_count > exponent + 1) {
        std::snprintf(&out[n], capacity - n, ".%.*s", sig_count - exponent - 1, &sig[exponent + 1]);
      }
    }
  } else {
    out[n++] = sig[0];
    if (sig_count > 1) {
      n += static_cast<std::size_t>(std::snprintf(&out[n], capacity - n, ".%.*s", sig_count - 1, &sig[1]));
    }
    std::snprintf(&out[n], capacity - n, "e%d", exponent);
  }
}

}  // namespace printf_layout

#endif  // BURTORCH_TESTS_PRINTF_LAYOUT_HPP
