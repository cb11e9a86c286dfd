// SPDX-License-Identifier: Apache-2.0
// A program that uses a tape: compiled by tests/targets/config_mismatch.cmake with a
// configuration flag other than the library's, it must fail to compile (the
// generated build_config.hpp is on the include path) or fail to link (it is
// not, so the -D value is taken) -- never build.
#include <burtorch/burtorch.hpp>

int main() {
  static burtorch::FixedTape<double, 16> tape;
  const burtorch::Value<double> x = tape.leaf(2.0);
  const burtorch::Value<double> y = x * x;
  return (tape.backward(y) == burtorch::Status::kOk) ? 0 : 1;
}
