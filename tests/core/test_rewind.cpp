// SPDX-License-Identifier: Apache-2.0
// Per-sample rewind: parameters recorded before a mark keep their values and
// gradients; everything after it is discarded; repeating build -> backward
// -> rewind gives the same bits every time (the original BurTorch
// double-counts after its 8th backward).
#include <burtorch/burtorch.hpp>

#include <cmath>

#include "harness.hpp"

namespace bt = burtorch;

namespace {

#ifndef BURTORCH_TEST_SMALL_TARGET
#define BURTORCH_TEST_SMALL_TARGET 0
#endif
constexpr long kIterations = BURTORCH_TEST_SMALL_TARGET ? 2000 : 10000;

bt::FixedTape<double, 128> g_tape;

// One "sample": the small graph of the paper built on parameters a, b and a
// per-sample input x; returns the root.
bt::Value<double> sample(bt::Value<double> a, bt::Value<double> b, double x_value) {
  auto x = g_tape.leaf(x_value);
  auto c = a + b;
  auto d = a * b + bt::pow3(b);
  c += c + 1.0;
  c += 1.0 + c + (-a);
  d += d * 2.0 + bt::relu(b + a);
  d += 3.0 * d + bt::relu(b - a);
  auto e = (c - d) * x;
  auto f = bt::sqr(e);
  auto g = f / 2.0;
  g += 10.0 / f;
  const bt::Value<double> tail[3] = {g, x, bt::tanh(x)};
  return bt::reduce_sum(tail, 3U);
}

void ten_thousand_identical_iterations(bt_test::Context& t) {
  g_tape.reset();
  auto a = g_tape.param(-4.0, BURTORCH_NAME("a"));
  auto b = g_tape.param(2.0, BURTORCH_NAME("b"));
  const bt::Mark m = g_tape.mark();
  // Reference: the first iteration.
  auto root0 = sample(a, b, 1.0);
  BT_CHECK(t, g_tape.backward(root0) == bt::Status::kOk);
  const double value0 = root0.value();
  const double ga0 = a.grad();
  const double gb0 = b.grad();
  const std::size_t nodes0 = g_tape.size();
  const std::size_t slots0 = g_tape.usage().slots;
  // Closed form at x = 1 is the micrograd example plus 1 + tanh(1).
  BT_CHECK_NEAR(t, value0, 24.70408163265306 + 1.0 + 0.7615941559557649, 1e-14);
  BT_CHECK_NEAR(t, ga0, 138.83381924198252, 1e-14);
  BT_CHECK_NEAR(t, gb0, 645.5772594752186, 1e-14);
  BT_CHECK(t, g_tape.rewind(m) == bt::Status::kOk);
  BT_CHECK(t, g_tape.size() == 2U && g_tape.usage().slots == 0U);

  long mismatches = 0;
  for (long k = 1; k <= kIterations; ++k) {
    g_tape.zero_grad(0U, 2U);  // new batch of one sample
    auto root = sample(a, b, 1.0);
    const bool ok = (g_tape.backward(root) == bt::Status::kOk) && (root.value() == value0) &&
                    (a.grad() == ga0) && (b.grad() == gb0) && (g_tape.size() == nodes0) &&
                    (g_tape.usage().slots == slots0);
    mismatches += ok ? 0 : 1;
    static_cast<void>(g_tape.rewind(m));
  }
  BT_CHECK(t, mismatches == 0);
  BT_CHECK(t, a.value() == -4.0 && b.value() == 2.0);
  BT_CHECK(t, g_tape.status() == bt::Status::kOk);
}

// Without zero_grad, parameter gradients accumulate exactly one sample's
// worth per iteration (tiny graph: integers, exact in FP64).
void gradients_accumulate_across_samples(bt_test::Context& t) {
  g_tape.reset();
  auto a = g_tape.param(-41.0);
  auto b = g_tape.param(2.0);
  const bt::Mark m = g_tape.mark();
  long mismatches = 0;
  for (long k = 1; k <= kIterations; ++k) {
    auto c = a + b;
    auto d = a * b + bt::pow3(b);
    auto g = bt::sqr(c - d) / 2.0;
    const bool ok = (g_tape.backward(g) == bt::Status::kOk) && (a.grad() == -35.0 * static_cast<double>(k)) &&
                    (b.grad() == 1050.0 * static_cast<double>(k));
    mismatches += ok ? 0 : 1;
    static_cast<void>(g_tape.rewind(m));
  }
  BT_CHECK(t, mismatches == 0);
  BT_CHECK(t, a.grad() == -35.0 * static_cast<double>(kIterations));
}

// Interior nodes recorded before the mark (a shared transform of the
// parameters) are kept and their gradients recomputed on every backward.
void interior_nodes_before_mark(bt_test::Context& t) {
  g_tape.reset();
  auto w = g_tape.param(3.0);
  auto w2 = w * w;  // before the mark, used by every sample
  const bt::Mark m = g_tape.mark();
  for (int k = 1; k <= 50; ++k) {
    auto x = g_tape.leaf(static_cast<double>(k));
    auto y = w2 * x;  // y = w^2 k, dy/dw = 2 w k
    BT_CHECK(t, g_tape.backward(y) == bt::Status::kOk);
    BT_CHECK(t, x.grad() == 9.0);
    BT_CHECK(t, w2.grad() == static_cast<double>(k));
    BT_CHECK(t, w.grad() == 6.0 * static_cast<double>(k * (k + 1) / 2));  // accumulated
    BT_CHECK(t, g_tape.rewind(m) == bt::Status::kOk);
  }
  BT_CHECK(t, g_tape.size() == 2U);
}

// Rewinding to an older mark, then recording different shapes, reuses the
// space; a handle from before the rewind is rejected.
void nested_marks(bt_test::Context& t) {
  g_tape.reset();
  auto p = g_tape.param(0.5);
  const bt::Mark outer = g_tape.mark();
  auto q = bt::exp(p);
  const bt::Mark inner = g_tape.mark();
  auto r = q * q;
  BT_CHECK(t, g_tape.backward(r) == bt::Status::kOk);
  BT_CHECK_NEAR(t, p.grad(), 2.0 * std::exp(1.0), 1e-15);
  BT_CHECK(t, g_tape.rewind(inner) == bt::Status::kOk);
  BT_CHECK(t, g_tape.size() == 2U);
  BT_CHECK(t, g_tape.rewind(outer) == bt::Status::kOk);
  BT_CHECK(t, g_tape.size() == 1U);
  BT_CHECK(t, g_tape.rewind(inner) == bt::Status::kInvalidArgument);  // now in the future
  auto stale = q + p;
  BT_CHECK(t, !stale.valid());
  BT_CHECK(t, g_tape.status() == bt::Status::kInvalidHandle);
}

const bt_test::TestCase kCases[] = {
    {"ten_thousand_identical_iterations", ten_thousand_identical_iterations},
    {"gradients_accumulate_across_samples", gradients_accumulate_across_samples},
    {"interior_nodes_before_mark", interior_nodes_before_mark},
    {"nested_marks", nested_marks},
};

}  // namespace

BT_TEST_MAIN("rewind", kCases)
