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
#include <burtorch/burtorch.hpp>
#include <burtorch/nn/nn.hpp>

#include <cstddef>

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

// Runs `call` on `tape` and checks it refused with `want`, recording
// nothing. `call` returns true if it produced an output.
template <class U, class Call>
void refuses(bt_test::Context& t, const char* what, bt::Tape<U>& tape, bt::Status want, Call&& call) {
  const std::size_t nodes = tape.size();
  const std::size_t slots = tape.usage().slots;
  const bool produced = call();
  const bool ok = !produced && (tape.status() == want) && (tape.size() == nodes) && (tape.usage().slots == slots);
  if (!ok) {
    bt_test::print("    refused badly: ");
    bt_test::print(what);
    bt_test::print("\n");
  }
  BT_CHECK(t, !produced);
  BT_CHECK(t, tape.status() == want);
  BT_CHECK(t, tape.size() == nodes);
  BT_CHECK(t, tape.usage().slots == slots);
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

void linear(bt_test::Context& t) { layer_refuses<LinearCase>(t); }
void layer_norm(bt_test::Context& t) { layer_refuses<LayerNormCase>(t); }
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
}

bool has_loss(bt::Value<L> v) { return v.index() != bt::kNoIndex; }
bool has_loss(bt::Value<double> v) { return v.index() != bt::kNoIndex; }

void mlp(bt_test::Context& t) {
  const nn::MlpOptions o{5U, 2U, 2U, 3U};
  nn::MakemoreMlp<double> m;
  nn::Rng rng(11U);
  bt::Tape<double> params = param_tape();
  BT_CHECK(t, m.create(params, o, rng));
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
}

void cnn(bt_test::Context& t) {
  const nn::CnnOptions o{4U, 1U, 2U, 2U, 3U};
  nn::SmallCnn<double> m;
  nn::Rng rng(12U);
  bt::Tape<double> params = param_tape();
  BT_CHECK(t, m.create(params, o, rng));
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
}

void char_gru(bt_test::Context& t) {
  const nn::CharGruOptions o{5U, 2U, 3U, 2U};
  nn::CharGru<double> m;
  nn::Rng rng(13U);
  bt::Tape<double> params = param_tape();
  BT_CHECK(t, m.create(params, o, rng));
  const std::uint8_t s0[2] = {1U, 2U};
  const std::uint8_t s1[2] = {3U, 4U};
  const std::uint8_t far[2] = {3U, 9U};
  const std::uint8_t* tokens[kN] = {s0, s1};
  const std::uint8_t* targets[kN] = {s1, s0};
  const std::uint8_t* bad_targets[kN] = {s1, far};
  model_refuses(
      t, params, [&](bt::Tape<L>& tape, const bt::LaneParams<double>& p) { return has_loss(m.loss(tape, p, tokens, targets)); },
      [&](bt::Tape<L>& tape, const bt::LaneParams<double>& p) { return has_loss(m.loss(tape, p, tokens, bad_targets)); });
}

void gpt(bt_test::Context& t) {
  const nn::GptOptions o{5U, 2U, 4U, 2U, 1U};
  nn::Gpt<double> m;
  nn::Rng rng(14U);
  bt::Tape<double> params = param_tape();
  BT_CHECK(t, m.create(params, o, rng));
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
}

const bt_test::TestCase kCases[] = {
    {"linear", linear},   {"layer_norm", layer_norm}, {"conv1d", conv1d},       {"conv2d", conv2d},
    {"gru", gru},         {"attention", attention},   {"embedding", embedding}, {"frozen_linear", frozen_linear},
    {"mlp", mlp},
    {"cnn", cnn},         {"char_gru", char_gru},     {"gpt", gpt},
};

}  // namespace

BT_TEST_MAIN("nn_refusals", kCases)
