// SPDX-License-Identifier: Apache-2.0
// Footprint probe, part 1: the "tape core" a firmware pays for. Every op of
// core/ops.hpp on Tape<float> (the forward code is inline, so it lands in this
// file's object), reductions, inner products, view lists, backward,
// mark/rewind and status. No layers, no checkpoints, no DOT export.
// tools/footprint attributes this object plus libburtorch.a's linked
// sections to "tape core" (docs/footprint.md).
#include <burtorch/burtorch.hpp>

#include "tape_core_probe.hpp"

namespace bt = burtorch;

namespace {
bt::FixedTape<float, 128> g_tape;
}

float burtorch_footprint_tape_core(const float* in, float* grads) noexcept {
  g_tape.reset();
  const bt::Mark start = g_tape.mark();
  bt::Value<float> x[4];
  for (int i = 0; i < 4; ++i) {
    x[i] = g_tape.param(in[i]);
  }
  bt::Value<float> a = x[0];
  bt::Value<float> b = x[1];
  // Binary and scalar arithmetic.
  auto y = (a + b) * (a - b) / (b + 3.0F);
  y = y + bt::mean(a, b) + bt::add_squares(a, b) + bt::mean_squares(a, b) + bt::negative_mean(a, b);
  y += 2.0F - (a * 0.5F) + (1.0F / (b + 4.0F)) + bt::mul_by_const(b, 1.5F) - (a / 2.0F) + (-b);
  // Unary functions.
  y += bt::relu(a) + bt::tanh(b) + bt::exp(a * 0.1F) + bt::log(b + 5.0F) + bt::neg_log(b + 6.0F);
  y += bt::sigmoid(a) + bt::inv(b + 7.0F) + bt::sqr(a) + bt::pow3(b) + bt::sqrt(b + 8.0F) + bt::inv_sqrt(a + 9.0F);
  // Reductions and inner products over ranges and lists.
  bt::Value<float> list[4] = {x[3], x[1], x[2], x[0]};
  y += bt::reduce_sum(x, 4U) + bt::reduce_sub(list, 4U) + bt::reduce_mul(x, 4U) + bt::reduce_mean(list, 4U);
  y += bt::reduce_sum_of_squares(x, 4U) + bt::reduce_mean_squares(list, 4U) + bt::reduce_negative_mean(x, 4U);
  y += bt::variance(list, 4U) + bt::variance_biased(x, 4U) + bt::log_sum_exp(x, 4U);
  y += bt::inner_product(x, list, 4U) + bt::inner_product_with_bias(list, x, 4U, a);
  const bt::View parts[2] = {{x[0].index(), 2U}, {x[2].index(), 2U}};
  const bt::ViewList segs = bt::view_list(g_tape, parts, 2U);
  y += bt::inner_product_views(x[0], segs) + bt::inner_product_views_with_bias(x[0], segs, b);
  static_cast<void>(g_tape.backward(y));
  for (int i = 0; i < 4; ++i) {
    grads[i] = x[i].grad();
  }
  const float result = bt::all_finite(g_tape) ? y.value() : -1.0F;
  static_cast<void>(g_tape.rewind(start));
  return (g_tape.status() == bt::Status::kOk) ? result : -2.0F;
}
