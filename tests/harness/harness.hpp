// SPDX-License-Identifier: Apache-2.0
// A tiny test harness with no heap, no exceptions and no stdio, so the same
// tests run on a workstation and on a Cortex-M under QEMU. Output goes
// through the port layer; the runner ends with "N passed, N failed" and
// returns non-zero if anything failed.
#ifndef BURTORCH_TESTS_HARNESS_HPP
#define BURTORCH_TESTS_HARNESS_HPP

#include <cstddef>
#include <cstdint>

namespace bt_test {

struct Context {
  const char* test_name = "";
  int checks_failed_in_test = 0;
  long checks = 0;
};

using TestFunction = void (*)(Context&);

struct TestCase {
  const char* name;
  TestFunction function;
};

// Runs every case, prints one line per failing check and the summary line.
int run(const char* suite, const TestCase* cases, std::size_t count);

void record(Context& t, bool ok, const char* expression, const char* file, int line);
// |actual - expected| <= abs_tol + rel_tol * |expected| (NaN never passes).
bool near(double actual, double expected, double rel_tol, double abs_tol);
void record_near(Context& t, double actual, double expected, double rel_tol, double abs_tol,
                 const char* expression, const char* file, int line);

// Text helpers (no printf on the boards).
void print(const char* text);
void print_int(long value);
void print_double(double value);  // 17 significant digits, scientific

}  // namespace bt_test

#define BT_CHECK(t, condition) ::bt_test::record((t), (condition), #condition, __FILE__, __LINE__)
#define BT_CHECK_NEAR(t, actual, expected, rel_tol) \
  ::bt_test::record_near((t), (actual), (expected), (rel_tol), 0.0, #actual, __FILE__, __LINE__)
#define BT_CHECK_CLOSE(t, actual, expected, rel_tol, abs_tol) \
  ::bt_test::record_near((t), (actual), (expected), (rel_tol), (abs_tol), #actual, __FILE__, __LINE__)

#define BT_TEST_MAIN(suite, cases)                                                   \
  int main() {                                                                        \
    return ::bt_test::run((suite), (cases), sizeof(cases) / sizeof((cases)[0]));    \
  }

#endif  // BURTORCH_TESTS_HARNESS_HPP
