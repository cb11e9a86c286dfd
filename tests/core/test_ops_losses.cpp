// SPDX-License-Identifier: Apache-2.0
// The ops linked on use (gelu_tanh, silu, abs, leaky_relu, bce_with_logits,
// huber, reduce_max) and the losses of nn/losses.hpp against PyTorch 1.13
// (tests/golden/ops_losses_golden.hpp, made by
// tools/golden/core/gen_ops_losses_golden.py): values and gradients, FP64
// to 1e-10 and FP32 (against PyTorch's float32) to 1e-4, both relative to
// max(1, |expected|); NaN and infinities exactly; reduce_max bit for bit.
// Then the losses as an outsider uses them: misuse records nothing, and
// each records exactly the nodes and slots its plan states.
#include <burtorch/burtorch.hpp>
#include <burtorch/nn/nn.hpp>

#include <cmath>
#include <cstddef>

#include "golden/ops_losses_golden.hpp"
#include "harness.hpp"

namespace bt = burtorch;
namespace nn = burtorch::nn;
namespace gol = golden_ops_losses;

namespace {

constexpr double kTol64 = 1e-10;
constexpr double kTol32 = 1e-4;

bt::FixedTape<double, 64> g_tape64;
bt::FixedTape<float, 64> g_tape32;

// got agrees with PyTorch's want: the same NaN or infinity, or within tol
// relative to max(1, |want|).
bool agrees(double got, double want, double tol) {
  if (std::isnan(want)) {
    return std::isnan(got);
  }
  if (std::isinf(want)) {
    return got == want;  // exact: an infinity of the same sign
  }
  return std::isfinite(got) && (std::fabs(got - want) <= tol * std::fmax(1.0, std::fabs(want)));
}

// Bit for bit, but -0 == +0 (a leaf's gradient accumulates from +0).
bool same(double got, double want) {
  return (std::isnan(got) && std::isnan(want)) || (got == want);  // exact by design
}
// Bit for bit, sign of zero included.
bool same_bits(double got, double want) { return same(got, want) && (std::signbit(got) == std::signbit(want)); }

template <class T>
bt::Value<T> apply(gol::Code op, bt::Value<T> x, T c) {
  switch (op) {
    case gol::kGeluTanh:
      return bt::gelu_tanh(x);
    case gol::kSilu:
      return bt::silu(x);
    case gol::kAbs:
      return bt::abs(x);
    case gol::kLeakyRelu:
      return bt::leaky_relu(x, c);
    case gol::kBceWithLogits:
      return bt::bce_with_logits(x, c);
    default:
      return bt::huber(x, c);
  }
}

const char* const kOpNames[] = {"gelu_tanh", "silu", "abs", "leaky_relu", "bce_with_logits", "huber"};

template <class T>
void points(bt_test::Context& t, bt::Tape<T>& tape, bool fp32) {
  for (const gol::Point& p : gol::kPoints) {
    t.test_name = kOpNames[p.op];
    tape.reset();
    // A parameter before the input: the op's operand is not node 0.
    static_cast<void>(tape.leaf(T(3)));
    const bt::Value<T> x = tape.leaf(static_cast<T>(p.x));
    const bt::Value<T> y = apply(p.op, x, static_cast<T>(p.c));
    BT_CHECK(t, tape.backward(y) == bt::Status::kOk);
    const double want_value = fp32 ? p.value32 : p.value;
    const double want_grad = fp32 ? p.grad32 : p.grad;
    const double tol = fp32 ? kTol32 : kTol64;
    BT_CHECK(t, agrees(static_cast<double>(y.value()), want_value, tol));
    BT_CHECK(t, agrees(static_cast<double>(x.grad()), want_grad, tol));
  }
  t.test_name = fp32 ? "points_fp32" : "points_fp64";
}

void points_fp64(bt_test::Context& t) { points(t, g_tape64, false); }
void points_fp32(bt_test::Context& t) { points(t, g_tape32, true); }

// Every window as a run of handles, as a list (the leaves made in reverse
// order) and as a run read in place (reduce_max(tape, View)).
template <class T>
void windows(bt_test::Context& t, bt::Tape<T>& tape, bool fp32) {
  t.test_name = fp32 ? "windows_fp32" : "windows_fp64";
  for (const gol::Window& w : gol::kWindows) {
    for (int layout = 0; layout < 3; ++layout) {
      tape.reset();
      bt::Value<T> xs[16];
      for (std::size_t k = 0U; k < w.n; ++k) {
        const std::size_t at = (layout == 1) ? (w.n - 1U - k) : k;
        xs[at] = tape.leaf(static_cast<T>(gol::kWindowValues[w.first + at]));
      }
      const bt::Value<T> m =
          (layout == 2) ? bt::reduce_max(tape, bt::View{xs[0].index(), w.n}) : bt::reduce_max(xs, w.n);
      BT_CHECK(t, tape.backward(m) == bt::Status::kOk);
      BT_CHECK(t, same_bits(static_cast<double>(m.value()), fp32 ? w.value32 : w.value));
      for (std::size_t k = 0U; k < w.n; ++k) {
        const double want = fp32 ? gol::kWindowGrads32[w.first + k] : gol::kWindowGrads[w.first + k];
        BT_CHECK(t, same(static_cast<double>(xs[k].grad()), want));
      }
    }
  }
}

void windows_fp64(bt_test::Context& t) { windows(t, g_tape64, false); }
void windows_fp32(bt_test::Context& t) { windows(t, g_tape32, true); }

template <class T>
bt::Value<T> call_loss(bt::Tape<T>& tape, gol::LossKind kind, bt::View pred, const T* targets, T delta) {
  if (kind == gol::kBce) {
    return nn::binary_cross_entropy_with_logits(tape, pred, targets);
  }
  if (kind == gol::kHuberLoss) {
    return nn::huber(tape, pred, targets, delta);
  }
  return nn::l1(tape, pred, targets);
}

template <class T>
std::size_t plan_nodes(gol::LossKind kind, std::size_t n) {
  return (kind == gol::kBce) ? nn::binary_cross_entropy_with_logits_nodes(n)
                             : ((kind == gol::kHuberLoss) ? nn::huber_nodes(n) : nn::l1_nodes(n));
}
template <class T>
std::size_t plan_slots(gol::LossKind kind, std::size_t n) {
  return (kind == gol::kBce) ? nn::binary_cross_entropy_with_logits_slots<T>(n)
                             : ((kind == gol::kHuberLoss) ? nn::huber_slots<T>(n) : nn::l1_slots(n));
}

const char* const kLossNames[] = {"binary_cross_entropy_with_logits", "huber", "l1"};

template <class T>
void losses(bt_test::Context& t, bt::Tape<T>& tape, bool fp32) {
  for (const gol::LossCase& c : gol::kLossCases) {
    t.test_name = kLossNames[c.kind];
    tape.reset();
    static_cast<void>(tape.leaf(T(-1)));  // the predictions do not start at node 0
    T targets[16];
    const bt::Index first = static_cast<bt::Index>(tape.size());
    for (std::size_t i = 0U; i < c.n; ++i) {
      static_cast<void>(tape.leaf(static_cast<T>(gol::kLossData[c.first + i])));
      targets[i] = static_cast<T>(gol::kLossData[c.first + c.n + i]);
    }
    const std::size_t size = tape.size();
    const bt::Value<T> loss = call_loss(tape, c.kind, bt::View{first, c.n}, targets, static_cast<T>(c.delta));
    // Exactly the nodes and slots the plan states.
    BT_CHECK(t, tape.size() - size == plan_nodes<T>(c.kind, c.n));
    BT_CHECK(t, tape.usage().slots == plan_slots<T>(c.kind, c.n));
    BT_CHECK(t, tape.backward(loss) == bt::Status::kOk);
    const double tol = fp32 ? kTol32 : kTol64;
    BT_CHECK(t, agrees(static_cast<double>(loss.value()), fp32 ? c.value32 : c.value, tol));
    for (std::size_t i = 0U; i < c.n; ++i) {
      const double want = fp32 ? gol::kLossGrads32[(c.first / 2U) + i] : gol::kLossGrads[(c.first / 2U) + i];
      BT_CHECK(t, agrees(static_cast<double>(tape.grad(first + static_cast<bt::Index>(i))), want, tol));
    }
  }
  t.test_name = fp32 ? "losses_fp32" : "losses_fp64";
}

void losses_fp64(bt_test::Context& t) { losses(t, g_tape64, false); }
void losses_fp32(bt_test::Context& t) { losses(t, g_tape32, true); }

// --- misuse ----------------------------------------------------------------------
// Each misuse reports `want`, returns an invalid value and records nothing.
template <class Call>
void refused(bt_test::Context& t, bt::Tape<double>& tape, Call call, bt::Status want) {
  tape.clear_status();
  const std::size_t size = tape.size();
  const std::size_t slots = tape.usage().slots;
  const bt::Value<double> loss = call();
  BT_CHECK(t, !loss.valid());
  BT_CHECK(t, loss.tape() == &tape);
  BT_CHECK(t, tape.status() == want);
  BT_CHECK(t, tape.size() == size);
  BT_CHECK(t, tape.usage().slots == slots);
}

void misuse(bt_test::Context& t) {
  bt::Tape<double>& tape = g_tape64;
  tape.reset();
  const double targets[3] = {0.0, 1.0, 0.5};
  const bt::Index first = static_cast<bt::Index>(tape.size());
  for (int i = 0; i < 3; ++i) {
    static_cast<void>(tape.leaf(0.25 * i));
  }
  const bt::View pred{first, 3U};
  using S = bt::Status;
  t.test_name = "null_targets";
  refused(t, tape, [&] { return nn::binary_cross_entropy_with_logits(tape, pred, nullptr); }, S::kInvalidArgument);
  refused(t, tape, [&] { return nn::huber(tape, pred, static_cast<const double*>(nullptr)); }, S::kInvalidArgument);
  refused(t, tape, [&] { return nn::l1(tape, pred, nullptr); }, S::kInvalidArgument);
  t.test_name = "empty_view";
  refused(t, tape, [&] { return nn::l1(tape, bt::View{first, 0U}, targets); }, S::kInvalidArgument);
  refused(t, tape, [&] { return nn::binary_cross_entropy_with_logits(tape, bt::kNoView, targets); },
          S::kInvalidArgument);
  refused(t, tape, [&] { return nn::huber(tape, bt::kNoView, targets); }, S::kInvalidArgument);
  t.test_name = "view_past_the_end";
  refused(t, tape, [&] { return nn::l1(tape, bt::View{first + 1U, 3U}, targets); }, S::kInvalidHandle);
  refused(t, tape, [&] { return nn::huber(tape, bt::View{first + 3U, 1U}, targets); }, S::kInvalidHandle);
  refused(t, tape, [&] { return nn::binary_cross_entropy_with_logits(tape, bt::View{bt::kNoIndex - 1U, 1U}, targets); },
          S::kInvalidHandle);
  t.test_name = "huber_delta";
  refused(t, tape, [&] { return nn::huber(tape, pred, targets, 0.0); }, S::kInvalidArgument);
  refused(t, tape, [&] { return nn::huber(tape, pred, targets, -1.0); }, S::kInvalidArgument);
  refused(t, tape, [&] { return nn::huber(tape, pred, targets, std::nan("")); }, S::kInvalidArgument);
  // A tape in error records nothing and keeps its first error.
  t.test_name = "failed_tape";
  tape.clear_status();
  static_cast<void>(tape.report(S::kForeignValue));
  const std::size_t size = tape.size();
  BT_CHECK(t, !nn::l1(tape, pred, targets).valid());
  BT_CHECK(t, !nn::huber(tape, pred, targets, -1.0).valid());
  BT_CHECK(t, !nn::binary_cross_entropy_with_logits(tape, pred, nullptr).valid());
  BT_CHECK(t, tape.status() == S::kForeignValue && tape.size() == size && tape.usage().slots == 0U);
  tape.clear_status();
  t.test_name = "misuse";
}

// Room for exactly the plan: the loss fits; one node or one slot less is
// kCapacityExceeded with nothing recorded. (3 leaves, 3 elements.)
template <std::size_t kNodes, std::size_t kSlots, std::size_t kUsed = kSlots, class Call>
void fits_exactly(bt_test::Context& t, Call call, bool expect_ok) {
  static bt::FixedTape<double, kNodes, kSlots> tape;
  tape.reset();
  for (int i = 0; i < 3; ++i) {
    static_cast<void>(tape.leaf(0.5 * i - 0.25));
  }
  const bt::Value<double> loss = call(tape, bt::View{0U, 3U});
  BT_CHECK(t, loss.valid() == expect_ok);
  if (expect_ok) {
    BT_CHECK(t, tape.size() == kNodes && tape.usage().slots == kUsed && tape.status() == bt::Status::kOk);
    BT_CHECK(t, tape.backward(loss) == bt::Status::kOk);
  } else {
    BT_CHECK(t, tape.status() == bt::Status::kCapacityExceeded);
    BT_CHECK(t, tape.size() == 3U && tape.usage().slots == 0U);
  }
}

void capacity(bt_test::Context& t) {
  static const double targets[3] = {1.0, 0.0, 0.5};
  constexpr std::size_t kC = bt::Recorder<double>::kConstantSlots;
  auto bce = [](bt::Tape<double>& tape, bt::View v) { return nn::binary_cross_entropy_with_logits(tape, v, targets); };
  auto hub = [](bt::Tape<double>& tape, bt::View v) { return nn::huber(tape, v, targets, 0.5); };
  auto mae = [](bt::Tape<double>& tape, bt::View v) { return nn::l1(tape, v, targets); };
  static_assert(nn::binary_cross_entropy_with_logits_slots<double>(3U) == 3U * kC, "one constant per element");
  static_assert(nn::huber_slots<float>(3U) == 3U, "a float constant takes one slot");
  t.test_name = "bce_capacity";
  constexpr std::size_t kBceNodes = 3U + nn::binary_cross_entropy_with_logits_nodes(3U);
  constexpr std::size_t kBceSlots = nn::binary_cross_entropy_with_logits_slots<double>(3U);
  fits_exactly<kBceNodes, kBceSlots>(t, bce, true);
  fits_exactly<kBceNodes - 1U, kBceSlots>(t, bce, false);
  fits_exactly<kBceNodes, kBceSlots - 1U>(t, bce, false);
  t.test_name = "huber_capacity";
  constexpr std::size_t kHuberNodes = 3U + nn::huber_nodes(3U);
  constexpr std::size_t kHuberSlots = nn::huber_slots<double>(3U);
  fits_exactly<kHuberNodes, kHuberSlots>(t, hub, true);
  fits_exactly<kHuberNodes - 1U, kHuberSlots>(t, hub, false);
  fits_exactly<kHuberNodes, kHuberSlots - 1U>(t, hub, false);
  t.test_name = "l1_capacity";
  constexpr std::size_t kL1Nodes = 3U + nn::l1_nodes(3U);
  static_assert(nn::l1_slots(3U) == 0U, "l1 stores no constant");
  fits_exactly<kL1Nodes, 1U, 0U>(t, mae, true);  // a tape of one slot: none used
  fits_exactly<kL1Nodes - 1U, 1U, 0U>(t, mae, false);
  t.test_name = "capacity";
}

const bt_test::TestCase kCases[] = {
    {"points_fp64", points_fp64},   {"points_fp32", points_fp32}, {"windows_fp64", windows_fp64},
    {"windows_fp32", windows_fp32}, {"losses_fp64", losses_fp64}, {"losses_fp32", losses_fp32},
    {"misuse", misuse},             {"capacity", capacity},
};

}  // namespace

BT_TEST_MAIN("ops_losses", kCases)
