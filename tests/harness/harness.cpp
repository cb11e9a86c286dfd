// SPDX-License-Identifier: Apache-2.0
#include "harness.hpp"

#include <cmath>
#include <cstring>

#include "burtorch/port/port.hpp"

namespace bt_test {

void print(const char* text) { burtorch::port::write(text, std::strlen(text)); }

void print_int(long value) {
  char buffer[24];
  std::size_t at = sizeof(buffer);
  buffer[--at] = '\0';
  const bool negative = value < 0;
  unsigned long magnitude = negative ? (0UL - static_cast<unsigned long>(value)) : static_cast<unsigned long>(value);
  do {
    buffer[--at] = static_cast<char>('0' + static_cast<int>(magnitude % 10UL));
    magnitude /= 10UL;
  } while (magnitude != 0UL);
  if (negative) {
    buffer[--at] = '-';
  }
  print(&buffer[at]);
}

void print_double(double value) {
  if (std::isnan(value)) {
    print("nan");
    return;
  }
  if (std::isinf(value)) {
    print(value < 0.0 ? "-inf" : "inf");
    return;
  }
  if (value < 0.0) {
    print("-");
    value = -value;
  }
  int exponent = 0;
  if (value != 0.0) {
    exponent = static_cast<int>(std::floor(std::log10(value)));
    value = value / std::pow(10.0, exponent);
    if (value >= 10.0) {
      value /= 10.0;
      ++exponent;
    }
    if (value < 1.0) {
      value *= 10.0;
      --exponent;
    }
  }
  char digits[24];
  std::size_t n = 0U;
  for (int i = 0; i < 17; ++i) {
    int d = static_cast<int>(value);
    d = (d < 0) ? 0 : ((d > 9) ? 9 : d);
    digits[n++] = static_cast<char>('0' + d);
    if (i == 0) {
      digits[n++] = '.';
    }
    value = (value - d) * 10.0;
  }
  digits[n] = '\0';
  print(digits);
  print("e");
  print_int(exponent);
}

void record(Context& t, bool ok, const char* expression, const char* file, int line) {
  ++t.checks;
  if (ok) {
    return;
  }
  ++t.checks_failed_in_test;
  print("  FAIL ");
  print(t.test_name);
  print(": ");
  print(expression);
  print(" at ");
  print(file);
  print(":");
  print_int(line);
  print("\n");
}

bool near(double actual, double expected, double rel_tol, double abs_tol) {
  if (std::isnan(actual) || std::isnan(expected)) {
    return false;
  }
  if (std::isinf(expected) || std::isinf(actual)) {
    return actual == expected;
  }
  return std::fabs(actual - expected) <= (abs_tol + (rel_tol * std::fabs(expected)));
}

void record_near(Context& t, double actual, double expected, double rel_tol, double abs_tol,
                 const char* expression, const char* file, int line) {
  const bool ok = near(actual, expected, rel_tol, abs_tol);
  record(t, ok, expression, file, line);
  if (!ok) {
    print("    got ");
    print_double(actual);
    print(", expected ");
    print_double(expected);
    print("\n");
  }
}

int run(const char* suite, const TestCase* cases, std::size_t count) {
  int passed = 0;
  int failed = 0;
  long checks = 0;
  for (std::size_t i = 0U; i < count; ++i) {
    Context t;
    t.test_name = cases[i].name;
    cases[i].function(t);
    checks += t.checks;
    if ((t.checks_failed_in_test == 0) && (t.checks > 0)) {
      ++passed;
    } else {
      if (t.checks == 0) {
        print("  FAIL ");
        print(t.test_name);
        print(": made no checks\n");
      }
      ++failed;
      print("[FAILED] ");
      print(t.test_name);
      print("\n");
    }
  }
  print(suite);
  print(": ");
  print_int(checks);
  print(" checks\n");
  print_int(passed);
  print(" passed, ");
  print_int(failed);
  print(" failed\n");
  return (failed == 0) ? 0 : 1;
}

}  // namespace bt_test
