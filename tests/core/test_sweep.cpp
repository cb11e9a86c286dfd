// SPDX-License-Identifier: Apache-2.0
// What the backward sweep skips and fuses, checked against closed forms and
// against the unfused graph it replaces:
//  - inputs (Tape::input): leaves that need no gradient; a view list of
//    inputs only makes the inner products over it skip the input side of
//    their backward (the weights' gradients are the same bits as with
//    ordinary leaves, the inputs' gradient slots are never written);
//  - activations fused into a layer's rows (Tape::matvec<Op::kRelu>,
//    <kTanh>, <kSigmoid>, nn::Linear): the same values and gradients, bit
//    for bit, as a matvec followed by activation nodes, with one node per
//    output; compile-time activation (Linear::forward<A>);
//  - a matvec's rows swept as one block: two layers back to back, a root
//    in the middle of a layer, rows with zero gradient.
#include <burtorch/burtorch.hpp>
#include <burtorch/nn/nn.hpp>

#include <cmath>
#include <cstring>

#include "harness.hpp"

namespace bt = burtorch;
namespace nn = burtorch::nn;

namespace {

// Shared by the tests (each resets what it uses): the micro:bit has 16 KiB
// of RAM for all of them.
bt::FixedTape<double, 48, 32> g_d0;
bt::FixedTape<double, 48, 32> g_d1;
bt::FixedTape<float, 48, 32> g_f0;
bt::FixedTape<float, 48, 32> g_f1;

bool same(double a, double b) {
  return (a == b) || (std::isnan(a) && std::isnan(b));
}

bool same_bits(float a, float b) {
  std::uint32_t x = 0U;
  std::uint32_t y = 0U;
  std::memcpy(&x, &a, sizeof(x));
  std::memcpy(&y, &b, sizeof(y));
  return x == y;
}

// --- inputs -------------------------------------------------------------------

void inputs_are_leaves_without_gradient(bt_test::Context& t) {
  static bt::FixedTape<double, 16, 16, 2> tape;
  tape.reset();
  // Inside the parameter region an input is refused like any node but a
  // leaf (kInvalidArgument: a misuse, not a full tape): nothing recorded.
  const bt::Value<double> early = tape.input(1.0);
  BT_CHECK(t, !early.valid());
  BT_CHECK(t, tape.status() == bt::Status::kInvalidArgument);
  BT_CHECK(t, tape.size() == 0U);
  tape.reset();
  const bt::Value<double> w0 = tape.param(2.0);
  const bt::Value<double> w1 = tape.param(-3.0);
  const bt::Value<double> x = tape.input(0.5);
  const bt::Value<double> y = tape.input(-1.5);
  BT_CHECK(t, x.valid() && y.valid() && (tape.status() == bt::Status::kOk));
  BT_CHECK(t, (x.value() == 0.5) && (y.value() == -1.5));
  BT_CHECK(t, bt::node_op(tape, x.index()) == bt::Op::kInput);
  BT_CHECK(t, bt::node_operands(tape, x.index()).a == bt::kNoIndex);
  BT_CHECK(t, std::strcmp(bt::op_name(bt::Op::kInput), "input") == 0);
  BT_CHECK(t, bt::op_kind(bt::Op::kInput) == bt::OpKind::kSource);
  // d/dw of w0 x + w1 y: x and y. (The inputs' gradient slots get the
  // products' shares: ops that take an input one by one still add to it;
  // only the wide ops skip it, see below.)
  const bt::Value<double> out = (w0 * x) + (w1 * y);
  BT_CHECK(t, tape.backward(out) == bt::Status::kOk);
  BT_CHECK(t, w0.grad() == 0.5);
  BT_CHECK(t, w1.grad() == -1.5);
  // An input as the root: nothing to propagate, no error.
  BT_CHECK(t, tape.backward(x) == bt::Status::kOk);
  BT_CHECK(t, w0.grad() == 0.5);
  // Full tape: refused, the status is sticky, the nodes recorded stay.
  static bt::FixedTape<double, 3, 4> small;
  small.reset();
  BT_CHECK(t, small.input(1.0).valid() && small.input(2.0).valid() && small.input(3.0).valid());
  BT_CHECK(t, !small.input(4.0).valid());
  BT_CHECK(t, small.status() == bt::Status::kCapacityExceeded);
  BT_CHECK(t, (small.size() == 3U) && (small.value(2U) == 3.0));
}

// W (3 x 4) x + b over x = 4 inputs (or leaves), loss = sum_o c_o y_o.
constexpr std::size_t kRows = 3U;
constexpr std::size_t kCols = 4U;
const double kW[kRows][kCols] = {{0.5, -1.25, 2.0, 0.75}, {-0.5, 1.5, 0.25, -2.0}, {1.0, 0.125, -0.75, 1.75}};
const double kB[kRows] = {0.25, -0.5, 1.0};
const double kX[kCols] = {1.5, -0.25, 0.5, 2.0};
const double kC[kRows] = {1.0, -2.0, 0.5};

struct Layer {
  bt::Index w;
  bt::Index b;
  bt::Index x;
  bt::Value<double> loss;
};

Layer record_layer(bt::Tape<double>& tape, bool inputs) {
  tape.reset();
  Layer l{};
  l.w = static_cast<bt::Index>(tape.size());
  for (std::size_t o = 0U; o < kRows; ++o) {
    for (std::size_t k = 0U; k < kCols; ++k) {
      static_cast<void>(tape.param(kW[o][k]));
    }
  }
  l.b = static_cast<bt::Index>(tape.size());
  for (std::size_t o = 0U; o < kRows; ++o) {
    static_cast<void>(tape.param(kB[o]));
  }
  l.x = static_cast<bt::Index>(tape.size());
  for (std::size_t k = 0U; k < kCols; ++k) {
    static_cast<void>(inputs ? tape.input(kX[k]) : tape.leaf(kX[k]));
  }
  const bt::View xv{l.x, static_cast<bt::Index>(kCols)};
  const bt::View y = bt::matvec(tape, l.w, static_cast<bt::Index>(kRows), bt::view_list(tape, &xv, 1U), l.b);
  bt::Value<double> loss = bt::Value<double>(&tape, y.first) * kC[0];
  for (std::size_t o = 1U; o < kRows; ++o) {
    loss = loss + (bt::Value<double>(&tape, y.first + static_cast<bt::Index>(o)) * kC[o]);
  }
  l.loss = loss;
  return l;
}

void a_layer_over_inputs_skips_their_gradient(bt_test::Context& t) {
  bt::FixedTape<double, 48, 32>& leaves = g_d0;
  bt::FixedTape<double, 48, 32>& inputs = g_d1;
  const Layer a = record_layer(leaves, false);
  const Layer b = record_layer(inputs, true);
  BT_CHECK(t, (leaves.backward(a.loss) == bt::Status::kOk) && (inputs.backward(b.loss) == bt::Status::kOk));
  // The weights and biases: closed form c_o x_k and c_o, the same bits on
  // both tapes.
  long wrong = 0;
  for (std::size_t o = 0U; o < kRows; ++o) {
    for (std::size_t k = 0U; k < kCols; ++k) {
      const bt::Index i = a.w + static_cast<bt::Index>((o * kCols) + k);
      wrong += (leaves.grad(i) == kC[o] * kX[k]) ? 0 : 1;
      wrong += same(leaves.grad(i), inputs.grad(i)) ? 0 : 1;
    }
    wrong += (inputs.grad(b.b + static_cast<bt::Index>(o)) == kC[o]) ? 0 : 1;
  }
  BT_CHECK(t, wrong == 0);
  // Leaves get sum_o c_o W[o][k]; inputs get nothing: their gradient slots
  // are never written (the skipped side of the backward).
  for (std::size_t k = 0U; k < kCols; ++k) {
    const bt::Index i = a.x + static_cast<bt::Index>(k);
    double want = 0.0;
    for (std::size_t o = 0U; o < kRows; ++o) {
      want += kC[o] * kW[o][k];
    }
    BT_CHECK_CLOSE(t, leaves.grad(i), want, 1e-15, 1e-15);
    BT_CHECK(t, inputs.grads()[i] == 0.0);
    BT_CHECK(t, inputs.grad(i) == 0.0);
  }
}

void a_list_with_one_leaf_gets_every_gradient(bt_test::Context& t) {
  // Two runs: two inputs, then one ordinary leaf. The list is not one of
  // inputs only, so the leaf gets its gradient (w2), the weights theirs.
  bt::FixedTape<double, 48, 32>& tape = g_d0;
  tape.reset();
  const bt::Value<double> w0 = tape.param(0.5);
  const bt::Value<double> w1 = tape.param(-2.0);
  const bt::Value<double> w2 = tape.param(3.0);
  const bt::Value<double> x0 = tape.input(1.5);
  const bt::Value<double> x1 = tape.input(-0.5);
  const bt::Value<double> z = tape.leaf(0.25);
  const bt::View parts[2] = {{x0.index(), 2U}, {z.index(), 1U}};
  const bt::ViewList list = bt::view_list(tape, parts, 2U);
  const bt::View y = bt::matvec(tape, w0.index(), 1U, list, bt::kNoIndex);
  BT_CHECK(t, (y.count == 1U) && (x1.index() == x0.index() + 1U));
  BT_CHECK(t, tape.backward(bt::Value<double>(&tape, y.first)) == bt::Status::kOk);
  BT_CHECK(t, (w0.grad() == 1.5) && (w1.grad() == -0.5) && (w2.grad() == 0.25));
  BT_CHECK(t, z.grad() == 3.0);
  // A list of inputs only, in two runs, over a frozen-weight layer: its
  // backward has nothing to do, the slots stay 0.
  static const float kFrozen[3] = {1.0F, 2.0F, 3.0F};
  bt::FixedTape<float, 48, 32>& f = g_f0;
  f.reset();
  const bt::Value<float> a0 = f.input(1.0F);
  const bt::Value<float> a1 = f.input(2.0F);
  const bt::Value<float> a2 = f.input(-1.0F);
  const bt::View runs[2] = {{a0.index(), 1U}, {a1.index(), 2U}};
  const bt::View fy = bt::matvec_frozen(f, bt::FrozenMatrix{bt::frozen_f32(kFrozen), 1U, 3U}, bt::view_list(f, runs, 2U), nullptr);
  BT_CHECK(t, (fy.count == 1U) && (f.value(fy.first) == 2.0F));
  BT_CHECK(t, f.backward(bt::Value<float>(&f, fy.first)) == bt::Status::kOk);
  BT_CHECK(t, (f.grads()[a0.index()] == 0.0F) && (f.grads()[a1.index()] == 0.0F) && (f.grads()[a2.index()] == 0.0F));
}

// --- fused activations -----------------------------------------------------------

// A 4 x 5 layer with bias on 5 leaves, float (the kernels' type on every
// target), then the loss sum_o c_o act(y_o): recorded once with the
// activation fused into the rows and once as a matvec plus activation
// nodes. Pre-activations: some negative, one exactly 0 (ReLU's kink).
constexpr std::size_t kFr = 4U;
constexpr std::size_t kFc = 5U;

struct Fused {
  bt::View y;
  bt::Value<float> loss;
};

template <bt::Op Act>
Fused record_fused(bt::Tape<float>& tape, bool fused) {
  tape.reset();
  const float w[kFr][kFc] = {{0.5F, -1.0F, 0.25F, 2.0F, -0.75F},
                             {1.5F, 0.5F, -2.0F, 0.125F, 1.0F},
                             {-0.5F, 0.0F, 0.0F, 0.0F, 0.0F},  // pre = -0.5 x0 + 1.0: 0 at x0 = 2
                             {0.3F, -0.7F, 1.1F, -1.3F, 0.9F}};
  const float b[kFr] = {0.1F, -3.0F, 1.0F, 0.2F};
  const float x[kFc] = {2.0F, -0.5F, 1.25F, 0.75F, -1.5F};
  const float c[kFr] = {1.0F, -0.5F, 2.0F, 0.75F};
  for (const auto& row : w) {
    for (float v : row) {
      static_cast<void>(tape.param(v));
    }
  }
  for (float v : b) {
    static_cast<void>(tape.param(v));
  }
  const bt::Index first_x = static_cast<bt::Index>(tape.size());
  for (float v : x) {
    static_cast<void>(tape.leaf(v));
  }
  const bt::View xv{first_x, static_cast<bt::Index>(kFc)};
  const bt::ViewList list = bt::view_list(tape, &xv, 1U);
  Fused out{};
  if (fused) {
    out.y = bt::matvec<Act>(tape, 0U, static_cast<bt::Index>(kFr), list, static_cast<bt::Index>(kFr * kFc));
  } else {
    const bt::View pre = bt::matvec(tape, 0U, static_cast<bt::Index>(kFr), list, static_cast<bt::Index>(kFr * kFc));
    out.y = bt::record_view(tape, pre.count, [&](bt::Index o) {
      const bt::Value<float> v(&tape, pre.first + o);
      return (Act == bt::Op::kRelu) ? bt::relu(v) : ((Act == bt::Op::kTanh) ? bt::tanh(v) : bt::sigmoid(v));
    });
  }
  bt::Value<float> loss = bt::Value<float>(&tape, out.y.first) * c[0];
  for (std::size_t o = 1U; o < kFr; ++o) {
    loss = loss + (bt::Value<float>(&tape, out.y.first + static_cast<bt::Index>(o)) * c[o]);
  }
  out.loss = loss;
  return out;
}

template <bt::Op Act>
void fused_rows_are_the_two_nodes_t(bt_test::Context& t, const char* name) {
  t.test_name = name;
  bt::FixedTape<float, 48, 32>& two = g_f0;
  bt::FixedTape<float, 48, 32>& one = g_f1;
  const Fused a = record_fused<Act>(two, false);
  const Fused b = record_fused<Act>(one, true);
  BT_CHECK(t, (a.y.count == kFr) && (b.y.count == kFr));
  // One node per output instead of two.
  BT_CHECK(t, one.size() + kFr == two.size());
  BT_CHECK(t, bt::node_op(one, b.y.first) == bt::FusedOps::op<typename bt::detail::FusedRowOf<Act>::Type>());
  BT_CHECK(t, (two.backward(a.loss) == bt::Status::kOk) && (one.backward(b.loss) == bt::Status::kOk));
  long wrong = 0;
  for (std::size_t o = 0U; o < kFr; ++o) {
    wrong += same_bits(two.value(a.y.first + static_cast<bt::Index>(o)), one.value(b.y.first + static_cast<bt::Index>(o))) ? 0 : 1;
  }
  // Every parameter and leaf gradient: the same bits.
  const std::size_t sources = (kFr * kFc) + kFr + kFc;
  for (bt::Index i = 0U; i < sources; ++i) {
    wrong += same_bits(two.grad(i), one.grad(i)) ? 0 : 1;
  }
  BT_CHECK(t, wrong == 0);
  BT_CHECK(t, same_bits(a.loss.value(), b.loss.value()));
}

void fused_rows_are_the_two_nodes(bt_test::Context& t) {
  fused_rows_are_the_two_nodes_t<bt::Op::kRelu>(t, "relu");
  fused_rows_are_the_two_nodes_t<bt::Op::kTanh>(t, "tanh");
  fused_rows_are_the_two_nodes_t<bt::Op::kSigmoid>(t, "sigmoid");
}

// The fused ReLU layer against its closed form (double): rows with a
// non-positive pre-activation (row 2 is exactly 0 there) pass nothing; the
// others pass c_o x_k to their weights, c_o to their bias and c_o w_ok to x.
void fused_relu_closed_form(bt_test::Context& t) {
  bt::FixedTape<float, 48, 32>& tape = g_f0;
  const Fused f = record_fused<bt::Op::kRelu>(tape, true);
  BT_CHECK(t, tape.backward(f.loss) == bt::Status::kOk);
  const double x[kFc] = {2.0, -0.5, 1.25, 0.75, -1.5};
  const double c[kFr] = {1.0, -0.5, 2.0, 0.75};
  double dx[kFc] = {};
  long wrong = 0;
  for (std::size_t o = 0U; o < kFr; ++o) {
    double pre = static_cast<double>(tape.value(static_cast<bt::Index>((kFr * kFc) + o)));
    for (std::size_t k = 0U; k < kFc; ++k) {
      pre += static_cast<double>(tape.value(static_cast<bt::Index>((o * kFc) + k))) * x[k];
    }
    const bool on = pre > 0.0;
    const double y = on ? pre : 0.0;
    BT_CHECK_CLOSE(t, tape.value(f.y.first + static_cast<bt::Index>(o)), y, 1e-6, 1e-6);
    for (std::size_t k = 0U; k < kFc; ++k) {
      const double g = on ? (c[o] * x[k]) : 0.0;
      wrong += bt_test::near(tape.grad(static_cast<bt::Index>((o * kFc) + k)), g, 1e-6, 0.0) ? 0 : 1;
      dx[k] += on ? (c[o] * static_cast<double>(tape.value(static_cast<bt::Index>((o * kFc) + k)))) : 0.0;
    }
    wrong += (tape.grad(static_cast<bt::Index>((kFr * kFc) + o)) == static_cast<float>(on ? c[o] : 0.0)) ? 0 : 1;
  }
  BT_CHECK(t, tape.value(f.y.first + 2U) == 0.0F);  // the kink
  for (std::size_t k = 0U; k < kFc; ++k) {
    wrong += bt_test::near(tape.grad(static_cast<bt::Index>((kFr * kFc) + kFr + k)), dx[k], 1e-6, 1e-7) ? 0 : 1;
  }
  BT_CHECK(t, wrong == 0);
}

// nn::Linear records one node per output, and forward<A> compiles the
// activation in: the same values and gradients as the run-time choice;
// a mismatching A is refused with nothing recorded.
void linear_fuses_its_activation(bt_test::Context& t) {
  bt::FixedTape<double, 48, 32>& tape = g_d0;
  tape.reset();
  nn::LinearOptions o{};
  o.in = 3U;
  o.out = 2U;
  o.act = nn::Activation::kTanh;
  nn::Rng rng(5U);
  nn::Linear<double> layer;
  BT_CHECK(t, layer.create(tape, o, rng));
  BT_CHECK(t, nn::Linear<double>::nodes(o) == 2U);
  const bt::Index x = static_cast<bt::Index>(tape.size());
  static_cast<void>(tape.input(0.5));
  static_cast<void>(tape.input(-1.0));
  static_cast<void>(tape.input(2.0));
  const bt::Mark m = tape.mark();
  const bt::View run = layer.forward(tape, bt::View{x, 3U});
  const bt::View fixed = layer.forward<nn::Activation::kTanh>(tape, bt::View{x, 3U});
  BT_CHECK(t, (run.count == 2U) && (fixed.count == 2U));
  BT_CHECK(t, bt::node_op(tape, run.first) == bt::FusedOps::op<bt::rows::MatRowTanh>());
  for (bt::Index k = 0U; k < 2U; ++k) {
    double pre = tape.value(layer.bias + k);
    for (bt::Index j = 0U; j < 3U; ++j) {
      pre += tape.value(layer.weight + (k * 3U) + j) * tape.value(x + j);
    }
    BT_CHECK_CLOSE(t, tape.value(run.first + k), std::tanh(pre), 1e-15, 1e-15);
    BT_CHECK(t, tape.value(run.first + k) == tape.value(fixed.first + k));
  }
  const std::size_t before = tape.size();
  const bt::View wrong = layer.forward<nn::Activation::kRelu>(tape, bt::View{x, 3U});
  BT_CHECK(t, (wrong.count == 0U) && (tape.size() == before));
  BT_CHECK(t, tape.status() == bt::Status::kInvalidArgument);
  tape.clear_status();
  BT_CHECK(t, tape.rewind(m) == bt::Status::kOk);
}

// A fused layer on a tape one node or one slot short: refused with
// kCapacityExceeded, nothing recorded (no row, no descriptor slot), as
// matvec().
void fused_rows_overflow_cleanly(bt_test::Context& t) {
  alignas(32) static unsigned char buffer[bt::Tape<float>::bytes_required(16U, 16U)];
  const std::size_t nodes = 6U + 2U + 3U;  // 6 weights, 2 inputs, 3 rows
  const std::size_t slots = 3U + 4U;       // a one-run list, the descriptor
  for (int shortage = 0; shortage < 3; ++shortage) {
    bt::Tape<float> tape(buffer, sizeof(buffer), nodes - ((shortage == 1) ? 1U : 0U),
                         slots - ((shortage == 2) ? 1U : 0U));
    for (int i = 0; i < 6; ++i) {
      static_cast<void>(tape.param(0.5F * static_cast<float>(i)));
    }
    const bt::Value<float> x = tape.input(1.0F);
    static_cast<void>(tape.input(2.0F));
    const bt::View xv{x.index(), 2U};
    const bt::ViewList list = bt::view_list(tape, &xv, 1U);
    const std::size_t size = tape.size();
    const std::size_t used = tape.usage().slots;
    const bt::View y = bt::matvec<bt::Op::kSigmoid>(tape, 0U, 3U, list, bt::kNoIndex);
    if (shortage == 0) {
      BT_CHECK(t, (y.count == 3U) && (tape.status() == bt::Status::kOk) && (tape.size() == nodes));
      BT_CHECK_CLOSE(t, tape.value(y.first + 1U), 1.0 / (1.0 + std::exp(-(1.0 * 1.0 + 1.5 * 2.0))), 1e-6, 0.0);
    } else {
      BT_CHECK(t, (y.count == 0U) && (tape.status() == bt::Status::kCapacityExceeded));
      BT_CHECK(t, (tape.size() == size) && (tape.usage().slots == used));
    }
  }
}

// --- a matvec's rows as one block ------------------------------------------------

// Two layers back to back (layer 2's rows right after layer 1's, no node
// between): the block of layer 2 must stop at its row 0 and leave layer
// 1's rows to their own block. h = W1 x (3 rows), y = W2 h (2 rows),
// loss = y0 - 2 y1; all linear, so the gradients are closed forms.
void blocks_stop_at_their_first_row(bt_test::Context& t) {
  bt::FixedTape<double, 48, 32>& tape = g_d0;
  tape.reset();
  const double w1[3][2] = {{1.0, 2.0}, {-1.0, 0.5}, {0.25, -3.0}};
  const double w2[2][3] = {{2.0, -1.0, 0.5}, {1.5, 0.25, -2.0}};
  const double x[2] = {0.75, -1.25};
  for (const auto& r : w1) {
    for (double v : r) {
      static_cast<void>(tape.param(v));
    }
  }
  for (const auto& r : w2) {
    for (double v : r) {
      static_cast<void>(tape.param(v));
    }
  }
  const bt::Value<double> x0 = tape.leaf(x[0]);
  static_cast<void>(tape.leaf(x[1]));
  const bt::View xv{x0.index(), 2U};
  const bt::View h = bt::matvec(tape, 0U, 3U, bt::view_list(tape, &xv, 1U), bt::kNoIndex);
  const bt::View y = bt::matvec(tape, 6U, 2U, bt::view_list(tape, &h, 1U), bt::kNoIndex);
  BT_CHECK(t, y.first == h.first + 3U);
  const bt::Value<double> loss = bt::Value<double>(&tape, y.first) - (bt::Value<double>(&tape, y.first + 1U) * 2.0);
  BT_CHECK(t, tape.backward(loss) == bt::Status::kOk);
  const double c[2] = {1.0, -2.0};
  long wrong = 0;
  double dh[3] = {};
  for (std::size_t o = 0U; o < 2U; ++o) {
    for (std::size_t k = 0U; k < 3U; ++k) {
      wrong += bt_test::near(tape.grad(static_cast<bt::Index>(6U + (o * 3U) + k)), c[o] * tape.value(h.first + static_cast<bt::Index>(k)), 1e-15, 0.0) ? 0 : 1;
      dh[k] += c[o] * w2[o][k];
    }
  }
  for (std::size_t j = 0U; j < 3U; ++j) {
    wrong += bt_test::near(tape.grad(h.first + static_cast<bt::Index>(j)), dh[j], 1e-15, 0.0) ? 0 : 1;
    for (std::size_t k = 0U; k < 2U; ++k) {
      wrong += bt_test::near(tape.grad(static_cast<bt::Index>((j * 2U) + k)), dh[j] * x[k], 1e-15, 1e-300) ? 0 : 1;
    }
  }
  for (std::size_t k = 0U; k < 2U; ++k) {
    double want = 0.0;
    for (std::size_t j = 0U; j < 3U; ++j) {
      want += dh[j] * w1[j][k];
    }
    wrong += bt_test::near(tape.grad(x0.index() + static_cast<bt::Index>(k)), want, 1e-14, 1e-300) ? 0 : 1;
  }
  BT_CHECK(t, wrong == 0);

  // A root in the middle of a layer: row 1 of h. Only row 1's weights get
  // x; the rows below it (row 0) are reached by no one and the rows above
  // are not swept.
  tape.zero_grad();
  BT_CHECK(t, tape.backward(bt::Value<double>(&tape, h.first + 1U)) == bt::Status::kOk);
  wrong = 0;
  for (std::size_t j = 0U; j < 3U; ++j) {
    for (std::size_t k = 0U; k < 2U; ++k) {
      wrong += (tape.grad(static_cast<bt::Index>((j * 2U) + k)) == ((j == 1U) ? x[k] : 0.0)) ? 0 : 1;
    }
  }
  wrong += ((x0.grad() == w1[1][0]) && (tape.grad(x0.index() + 1U) == w1[1][1])) ? 0 : 1;
  BT_CHECK(t, wrong == 0);
}

// Below stop_gradient() nothing is swept, a block included: a layer over a
// frozen layer's outputs gives its weights their gradient, the lower layer
// none.
void blocks_stop_at_the_gradient_stop(bt_test::Context& t) {
  bt::FixedTape<double, 48, 32>& tape = g_d0;
  tape.reset();
  for (int i = 0; i < 6; ++i) {
    static_cast<void>(tape.param(0.5 + static_cast<double>(i)));
  }
  const bt::Value<double> x0 = tape.input(1.0);
  static_cast<void>(tape.input(-2.0));
  const bt::View xv{x0.index(), 2U};
  const bt::View h = bt::matvec(tape, 0U, 2U, bt::view_list(tape, &xv, 1U), bt::kNoIndex);  // W1: params 0..3
  bt::stop_gradient(tape);
  const bt::View y = bt::matvec(tape, 4U, 1U, bt::view_list(tape, &h, 1U), bt::kNoIndex);  // W2: params 4, 5
  BT_CHECK(t, tape.backward(bt::Value<double>(&tape, y.first)) == bt::Status::kOk);
  BT_CHECK(t, (tape.grad(4U) == tape.value(h.first)) && (tape.grad(5U) == tape.value(h.first + 1U)));
  long wrong = 0;
  for (bt::Index i = 0U; i < 4U; ++i) {
    wrong += (tape.grad(i) == 0.0) ? 0 : 1;
  }
  BT_CHECK(t, wrong == 0);
}

const bt_test::TestCase kCases[] = {
    {"inputs_are_leaves_without_gradient", inputs_are_leaves_without_gradient},
    {"a_layer_over_inputs_skips_their_gradient", a_layer_over_inputs_skips_their_gradient},
    {"a_list_with_one_leaf_gets_every_gradient", a_list_with_one_leaf_gets_every_gradient},
    {"fused_rows_are_the_two_nodes", fused_rows_are_the_two_nodes},
    {"fused_relu_closed_form", fused_relu_closed_form},
    {"linear_fuses_its_activation", linear_fuses_its_activation},
    {"fused_rows_overflow_cleanly", fused_rows_overflow_cleanly},
    {"blocks_stop_at_their_first_row", blocks_stop_at_their_first_row},
    {"blocks_stop_at_the_gradient_stop", blocks_stop_at_the_gradient_stop},
};

}  // namespace

BT_TEST_MAIN("sweep", kCases)
