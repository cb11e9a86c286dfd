// SPDX-License-Identifier: Apache-2.0
// Every layer refuses bad arguments before it records anything: a refused
// call returns kNoView (or false), leaves its error on the tape, and the
// tape holds the same nodes and argument slots as before the call, on a
// scalar tape and on a tape of lanes whose weights are shared through
// LaneParams. For each layer and form: one good call (it records, so the
// setup is right) and the bad ones: an input of the wrong width, a view
// that is not recorded on the tape, shared parameters that stop one short
// of the layer's, that have no gradient array, or that are empty. The
// models' losses the same way, and with a token, target or label out of
// range (each model's checks run before its first layer records).
// Then what a check cannot find before recording: a layer created on another
// tape, and a tape too small, at every node and slot capacity below what a
// good call records; the call fails part-way and must leave the tape as it
// found it (values and gradients too). Pooling and the cross-entropy the
// same way.
#include <burtorch/burtorch.hpp>
#include <burtorch/nn/nn.hpp>

#include <cstddef>
#include <cstdint>

#include "harness.hpp"

namespace bt = burtorch;
namespace nn = burtorch::nn;

namespace {

constexpr std::size_t kN = 2U;
using L = bt::Lanes<double, kN>;

// (Not built for the 16 KB boards: tests/CMakeLists.txt.)
constexpr std::size_t kNodes = 600U;
constexpr std::size_t kSlots = 600U;
constexpr std::size_t kParams = 400U;
alignas(64) unsigned char g_params[bt::Tape<double>::bytes_required(kParams, 0U, kParams)];
alignas(64) unsigned char g_scalar[bt::Tape<double>::bytes_required(kNodes, kSlots)];
alignas(64) unsigned char g_lanes[bt::Tape<L>::bytes_required(kNodes, kSlots)];

// A fresh scalar tape: the layer's parameters are created on it, then the
// inputs recorded.
bt::Tape<double> scalar_tape() { return bt::Tape<double>(g_scalar, sizeof(g_scalar), kNodes, kSlots); }
bt::Tape<double> param_tape() { return bt::Tape<double>(g_params, sizeof(g_params), kParams, 0U, kParams); }
bt::Tape<L> lane_tape() { return bt::Tape<L>(g_lanes, sizeof(g_lanes), kNodes, kSlots); }

template <class U>
bt::View inputs(bt::Tape<U>& tape, bt::Index n) {
  return bt::record_view(tape, n, [&](bt::Index i) noexcept {
    return tape.leaf(U(0.25 + (0.125 * static_cast<double>(i))));
  });
}

// The ways shared parameters can fail to hold a layer whose parameters end
// at `end` on the parameter tape: one short, no gradients, no values, empty.
enum class BadParams { kShort, kNoGrads, kNoValues, kEmpty, kCount };
bt::LaneParams<double> bad_params(bt::Tape<double>& params, BadParams how) {
  bt::LaneParams<double> p = nn::lane_params(params);
  switch (how) {
    case BadParams::kShort:
      p.count = p.count - 1U;
      break;
    case BadParams::kNoGrads:
      p.grads = nullptr;
      break;
    case BadParams::kNoValues:
      p.values = nullptr;
      break;
    default:
      p.count = 0U;
      break;
  }
  return p;
}

// A digest of the bytes of every value and gradient on the tape (FNV-1a).
template <class U>
std::uint64_t digest(const bt::Tape<U>& tape) {
  std::uint64_t h = 14695981039346656037ULL;
  const auto mix = [&h](const U* a, std::size_t n) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(a);
    for (std::size_t i = 0U; i < (n * sizeof(U)); ++i) {
      h = (h ^ bytes[i]) * 1099511628211ULL;
    }
  };
  mix(tape.values(), tape.size());
  mix(tape.grads(), tape.size());
  return h;
}

// Runs `call` on `tape` and checks it refused with `want`, recording
// nothing and changing no value or gradient. `call` returns true if it
// produced an output.
template <class U, class Call>
void refuses(bt_test::Context& t, const char* what, bt::Tape<U>& tape, bt::Status want, Call&& call) {
  const std::size_t nodes = tape.size();
  const std::size_t slots = tape.usage().slots;
  const std::uint64_t before = digest(tape);
  const bool produced = call();
  const bool same = digest(tape) == before;
  const bool ok = !produced && (tape.status() == want) && (tape.size() == nodes) && (tape.usage().slots == slots) && same;
  if (!ok) {
    bt_test::print("    refused badly: ");
    bt_test::print(what);
    bt_test::print("\n");
  }
  BT_CHECK(t, !produced);
  BT_CHECK(t, tape.status() == want);
  BT_CHECK(t, tape.size() == nodes);
  BT_CHECK(t, tape.usage().slots == slots);
  BT_CHECK(t, same);
}
// Runs `call` and checks it produced an output with the tape still good.
template <class U, class Call>
void records(bt_test::Context& t, bt::Tape<U>& tape, Call&& call) {
  const std::size_t nodes = tape.size();
  BT_CHECK(t, call());
  BT_CHECK(t, tape.status() == bt::Status::kOk);
  BT_CHECK(t, tape.size() > nodes);
}

bool produced(bt::View v) { return v.count != 0U; }
bool has_loss(bt::Value<L> v) { return v.index() != bt::kNoIndex; }
bool has_loss(bt::Value<double> v) { return v.index() != bt::kNoIndex; }

// --- the checks, one adaptor per layer -------------------------------------------
// Each adaptor provides:
//   create(tape, rng)        the layer's parameters on `tape`
//   width()                  the width of the input the cases vary
//   extra(tape)              other inputs, always good, recorded before the call
//   scalar(tape, x, e)       the scalar form on input x and extra inputs e
//   lanes(tape, p, x, e)     the lane form
// and layer_refuses runs the same cases on all of them.
// The input a case gives a layer: the recorded one, one node short, or a
// view past what the tape recorded; and what the layer must then do.
enum class Input { kGood, kShort, kPast };
bt::View case_input(bt::View x, Input k) {
  if (k == Input::kShort) {
    return bt::View{x.first, x.count - 1U};
  }
  if (k == Input::kPast) {
    return bt::View{static_cast<bt::Index>(x.first + (kNodes / 2U)), x.count};
  }
  return x;
}
template <class U, class Call>
void expect(bt_test::Context& t, const char* what, bt::Tape<U>& tape, Input k, Call&& call) {
  if (k == Input::kGood) {
    records(t, tape, call);
  } else {
    refuses(t, what, tape, (k == Input::kShort) ? bt::Status::kInvalidArgument : bt::Status::kInvalidHandle, call);
  }
}
constexpr Input kInputs[3] = {Input::kGood, Input::kShort, Input::kPast};

// A tape too small. setup(tape) records on `tape` what a call needs (a
// layer's parameters, its inputs) and returns the call. On a roomy tape the
// call records some nodes and slots; then, on tapes of the same layout
// whose node capacity (then slot capacity) stops 0, 1, ... short of that,
// the same setup fits and the call must refuse with kCapacityExceeded,
// leaving the tape as it was.
template <class U, class Setup>
void too_small(bt_test::Context& t, const char* what, unsigned char* buffer, std::size_t bytes, Setup&& setup) {
  std::size_t base_nodes = 0U;
  std::size_t base_slots = 0U;
  std::size_t nodes = 0U;
  std::size_t slots = 0U;
  {
    bt::Tape<U> tape(buffer, bytes, kNodes, kSlots);
    auto call = setup(tape);
    base_nodes = tape.size();
    base_slots = tape.usage().slots;
    BT_CHECK(t, call());
    BT_CHECK(t, tape.status() == bt::Status::kOk);
    nodes = tape.size() - base_nodes;
    slots = tape.usage().slots - base_slots;
  }
  BT_CHECK(t, nodes != 0U);
  for (std::size_t k = 0U; k < nodes; ++k) {
    bt::Tape<U> tape(buffer, bytes, base_nodes + k, kSlots);
    auto call = setup(tape);
    BT_CHECK(t, (tape.status() == bt::Status::kOk) && (tape.size() == base_nodes));
    refuses(t, what, tape, bt::Status::kCapacityExceeded, call);
  }
  for (std::size_t k = 0U; k < slots; ++k) {
    bt::Tape<U> tape(buffer, bytes, kNodes, base_slots + k);
    auto call = setup(tape);
    BT_CHECK(t, (tape.status() == bt::Status::kOk) && (tape.usage().slots == base_slots));
    refuses(t, what, tape, bt::Status::kCapacityExceeded, call);
  }
}

template <class Layer>
void layer_refuses(bt_test::Context& t) {
  // Scalar: a good call, an input of the wrong width, an input not recorded.
  for (const Input k : kInputs) {
    bt::Tape<double> tape = scalar_tape();
    Layer layer;
    nn::Rng rng(7U);
    BT_CHECK(t, layer.create(tape, rng));
    const bt::View x = case_input(inputs(tape, layer.width()), k);
    const bt::View e = layer.extra(tape);
    expect(t, "scalar input", tape, k, [&] { return layer.scalar(tape, x, e); });
  }
  // Lanes: the same, then each kind of bad shared parameters.
  bt::Tape<double> params = param_tape();
  Layer layer;
  nn::Rng rng(7U);
  BT_CHECK(t, layer.create(params, rng));
  for (const Input k : kInputs) {
    bt::Tape<L> tape = lane_tape();
    const bt::View x = case_input(inputs(tape, layer.width()), k);
    const bt::View e = layer.extra(tape);
    expect(t, "lane input", tape, k, [&] { return layer.lanes(tape, nn::lane_params(params), x, e); });
  }
  for (int b = 0; b < static_cast<int>(BadParams::kCount); ++b) {
    bt::Tape<L> tape = lane_tape();
    const bt::View x = inputs(tape, layer.width());
    const bt::View e = layer.extra(tape);
    const bt::LaneParams<double> p = bad_params(params, static_cast<BadParams>(b));
    refuses(t, "lanes, bad shared parameters", tape, bt::Status::kInvalidArgument,
            [&] { return layer.lanes(tape, p, x, e); });
  }
  // The scalar form on a tape the layer was not created on (its parameters
  // are on `params`, past the end of this one): kInvalidHandle.
  {
    bt::Tape<double> tape = scalar_tape();
    const bt::View x = inputs(tape, layer.width());
    const bt::View e = layer.extra(tape);
    BT_CHECK(t, tape.size() < params.size());
    refuses(t, "scalar, another tape", tape, bt::Status::kInvalidHandle, [&] { return layer.scalar(tape, x, e); });
  }
  // Tapes too small, scalar and lanes.
  too_small<double>(t, "scalar, tape too small", g_scalar, sizeof(g_scalar), [](bt::Tape<double>& tape) {
    Layer fresh;
    nn::Rng r(7U);
    static_cast<void>(fresh.create(tape, r));
    const bt::View x = inputs(tape, fresh.width());
    const bt::View e = fresh.extra(tape);
    return [fresh, &tape, x, e] { return fresh.scalar(tape, x, e); };
  });
  const bt::LaneParams<double> shared = nn::lane_params(params);
  too_small<L>(t, "lanes, tape too small", g_lanes, sizeof(g_lanes), [&layer, shared](bt::Tape<L>& tape) {
    const bt::View x = inputs(tape, layer.width());
    const bt::View e = layer.extra(tape);
    return [&layer, shared, &tape, x, e] { return layer.lanes(tape, shared, x, e); };
  });
}

// Layers with one input: no extra inputs.
struct NoExtra {
  template <class U>
  static bt::View extra(bt::Tape<U>& /*tape*/) {
    return bt::kNoView;
  }
};

struct LinearCase : NoExtra {
  nn::Linear<double> l;
  bool create(bt::Tape<double>& tape, nn::Rng& rng) {
    nn::LinearOptions o;
    o.in = 3U;
    o.out = 2U;
    o.act = nn::Activation::kTanh;
    return l.create(tape, o, rng);
  }
  static bt::Index width() { return 3U; }
  bool scalar(bt::Tape<double>& tape, bt::View x, bt::View /*e*/) const { return produced(l.forward(tape, x)); }
  bool lanes(bt::Tape<L>& tape, const bt::LaneParams<double>& p, bt::View x, bt::View /*e*/) const {
    return produced(l.forward(tape, p, x));
  }
};

struct LayerNormCase : NoExtra {
  nn::LayerNorm<double> n;
  bool create(bt::Tape<double>& tape, nn::Rng& rng) {
    nn::LayerNormOptions o;
    o.width = 4U;
    return n.create(tape, o, rng);
  }
  static bt::Index width() { return 4U; }
  bool scalar(bt::Tape<double>& tape, bt::View x, bt::View /*e*/) const { return produced(n.forward(tape, x)); }
  bool lanes(bt::Tape<L>& tape, const bt::LaneParams<double>& p, bt::View x, bt::View /*e*/) const {
    return produced(n.forward(tape, p, x));
  }
};

struct Conv1dCase : NoExtra {
  nn::Conv1d<double> c;
  bool create(bt::Tape<double>& tape, nn::Rng& rng) {
    nn::Conv1dOptions o;
    o.in_channels = 2U;
    o.out_channels = 2U;
    o.kernel = 2U;
    o.padding = 1U;
    return c.create(tape, o, rng);
  }
  static bt::Index width() { return 2U * 3U; }  // 3 positions of 2 channels
  bool scalar(bt::Tape<double>& tape, bt::View x, bt::View /*e*/) const { return produced(c.forward(tape, x, 3U)); }
  bool lanes(bt::Tape<L>& tape, const bt::LaneParams<double>& p, bt::View x, bt::View /*e*/) const {
    return produced(c.forward(tape, p, x, 3U));
  }
};

struct Conv2dCase : NoExtra {
  nn::Conv2d<double> c;
  bool create(bt::Tape<double>& tape, nn::Rng& rng) {
    nn::Conv2dOptions o;
    o.in_channels = 1U;
    o.out_channels = 2U;
    o.kernel_h = 2U;
    o.kernel_w = 2U;
    return c.create(tape, o, rng);
  }
  static bt::Index width() { return 3U * 3U; }
  bool scalar(bt::Tape<double>& tape, bt::View x, bt::View /*e*/) const {
    return produced(c.forward(tape, x, nn::Size2d{3U, 3U}));
  }
  bool lanes(bt::Tape<L>& tape, const bt::LaneParams<double>& p, bt::View x, bt::View /*e*/) const {
    return produced(c.forward(tape, p, x, nn::Size2d{3U, 3U}));
  }
};

// The GRU's step on input x; the extra input is the hidden state.
struct GruCase {
  nn::Gru<double> g;
  bool create(bt::Tape<double>& tape, nn::Rng& rng) {
    nn::GruOptions o;
    o.input = 2U;
    o.hidden = 3U;
    return g.create(tape, o, rng);
  }
  static bt::Index width() { return 2U; }
  template <class U>
  static bt::View extra(bt::Tape<U>& tape) {
    return bt::record_view(tape, 3U, [&](bt::Index i) noexcept { return tape.input(U(0.1 * static_cast<double>(i))); });
  }
  bool scalar(bt::Tape<double>& tape, bt::View x, bt::View h) const { return produced(g.step(tape, x, h)); }
  bool lanes(bt::Tape<L>& tape, const bt::LaneParams<double>& p, bt::View x, bt::View h) const {
    return produced(g.step(tape, p, x, h));
  }
};

// Attention over two positions: the case's input is the first, the extra
// input the second.
struct AttentionCase {
  nn::CausalSelfAttention<double> a;
  bool create(bt::Tape<double>& tape, nn::Rng& rng) {
    nn::AttentionOptions o;
    o.width = 4U;
    o.heads = 2U;
    return a.create(tape, o, rng);
  }
  static bt::Index width() { return 4U; }
  template <class U>
  static bt::View extra(bt::Tape<U>& tape) {
    return inputs(tape, 4U);
  }
  template <class U, class... P>
  bool run(bt::Tape<U>& tape, bt::View x, bt::View second, const P&... p) const {
    const bt::View xs[2] = {x, second};
    bt::View out[2] = {bt::kNoView, bt::kNoView};
    return a.forward(tape, p..., xs, 2U, out);
  }
  bool scalar(bt::Tape<double>& tape, bt::View x, bt::View e) const { return run(tape, x, e); }
  bool lanes(bt::Tape<L>& tape, const bt::LaneParams<double>& p, bt::View x, bt::View e) const {
    return run(tape, x, e, p);
  }
};

// Linear with its activation chosen at compile time (forward<A>).
struct LinearFixedCase : LinearCase {
  bool scalar(bt::Tape<double>& tape, bt::View x, bt::View /*e*/) const {
    return produced(l.forward<nn::Activation::kTanh>(tape, x));
  }
  bool lanes(bt::Tape<L>& tape, const bt::LaneParams<double>& p, bt::View x, bt::View /*e*/) const {
    return produced(l.forward<nn::Activation::kTanh>(tape, p, x));
  }
};

void linear(bt_test::Context& t) {
  layer_refuses<LinearCase>(t);
  layer_refuses<LinearFixedCase>(t);
  // forward<A> for an A other than the layer's, both input forms.
  bt::Tape<double> tape = scalar_tape();
  LinearCase c;
  nn::Rng rng(7U);
  BT_CHECK(t, c.create(tape, rng));
  const bt::View x = inputs(tape, 3U);
  refuses(t, "forward<A>, another A", tape, bt::Status::kInvalidArgument,
          [&] { return produced(c.l.forward<nn::Activation::kRelu>(tape, x)); });
  bt::Tape<double> tape2 = scalar_tape();
  BT_CHECK(t, c.create(tape2, rng));
  const bt::View x2 = inputs(tape2, 3U);
  const bt::ViewList list = bt::view_list(tape2, &x2, 1U);
  refuses(t, "forward<A>(ViewList), another A", tape2, bt::Status::kInvalidArgument,
          [&] { return produced(c.l.forward<nn::Activation::kRelu>(tape2, list)); });
}
void layer_norm(bt_test::Context& t) { layer_refuses<LayerNormCase>(t); }

// Gru::forward over two steps: no steps, a step of another width, a step
// not recorded, a tape the GRU was not created on, tapes too small.
void gru_forward(bt_test::Context& t) {
  GruCase c;
  nn::Rng rng(7U);
  const auto run = [&c](bt::Tape<double>& tape, const bt::View* xs, bt::Index steps, bt::View h0) {
    bt::View hs[2] = {bt::kNoView, bt::kNoView};
    return c.g.forward(tape, xs, steps, h0, hs);
  };
  for (int k = 0; k < 4; ++k) {
    bt::Tape<double> tape = scalar_tape();
    BT_CHECK(t, c.create(tape, rng));
    bt::View xs[2] = {inputs(tape, 2U), inputs(tape, 2U)};
    const bt::View h0 = GruCase::extra(tape);
    if (k == 0) {
      records(t, tape, [&] { return run(tape, xs, 2U, h0); });
    } else if (k == 1) {
      refuses(t, "gru forward, no steps", tape, bt::Status::kInvalidArgument, [&] { return run(tape, xs, 0U, h0); });
    } else if (k == 2) {
      xs[1] = case_input(xs[1], Input::kShort);
      refuses(t, "gru forward, short step", tape, bt::Status::kInvalidArgument, [&] { return run(tape, xs, 2U, h0); });
    } else {
      xs[1] = case_input(xs[1], Input::kPast);
      refuses(t, "gru forward, step not recorded", tape, bt::Status::kInvalidHandle,
              [&] { return run(tape, xs, 2U, h0); });
    }
  }
  {
    bt::Tape<double> params = param_tape();
    BT_CHECK(t, c.create(params, rng));
    bt::Tape<double> tape = scalar_tape();
    const bt::View xs[2] = {inputs(tape, 2U), inputs(tape, 2U)};
    const bt::View h0 = GruCase::extra(tape);
    refuses(t, "gru forward, another tape", tape, bt::Status::kInvalidHandle, [&] { return run(tape, xs, 2U, h0); });
  }
  too_small<double>(t, "gru forward, tape too small", g_scalar, sizeof(g_scalar), [](bt::Tape<double>& tape) {
    GruCase fresh;
    nn::Rng r(7U);
    static_cast<void>(fresh.create(tape, r));
    const bt::View x0 = inputs(tape, 2U);
    const bt::View x1 = inputs(tape, 2U);
    const bt::View h0 = GruCase::extra(tape);
    return [fresh, &tape, x0, x1, h0] {
      const bt::View xs[2] = {x0, x1};
      bt::View hs[2] = {bt::kNoView, bt::kNoView};
      const bool done = fresh.g.forward(tape, xs, 2U, h0, hs);
      return done || (hs[0].count != 0U) || (hs[1].count != 0U);  // a refusal leaves no outputs
    };
  });
}

// Pooling (no parameters): a good call, an input of the wrong width, one not
// recorded, tapes too small; on a scalar tape and on a tape of lanes.
template <class Pool>
void pool_refuses(bt_test::Context& t) {
  const Pool pool;
  for (const Input k : kInputs) {
    bt::Tape<double> tape = scalar_tape();
    const bt::View x = case_input(inputs(tape, Pool::width()), k);
    expect(t, "pool input", tape, k, [&] { return pool.run(tape, x); });
  }
  for (const Input k : kInputs) {
    bt::Tape<L> tape = lane_tape();
    const bt::View x = case_input(inputs(tape, Pool::width()), k);
    expect(t, "pool lane input", tape, k, [&] { return pool.run(tape, x); });
  }
  too_small<double>(t, "pool, tape too small", g_scalar, sizeof(g_scalar), [&pool](bt::Tape<double>& tape) {
    const bt::View x = inputs(tape, Pool::width());
    return [&pool, &tape, x] { return pool.run(tape, x); };
  });
  too_small<L>(t, "pool lanes, tape too small", g_lanes, sizeof(g_lanes), [&pool](bt::Tape<L>& tape) {
    const bt::View x = inputs(tape, Pool::width());
    return [&pool, &tape, x] { return pool.run(tape, x); };
  });
}
// Two channels over four positions, windows of two (not runs: a list each).
template <template <class> class P>
struct Pool1dCase {
  P<double> p;
  Pool1dCase() {
    p.options.channels = 2U;
    p.options.kernel = 2U;
  }
  static bt::Index width() { return 2U * 4U; }
  template <class U>
  bool run(bt::Tape<U>& tape, bt::View x) const {
    return produced(p.forward(tape, x, 4U));
  }
};
// One channel over 3 x 3, windows of 2 x 2 with stride 1.
template <template <class> class P>
struct Pool2dCase {
  P<double> p;
  Pool2dCase() {
    p.options.channels = 1U;
    p.options.kernel_h = 2U;
    p.options.kernel_w = 2U;
    p.options.stride_h = 1U;
    p.options.stride_w = 1U;
  }
  static bt::Index width() { return 3U * 3U; }
  template <class U>
  bool run(bt::Tape<U>& tape, bt::View x) const {
    return produced(p.forward(tape, x, nn::Size2d{3U, 3U}));
  }
};
void pools(bt_test::Context& t) {
  pool_refuses<Pool1dCase<nn::AvgPool1d>>(t);
  pool_refuses<Pool1dCase<nn::MaxPool1d>>(t);
  pool_refuses<Pool2dCase<nn::AvgPool2d>>(t);
  pool_refuses<Pool2dCase<nn::MaxPool2d>>(t);
}

// The cross-entropy over 3 logits (scalar: a target; lanes: one per lane)
// and the mean squared error: a target past the logits, logits not recorded
// or none, tapes too small.
void losses(bt_test::Context& t) {
  const bt::Index lane_targets[kN] = {2U, 0U};
  const bt::Index lane_far[kN] = {2U, 3U};
  const double mse_targets[3] = {0.5, -0.25, 1.0};
  for (int k = 0; k < 3; ++k) {
    const Input in = kInputs[k];
    bt::Tape<double> tape = scalar_tape();
    const bt::View z = case_input(inputs(tape, 3U), in);
    const bt::Status want = (in == Input::kShort) ? bt::Status::kInvalidArgument : bt::Status::kInvalidHandle;
    // (A short view makes target 2 past it.)
    if (in == Input::kGood) {
      records(t, tape, [&] { return has_loss(nn::cross_entropy(tape, z, 2U)); });
      refuses(t, "cross_entropy, target past the logits", tape, bt::Status::kInvalidArgument,
              [&] { return has_loss(nn::cross_entropy(tape, z, 3U)); });
    } else {
      refuses(t, "cross_entropy, logits", tape, want, [&] { return has_loss(nn::cross_entropy(tape, z, 2U)); });
    }
    bt::Tape<L> lanes = lane_tape();
    const bt::View zl = case_input(inputs(lanes, 3U), in);
    if (in == Input::kGood) {
      records(t, lanes, [&] { return has_loss(nn::cross_entropy(lanes, zl, lane_targets)); });
      refuses(t, "lane cross_entropy, target past the logits", lanes, bt::Status::kInvalidArgument,
              [&] { return has_loss(nn::cross_entropy(lanes, zl, lane_far)); });
    } else if (in == Input::kPast) {
      refuses(t, "lane cross_entropy, logits", lanes, bt::Status::kInvalidHandle,
              [&] { return has_loss(nn::cross_entropy(lanes, zl, lane_targets)); });
    } else {
      // a view one short: lane 0's target 2 is past it
      refuses(t, "lane cross_entropy, short logits", lanes, bt::Status::kInvalidArgument,
              [&] { return has_loss(nn::cross_entropy(lanes, zl, lane_targets)); });
    }
  }
  {
    bt::Tape<double> tape = scalar_tape();
    refuses(t, "cross_entropy, no logits", tape, bt::Status::kInvalidArgument,
            [&] { return has_loss(nn::cross_entropy(tape, bt::kNoView, 0U)); });
    bt::Tape<double> tape2 = scalar_tape();
    const bt::View past = case_input(inputs(tape2, 3U), Input::kPast);
    refuses(t, "mse, not recorded", tape2, bt::Status::kInvalidHandle,
            [&] { return has_loss(nn::mse(tape2, past, mse_targets)); });
  }
  too_small<double>(t, "cross_entropy, tape too small", g_scalar, sizeof(g_scalar), [](bt::Tape<double>& tape) {
    const bt::View z = inputs(tape, 3U);
    return [&tape, z] { return has_loss(nn::cross_entropy(tape, z, 1U)); };
  });
  too_small<L>(t, "lane cross_entropy, tape too small", g_lanes, sizeof(g_lanes), [&](bt::Tape<L>& tape) {
    const bt::View z = inputs(tape, 3U);
    return [&tape, z, &lane_targets] { return has_loss(nn::cross_entropy(tape, z, lane_targets)); };
  });
  too_small<double>(t, "mse, tape too small", g_scalar, sizeof(g_scalar), [&](bt::Tape<double>& tape) {
    const bt::View z = inputs(tape, 3U);
    return [&tape, z, &mse_targets] { return has_loss(nn::mse(tape, z, mse_targets)); };
  });
}
void conv1d(bt_test::Context& t) { layer_refuses<Conv1dCase>(t); }
void conv2d(bt_test::Context& t) { layer_refuses<Conv2dCase>(t); }
void gru(bt_test::Context& t) { layer_refuses<GruCase>(t); }
void attention(bt_test::Context& t) { layer_refuses<AttentionCase>(t); }

// The embedding's lane gather: a table the shared parameters do not hold,
// and an id past the table.
void embedding(bt_test::Context& t) {
  bt::Tape<double> params = param_tape();
  nn::Embedding<double> e;
  nn::Rng rng(3U);
  nn::EmbeddingOptions o;
  o.rows = 4U;
  o.dim = 2U;
  BT_CHECK(t, e.create(params, o, rng));
  const bt::Index ids[2 * kN] = {0U, 3U, 2U, 1U};
  {
    bt::Tape<L> tape = lane_tape();
    records(t, tape, [&] { return produced(e.gather(tape, nn::lane_params(params), ids, 2U)); });
  }
  for (int k = 0; k < static_cast<int>(BadParams::kCount); ++k) {
    bt::Tape<L> tape = lane_tape();
    const bt::LaneParams<double> p = bad_params(params, static_cast<BadParams>(k));
    refuses(t, "gather, bad shared parameters", tape, bt::Status::kInvalidArgument,
            [&] { return produced(e.gather(tape, p, ids, 2U)); });
  }
  {
    bt::Tape<L> tape = lane_tape();
    const bt::Index bad[2 * kN] = {0U, 4U, 2U, 1U};
    refuses(t, "gather, id past the table", tape, bt::Status::kInvalidArgument,
            [&] { return produced(e.gather(tape, nn::lane_params(params), bad, 2U)); });
  }
  const bt::LaneParams<double> shared = nn::lane_params(params);
  too_small<L>(t, "gather, tape too small", g_lanes, sizeof(g_lanes), [&e, shared, &ids](bt::Tape<L>& tape) {
    return [&e, shared, &ids, &tape] { return produced(e.gather(tape, shared, ids, 2U)); };
  });
}

// A frozen layer (weights in caller memory, no lane form): the View forms,
// run-time and compile-time activation, refuse a short input and a view
// not on the tape before their view list.
constexpr float kFrozenW[2 * 3] = {0.5F, -0.25F, 0.125F, 1.0F, 0.75F, -0.5F};
constexpr float kFrozenB[2] = {0.1F, -0.2F};
void frozen_linear(bt_test::Context& t) {
  const nn::FrozenLinear<double> f{{bt::frozen_f32(kFrozenW), 2U, 3U}, {bt::frozen_f32(kFrozenB), 2U},
                                   nn::Activation::kTanh};
  const auto run_time = [&](bt::Tape<double>& tape, bt::View x) { return produced(f.forward(tape, x)); };
  const auto compile_time = [&](bt::Tape<double>& tape, bt::View x) {
    return produced(f.forward<nn::Activation::kTanh>(tape, x));
  };
  for (int form = 0; form < 2; ++form) {
    for (const Input k : kInputs) {
      bt::Tape<double> tape = scalar_tape();
      const bt::View x = case_input(inputs(tape, 3U), k);
      expect(t, "frozen input", tape, k, [&] { return (form == 0) ? run_time(tape, x) : compile_time(tape, x); });
    }
    too_small<double>(t, "frozen, tape too small", g_scalar, sizeof(g_scalar), [&](bt::Tape<double>& tape) {
      const bt::View x = inputs(tape, 3U);
      return [&, x, form] { return (form == 0) ? run_time(tape, x) : compile_time(tape, x); };
    });
  }
}

// --- the models -----------------------------------------------------------------
// A model's lane loss: a good call, then each kind of bad shared parameters
// and bad data (`bad(tape, p)` is the loss with a token, target or label
// out of range). `good` and `bad` return true if they produced a loss.
template <class Good, class Bad>
void model_refuses(bt_test::Context& t, bt::Tape<double>& params, Good&& good, Bad&& bad) {
  {
    bt::Tape<L> tape = lane_tape();
    records(t, tape, [&] { return good(tape, nn::lane_params(params)); });
  }
  for (int k = 0; k < static_cast<int>(BadParams::kCount); ++k) {
    bt::Tape<L> tape = lane_tape();
    const bt::LaneParams<double> p = bad_params(params, static_cast<BadParams>(k));
    refuses(t, "model, bad shared parameters", tape, bt::Status::kInvalidArgument, [&] { return good(tape, p); });
  }
  bt::Tape<L> tape = lane_tape();
  refuses(t, "model, bad data", tape, bt::Status::kInvalidArgument,
          [&] { return bad(tape, nn::lane_params(params)); });
  const bt::LaneParams<double> shared = nn::lane_params(params);
  too_small<L>(t, "model lanes, tape too small", g_lanes, sizeof(g_lanes), [&good, shared](bt::Tape<L>& lanes) {
    return [&good, shared, &lanes] { return good(lanes, shared); };
  });
}

// A model's scalar loss, `loss(model, tape)`: on a tape it was not created
// on (`on_params` was created on the parameter tape) and on tapes too small.
template <class Model, class Options, class Loss>
void model_scalar_refuses(bt_test::Context& t, const Model& on_params, const Options& o, Loss&& loss) {
  bt::Tape<double> tape = scalar_tape();
  refuses(t, "model, another tape", tape, bt::Status::kInvalidHandle, [&] { return loss(on_params, tape); });
  too_small<double>(t, "model, tape too small", g_scalar, sizeof(g_scalar), [&o, &loss](bt::Tape<double>& small) {
    Model fresh;
    nn::Rng r(21U);
    static_cast<void>(fresh.create(small, o, r));
    return [fresh, &small, &loss] { return loss(fresh, small); };
  });
}


void mlp(bt_test::Context& t) {
  const nn::MlpOptions o{5U, 2U, 2U, 3U};
  nn::MakemoreMlp<double> m;
  nn::Rng rng(11U);
  bt::Tape<double> params = param_tape();
  BT_CHECK(t, m.create(params, o, rng));
  const nn::MakemoreMlp<double> m_params = m;
  const std::uint8_t c0[2] = {1U, 2U};
  const std::uint8_t c1[2] = {0U, 4U};
  const std::uint8_t far[2] = {1U, 5U};  // token 5: past the vocabulary
  const std::uint8_t* contexts[kN] = {c0, c1};
  const std::uint8_t* bad_contexts[kN] = {c0, far};
  const std::uint8_t targets[kN] = {3U, 1U};
  model_refuses(
      t, params, [&](bt::Tape<L>& tape, const bt::LaneParams<double>& p) { return has_loss(m.loss(tape, p, contexts, targets)); },
      [&](bt::Tape<L>& tape, const bt::LaneParams<double>& p) { return has_loss(m.loss(tape, p, bad_contexts, targets)); });
  // The scalar loss: a context with a token past the vocabulary, a target
  // past it, no context.
  bt::Tape<double> tape = scalar_tape();
  BT_CHECK(t, m.create(tape, o, rng));
  records(t, tape, [&] { return has_loss(m.loss(tape, c0, 3U)); });
  refuses(t, "mlp, token", tape, bt::Status::kInvalidArgument, [&] { return has_loss(m.loss(tape, far, 3U)); });
  bt::Tape<double> tape2 = scalar_tape();
  BT_CHECK(t, m.create(tape2, o, rng));
  refuses(t, "mlp, target", tape2, bt::Status::kInvalidArgument, [&] { return has_loss(m.loss(tape2, c0, 5U)); });
  bt::Tape<double> tape3 = scalar_tape();
  BT_CHECK(t, m.create(tape3, o, rng));
  refuses(t, "mlp, no context", tape3, bt::Status::kInvalidArgument,
          [&] { return produced(m.logits(tape3, nullptr)); });
  model_scalar_refuses(t, m_params, o, [&c0](const nn::MakemoreMlp<double>& model, bt::Tape<double>& on) {
    return has_loss(model.loss(on, c0, 3U));
  });
}

void cnn(bt_test::Context& t) {
  const nn::CnnOptions o{4U, 1U, 2U, 2U, 3U};
  nn::SmallCnn<double> m;
  nn::Rng rng(12U);
  bt::Tape<double> params = param_tape();
  BT_CHECK(t, m.create(params, o, rng));
  const nn::SmallCnn<double> m_params = m;
  float a[16];
  float b[16];
  for (int i = 0; i < 16; ++i) {
    a[i] = 0.0625F * static_cast<float>(i);
    b[i] = 1.0F - a[i];
  }
  const float* pixels[kN] = {a, b};
  const bt::Index labels[kN] = {2U, 0U};
  const bt::Index bad_labels[kN] = {2U, 3U};  // class 3 of 3
  model_refuses(
      t, params, [&](bt::Tape<L>& tape, const bt::LaneParams<double>& p) { return has_loss(m.loss(tape, p, pixels, labels)); },
      [&](bt::Tape<L>& tape, const bt::LaneParams<double>& p) { return has_loss(m.loss(tape, p, pixels, bad_labels)); });
  bt::Tape<double> tape = scalar_tape();
  BT_CHECK(t, m.create(tape, o, rng));
  records(t, tape, [&] { return has_loss(m.loss(tape, a, 1U)); });
  refuses(t, "cnn, label", tape, bt::Status::kInvalidArgument, [&] { return has_loss(m.loss(tape, a, 3U)); });
  bt::Tape<double> tape2 = scalar_tape();
  BT_CHECK(t, m.create(tape2, o, rng));
  refuses(t, "cnn, no pixels", tape2, bt::Status::kInvalidArgument, [&] { return has_loss(m.loss(tape2, nullptr, 1U)); });
  model_scalar_refuses(t, m_params, o, [&a](const nn::SmallCnn<double>& model, bt::Tape<double>& on) {
    return has_loss(model.loss(on, a, 1U));
  });
}

void char_gru(bt_test::Context& t) {
  const nn::CharGruOptions o{5U, 2U, 3U, 2U};
  nn::CharGru<double> m;
  nn::Rng rng(13U);
  bt::Tape<double> params = param_tape();
  BT_CHECK(t, m.create(params, o, rng));
  const nn::CharGru<double> m_params = m;
  const std::uint8_t s0[2] = {1U, 2U};
  const std::uint8_t s1[2] = {3U, 4U};
  const std::uint8_t far[2] = {3U, 9U};
  const std::uint8_t* tokens[kN] = {s0, s1};
  const std::uint8_t* targets[kN] = {s1, s0};
  const std::uint8_t* bad_targets[kN] = {s1, far};
  model_refuses(
      t, params, [&](bt::Tape<L>& tape, const bt::LaneParams<double>& p) { return has_loss(m.loss(tape, p, tokens, targets)); },
      [&](bt::Tape<L>& tape, const bt::LaneParams<double>& p) { return has_loss(m.loss(tape, p, tokens, bad_targets)); });
  // The scalar loss: a good one, a target past the vocabulary, then the rest.
  bt::Tape<double> tape = scalar_tape();
  BT_CHECK(t, m.create(tape, o, rng));
  records(t, tape, [&] { return has_loss(m.loss(tape, s0, s1)); });
  refuses(t, "char_gru, target", tape, bt::Status::kInvalidArgument, [&] { return has_loss(m.loss(tape, s0, far)); });
  model_scalar_refuses(t, m_params, o, [&s0, &s1](const nn::CharGru<double>& model, bt::Tape<double>& on) {
    return has_loss(model.loss(on, s0, s1));
  });
}

// The checkpointed lane sweep, which rewinds its phases as it goes (what it
// leaves on the tape is not its peak): on lane tapes of every node capacity,
// then every slot capacity, from none up to the first that holds the sweep,
// each smaller one refuses with kCapacityExceeded, leaving the tape and the
// shared gradients as they were. Then bad shared parameters and no losses.
// The first capacity that holds it is the model's checkpoint plan for
// sequences of a whole block (exact, as tests/core/test_lanes.cpp checks):
// the sweep refuses no tape that plan says is large enough.
void gpt_sweep(bt_test::Context& t, bt::Tape<double>& params, const nn::Gpt<double>& m,
               const std::uint8_t* const* tokens, const std::uint8_t* const* targets) {
  const bt::LaneParams<double> p = nn::lane_params(params);
  const L mask(1.0);
  BT_CHECK(t, m.options().block == 2U);
  const std::size_t plan[2] = {nn::Gpt<double>::checkpoint_sample_nodes(m.options()),
                               nn::Gpt<double>::checkpoint_sample_slots<kN>(m.options())};
  for (int dim = 0; dim < 2; ++dim) {
    bool done = false;
    std::size_t refused = 0U;
    for (std::size_t k = 0U; !done && (k <= kNodes); ++k) {
      bt::Tape<L> tape(g_lanes, sizeof(g_lanes), (dim == 0) ? k : kNodes, (dim == 0) ? kSlots : k);
      const std::uint64_t grads = digest(params);
      L losses(0.0);
      const auto call = [&] { return m.lane_sweep(tape, p, tokens, targets, 2U, mask, &losses); };
      if (tape.size() == 0U) {  // a capacity the sweep may need: try it
        const bool swept = call();
        if (swept) {
          done = true;
          BT_CHECK(t, tape.status() == bt::Status::kOk);
          BT_CHECK(t, k == plan[dim]);
        } else {
          ++refused;
          BT_CHECK(t, tape.status() == bt::Status::kCapacityExceeded);
          BT_CHECK(t, (tape.size() == 0U) && (tape.usage().slots == 0U));
          BT_CHECK(t, digest(params) == grads);
        }
      }
    }
    BT_CHECK(t, done);
    BT_CHECK(t, refused != 0U);
  }
  L losses(0.0);
  for (int k = 0; k < static_cast<int>(BadParams::kCount); ++k) {
    bt::Tape<L> tape = lane_tape();
    const bt::LaneParams<double> bad = bad_params(params, static_cast<BadParams>(k));
    refuses(t, "lane_sweep, bad shared parameters", tape, bt::Status::kInvalidArgument,
            [&] { return m.lane_sweep(tape, bad, tokens, targets, 2U, mask, &losses); });
  }
  bt::Tape<L> tape = lane_tape();
  refuses(t, "lane_sweep, no losses", tape, bt::Status::kInvalidArgument,
          [&] { return m.lane_sweep(tape, p, tokens, targets, 2U, mask, static_cast<L*>(nullptr)); });
}

void gpt(bt_test::Context& t) {
  const nn::GptOptions o{5U, 2U, 4U, 2U, 1U};
  nn::Gpt<double> m;
  nn::Rng rng(14U);
  bt::Tape<double> params = param_tape();
  BT_CHECK(t, m.create(params, o, rng));
  const nn::Gpt<double> m_params = m;
  const std::uint8_t s0[2] = {1U, 2U};
  const std::uint8_t s1[2] = {3U, 4U};
  const std::uint8_t far[2] = {3U, 7U};
  const std::uint8_t* tokens[kN] = {s0, s1};
  const std::uint8_t* targets[kN] = {s1, s0};
  const std::uint8_t* bad_tokens[kN] = {far, s0};
  model_refuses(
      t, params, [&](bt::Tape<L>& tape, const bt::LaneParams<double>& p) { return has_loss(m.loss(tape, p, tokens, targets, 2U)); },
      [&](bt::Tape<L>& tape, const bt::LaneParams<double>& p) { return has_loss(m.loss(tape, p, bad_tokens, targets, 2U)); });
  // The scalar loss: a target past the vocabulary, no targets, no tokens.
  bt::Tape<double> tape = scalar_tape();
  BT_CHECK(t, m.create(tape, o, rng));
  records(t, tape, [&] { return has_loss(m.loss(tape, s0, s1, 2U)); });
  refuses(t, "gpt, target", tape, bt::Status::kInvalidArgument, [&] { return has_loss(m.loss(tape, s0, far, 2U)); });
  bt::Tape<double> tape2 = scalar_tape();
  BT_CHECK(t, m.create(tape2, o, rng));
  refuses(t, "gpt, no targets", tape2, bt::Status::kInvalidArgument,
          [&] { return has_loss(m.loss(tape2, s0, nullptr, 2U)); });
  bt::Tape<double> tape3 = scalar_tape();
  BT_CHECK(t, m.create(tape3, o, rng));
  refuses(t, "gpt, no tokens", tape3, bt::Status::kInvalidArgument,
          [&] { return has_loss(m.loss(tape3, nullptr, s1, 2U)); });
  model_scalar_refuses(t, m_params, o, [&s0, &s1](const nn::Gpt<double>& model, bt::Tape<double>& on) {
    return has_loss(model.loss(on, s0, s1, 2U));
  });
  gpt_sweep(t, params, m_params, tokens, targets);
}

const bt_test::TestCase kCases[] = {
    {"linear", linear},   {"layer_norm", layer_norm}, {"conv1d", conv1d},       {"conv2d", conv2d},
    {"gru", gru},         {"gru_forward", gru_forward}, {"attention", attention}, {"pools", pools},
    {"losses", losses},   {"embedding", embedding},   {"frozen_linear", frozen_linear},
    {"mlp", mlp},         {"cnn", cnn},               {"char_gru", char_gru},   {"gpt", gpt},
};

}  // namespace

BT_TEST_MAIN("nn_refusals", kCases)
