// SPDX-License-Identifier: Apache-2.0
// One neuron, y = w * x + b, fitted to eight noisy points of a line by
// gradient descent on the mean squared error, through the core API only:
// a tape, parameters, operators, backward, and a rewind per step so the
// tape holds one step's graph at a time.
//
// Prints the points ("point x y"), the loss every 200 steps, and the fitted
// "slope w" and "intercept b". Least squares has a closed form, so whoever
// runs this can check the result (tools/check.d/42-install-examples.sh does).
#include <burtorch/burtorch.hpp>
#include <burtorch/port/port.hpp>

#include <array>
#include <cstddef>

namespace bt = burtorch;

namespace {

void print_number(const char* label, double value) {
  std::array<char, 32U> text{};
  const std::size_t n = bt::format_double(value, text.data(), text.size());
  bt::port::write(label);
  bt::port::write(text.data(), n);
}

}  // namespace

int main() {
  // Points near y = 1.5 x - 0.5 (the last column is the noise added).
  constexpr std::size_t kPoints = 8U;
  const std::array<double, kPoints> xs = {-1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0, 2.5};
  const std::array<double, kPoints> ys = {-2.05, -1.21, -0.46, 0.31, 0.98, 1.83, 2.47, 3.29};

  // Two parameters, then per step: 8 x (mul, add, sub, square) + mean.
  static bt::FixedTape<double, 64> tape;
  bt::Value<double> w = tape.param(0.0, BURTORCH_NAME("w"));
  bt::Value<double> b = tape.param(0.0, BURTORCH_NAME("b"));
  const bt::Mark after_params = tape.mark();

  for (std::size_t i = 0U; i < kPoints; ++i) {
    print_number("point ", xs[i]);
    print_number(" ", ys[i]);
    bt::port::write("\n");
  }

  constexpr int kSteps = 2000;
  constexpr double kLearningRate = 0.1;
  double loss_value = 0.0;
  for (int step = 0; step <= kSteps; ++step) {
    std::array<bt::Value<double>, kPoints> errors;
    for (std::size_t i = 0U; i < kPoints; ++i) {
      errors[i] = bt::sqr(w * xs[i] + b - ys[i]);
    }
    const bt::Value<double> loss = bt::reduce_mean(errors.data(), errors.size());
    tape.zero_grad();
    if (tape.backward(loss) != bt::Status::kOk) {
      bt::port::write("backward failed\n");
      return 1;
    }
    loss_value = loss.value();
    if ((step % 200) == 0) {
      print_number("step ", static_cast<double>(step));
      print_number(" loss ", loss_value);
      bt::port::write("\n");
    }
    // Plain gradient descent on the two parameters.
    tape.values()[w.index()] -= kLearningRate * w.grad();
    tape.values()[b.index()] -= kLearningRate * b.grad();
    static_cast<void>(tape.rewind(after_params));
  }
  print_number("slope ", w.value());
  bt::port::write("\n");
  print_number("intercept ", b.value());
  bt::port::write("\n");
  print_number("loss ", loss_value);
  bt::port::write("\n");
  return (tape.status() == bt::Status::kOk) ? 0 : 1;
}
