// SPDX-License-Identifier: Apache-2.0
// Compiled training steps (burtorch/compile/emit.hpp) against the tape.
//
// The steps of the models of models.hpp were emitted at build time by the
// host generator (generate_steps.cpp, cmake/BurtorchCompileStep.cmake) and
// compiled into this program for the target it runs on. Here the same model
// code records the same sample on a tape; the test checks that the
// recording is the one the step was emitted from (its structure digest),
// then trains both for several steps on the same data: the tape by replay
// (tools/replay.hpp) and the optimizer, the compiled step by step() and
// sgd(). Every value and every gradient of every node must have the same
// bits after every sample, and every parameter after every update: the
// oracle is the library's own replay, run independently on the same target.
//
// Then what the emitter refuses: each refusal names the node and writes
// nothing, and a sink that fills up is reported, never written past.
//
// Tiny boards (BURTORCH_TEST_SMALL_TARGET, 16 KB of RAM): the 16-32-4 MLP's
// tape and arrays do not fit beside the rest; its case is left out there.
#include <burtorch/burtorch.hpp>
#include <burtorch/compile/emit.hpp>
#include <burtorch/frozen/ops.hpp>
#include <burtorch/nn/optim.hpp>
#include <burtorch/tools/replay.hpp>
#include <burtorch/tools/stream.hpp>

#include <cstdint>
#include <cstring>

#include "harness.hpp"
#include "mlp_step.hpp"
#include "models.hpp"
#include "random_step_1.hpp"
#include "random_step_2.hpp"
#include "random_step_3.hpp"
#include "random_step_4.hpp"
#include "random_step_5.hpp"
#include "random_step_6.hpp"
#include "xor_step.hpp"

namespace bt = burtorch;
namespace nn = burtorch::nn;
namespace cm = compile_models;

namespace {

// A generated step's interface (every generated namespace has the same).
struct Compiled {
  bt::Index nodes;
  bt::Index first;
  bt::Index loss;
  bt::Index params;
  bt::Index inputs;
  bt::Index targets;
  bt::Index classes;
  std::uint32_t digest;
  bt::Status (*step)(float*, float*, const float*, const float*, bt::Index);
  void (*sgd)(float*, float*, float, float);
};
#define BT_COMPILED(ns)                                                                                     \
  Compiled {                                                                                                \
    ns::kNodes, ns::kFirst, ns::kLoss, ns::kParams, ns::kInputs, ns::kTargets, ns::kClasses, ns::kDigest, \
        &ns::step, &ns::sgd                                                                                 \
  }

std::uint32_t bits(float x) {
  std::uint32_t b = 0U;
  std::memcpy(&b, &x, sizeof(b));
  return b;
}

// Every value and gradient of nodes [0, c.nodes) has the same bits on the
// tape as in v and g (counted as one check; the first difference printed).
bool same_bits(bt_test::Context& t, const bt::Tape<float>& tape, const float* v, const float* g, bt::Index nodes,
               bool grads) {
  for (bt::Index i = 0U; i < nodes; ++i) {
    const bool value_ok = bits(tape.value(i)) == bits(v[i]);
    const bool grad_ok = !grads || (bits(tape.grad(i)) == bits(g[i]));
    if (!value_ok || !grad_ok) {
      bt_test::print("  node ");
      bt_test::print_int(static_cast<long>(i));
      bt_test::print(" (op ");
      bt_test::print_int(static_cast<long>(bt::Recorder<float>::op(tape, i)));
      bt_test::print(value_ok ? ") gradient differs\n" : ") value differs\n");
      BT_CHECK(t, value_ok && grad_ok);
      return false;
    }
  }
  BT_CHECK(t, true);
  return true;
}

// The recording is the one the step was emitted from.
void check_recording(bt_test::Context& t, const Compiled& c, const bt::Tape<float>& tape, bt::Mark m,
                     bt::Value<float> loss, const bt::compile::StepSpec& spec) {
  BT_CHECK(t, tape.status() == bt::Status::kOk);
  BT_CHECK(t, bt::compile::structure_digest(tape, m, loss, spec) == c.digest);
  BT_CHECK(t, c.nodes == tape.size());
  BT_CHECK(t, c.first == m.nodes);
  BT_CHECK(t, c.loss == loss.index());
  BT_CHECK(t, c.params == spec.params.count);
}

// A sample of a model: inputs, a target, a label.
struct Sample {
  float x[16];
  float y;
  bt::Index label;
};

constexpr float kLr = 0.1F;

// The compiled steps' values and gradients (one model at a time).
#if defined(BURTORCH_TEST_SMALL_TARGET)
constexpr bt::Index kMaxNodes = 256U;
#else
constexpr bt::Index kMaxNodes = 1024U;
#endif
float g_values[kMaxNodes];
float g_grads[kMaxNodes];

// Trains a recorded model both ways for `steps` steps of `batch` samples;
// sample(step, b) gives the data; set_target(tape, loss, sample) points
// the tape's recording at the sample's target.
template <class SampleF, class TargetF>
void train_both(bt_test::Context& t, const Compiled& c, bt::Tape<float>& tape, bt::Mark m, bt::Value<float> loss,
                const bt::compile::StepSpec& spec, int steps, int batch, SampleF sample, TargetF set_target) {
  check_recording(t, c, tape, m, loss, spec);
  const bt::Replay r = bt::replayable(tape, m, loss);
  BT_CHECK(t, r.tape == &tape);
  float* const v = g_values;
  float* const g = g_grads;
  BT_CHECK(t, c.nodes <= kMaxNodes);
  if (c.nodes > kMaxNodes) {
    return;
  }
  std::memcpy(v, tape.values(), c.nodes * sizeof(float));
  std::memset(g, 0, sizeof(g_grads));
  nn::OptimizerOptions<float> oc;
  oc.kind = nn::OptimizerKind::kSgd;
  oc.lr = kLr;
  nn::Optimizer<float> opt(oc);
  const float scale = 1.0F / static_cast<float>(batch);
  bool all = true;
  for (int s = 0; (s < steps) && all; ++s) {
    tape.zero_grad(spec.params.first, spec.params.count);
    for (int b = 0; (b < batch) && all; ++b) {
      const Sample d = sample(s, b);
      BT_CHECK(t, bt::set_values(tape, spec.inputs, d.x) == bt::Status::kOk);
      set_target(tape, loss, d);
      BT_CHECK(t, bt::replay(tape, r) == bt::Status::kOk);
      BT_CHECK(t, c.step(v, g, d.x, &d.y, d.label) == bt::Status::kOk);
      all = same_bits(t, tape, v, g, c.nodes, true);
    }
    BT_CHECK(t, opt.step<nn::OptimizerKind::kSgd>(tape, spec.params, scale) == bt::Status::kOk);
    c.sgd(v, g, kLr, scale);
    all = all && same_bits(t, tape, v, g, c.nodes, false);
  }
}

void xor_matches_replay(bt_test::Context& t) {
  static bt::FixedTape<float, cm::Xor::kNodes, cm::Xor::kSlots, cm::Xor::kParams> tape;
  cm::Xor model;
  BT_CHECK(t, model.create(tape, 0U));
  const bt::Mark m = tape.mark();
  const float x0[2] = {0.0F, 1.0F};
  const bt::Value<float> loss = model.loss(tape, x0, 1.0F);
  const bt::compile::StepSpec spec = model.spec(m, loss);
  constexpr float kCases[4][3] = {{0.0F, 0.0F, 0.0F}, {0.0F, 1.0F, 1.0F}, {1.0F, 0.0F, 1.0F}, {1.0F, 1.0F, 0.0F}};
  const auto sample = [&](int /*s*/, int b) {
    Sample d{};
    d.x[0] = kCases[b][0];
    d.x[1] = kCases[b][1];
    d.y = kCases[b][2];
    return d;
  };
  // mse's difference x - y records x + (-y) with -y kept for replay.
  const auto target = [&](bt::Tape<float>& tp, bt::Value<float> /*l*/, const Sample& d) {
    const bt::Index diff = spec.targets.first;
    bt::Recorder<float>::relink(tp, diff, bt::Recorder<float>::operands(tp, diff).a, bt::detail::pack_constant(-d.y));
  };
  train_both(t, BT_COMPILED(xor_step), tape, m, loss, spec, 25, 4, sample, target);
  BT_CHECK(t, xor_step::kTargets == 1U && xor_step::kInputs == 2U && xor_step::kClasses == 0U);
}

#if !defined(BURTORCH_TEST_SMALL_TARGET)
void mlp_matches_replay(bt_test::Context& t) {
  static bt::FixedTape<float, cm::Mlp::kNodes, cm::Mlp::kSlots, cm::Mlp::kParams> tape;
  cm::Mlp model;
  BT_CHECK(t, model.create(tape, 0U));
  const bt::Mark m = tape.mark();
  const float x0[16] = {};
  const bt::Value<float> loss = model.loss(tape, x0, 0U);
  const bt::compile::StepSpec spec = model.spec(m, loss);
  cm::Draw draw;
  const auto sample = [&](int /*s*/, int /*b*/) {
    Sample d{};
    for (float& f : d.x) {
      f = draw(1.0F);
    }
    d.label = draw.next() % 4U;
    return d;
  };
  const auto target = [](bt::Tape<float>& tp, bt::Value<float> l, const Sample& d) {
    static_cast<void>(nn::set_target(tp, l, d.label));
  };
  train_both(t, BT_COMPILED(mlp_step), tape, m, loss, spec, 6, 8, sample, target);
  BT_CHECK(t, mlp_step::kClasses == 4U && mlp_step::kInputs == 16U);
  // A label past the classes is refused; nothing is computed.
  static float v[mlp_step::kNodes];
  static float g[mlp_step::kNodes];
  v[mlp_step::kLoss] = 7.0F;
  BT_CHECK(t, mlp_step::step(v, g, x0, nullptr, 4U) == bt::Status::kInvalidArgument);
  BT_CHECK(t, mlp_step::step(v, g, nullptr, nullptr, 0U) == bt::Status::kInvalidArgument);
  BT_CHECK(t, v[mlp_step::kLoss] == 7.0F);
}
#endif

void random_graphs_match_replay(bt_test::Context& t) {
  const Compiled steps[] = {BT_COMPILED(random_step_1), BT_COMPILED(random_step_2), BT_COMPILED(random_step_3),
                            BT_COMPILED(random_step_4), BT_COMPILED(random_step_5), BT_COMPILED(random_step_6)};
  static_assert(sizeof(steps) / sizeof(steps[0]) == sizeof(cm::kRandomSeeds) / sizeof(cm::kRandomSeeds[0]),
                "a step per seed");
  for (std::size_t k = 0U; k < (sizeof(steps) / sizeof(steps[0])); ++k) {
    static bt::FixedTape<float, cm::Random::kNodes, cm::Random::kSlots, cm::Random::kParams> tape;
    tape.reset();
    cm::Random model;
    model.seed = cm::kRandomSeeds[k];
    BT_CHECK(t, model.create(tape));
    const bt::Mark m = tape.mark();
    const float x0[cm::Random::kInputs] = {0.25F, -0.5F, 0.75F};
    const bt::Value<float> loss = model.loss(tape, x0);
    // Every elementwise op of the core is in the graph.
    bool seen[64] = {};
    for (bt::Index i = m.nodes; i < tape.size(); ++i) {
      seen[static_cast<std::size_t>(bt::Recorder<float>::op(tape, i)) & 63U] = true;
    }
    bool every = true;
    for (std::size_t op = static_cast<std::size_t>(bt::Op::kAdd); op <= static_cast<std::size_t>(bt::Op::kDivConst);
         ++op) {
      every = every && seen[op];
    }
    BT_CHECK(t, every);
    cm::Draw draw;
    draw.state ^= model.seed;
    const auto sample = [&](int /*s*/, int /*b*/) {
      Sample d{};
      for (bt::Index i = 0U; i < cm::Random::kInputs; ++i) {
        d.x[i] = draw(2.0F);
      }
      return d;
    };
    const auto none = [](bt::Tape<float>&, bt::Value<float>, const Sample&) {};
    train_both(t, steps[k], tape, m, loss, model.spec(m, "random"), 4, 3, sample, none);
  }
}

// --- refusals ---------------------------------------------------------------

struct Text {
  std::uint8_t bytes[2048];
  bt::MemoryStream stream;
  Text() : bytes{}, stream{bytes, sizeof(bytes), 0U, 0U} {}
};

bt::compile::Refusal emit(const bt::Tape<float>& tape, bt::Mark m, bt::Value<float> loss,
                          const bt::compile::StepSpec& spec, Text& out) {
  return bt::compile::emit_step(tape, m, loss, spec, bt::compile::Part::kSource, bt::memory_sink(&out.stream));
}

// A sink that counts the bytes and their FNV-1a hash (no buffer).
struct Count {
  std::size_t bytes = 0U;
  std::uint32_t hash = 2166136261U;
};
bt::Status count_bytes(void* context, const std::uint8_t* data, std::size_t size) noexcept {
  Count* const c = static_cast<Count*>(context);
  for (std::size_t k = 0U; k < size; ++k) {
    c->hash = (c->hash ^ data[k]) * 16777619U;
  }
  c->bytes += size;
  return bt::Status::kOk;
}
bt::compile::Refusal count(const bt::Tape<float>& tape, bt::Mark m, bt::Value<float> loss,
                           const bt::compile::StepSpec& spec, Count& c) {
  return bt::compile::emit_step(tape, m, loss, spec, bt::compile::Part::kSource, bt::ByteSink{&count_bytes, &c});
}

// A unary op of this program's own family: the emitter cannot name it.
struct Twice {
  static constexpr bt::OpKind kKind = bt::OpKind::kUnary;
  static constexpr const char* kName = "twice";
  template <class T>
  static T forward(T x) noexcept {
    return x + x;
  }
  template <class T>
  static void backward(T g, T /*x*/, T /*out*/, T& dx) noexcept {
    dx += g + g;
  }
};
using OwnFamily = bt::OpFamily<bt::family::kFirstUser, Twice>;

void refusals_name_the_node(bt_test::Context& t) {
  using Spec = bt::compile::StepSpec;
  static bt::FixedTape<float, 64, 64> tape;
  static Text out;
  // The reference: a graph the emitter takes.
  tape.reset();
  const bt::Value<float> w = tape.param(0.5F);
  bt::Mark m = tape.mark();
  bt::Value<float> x = tape.input(2.0F);
  bt::Value<float> loss = bt::tanh(w * x);
  Spec spec;
  spec.params = bt::View{0U, 1U};
  spec.inputs = bt::View{x.index(), 1U};
  BT_CHECK(t, emit(tape, m, loss, spec, out).status == bt::Status::kOk);
  BT_CHECK(t, out.stream.size > 100U);
  // The same text twice (no state in the emitter).
  Count first;
  Count again;
  BT_CHECK(t, count(tape, m, loss, spec, first).status == bt::Status::kOk);
  BT_CHECK(t, count(tape, m, loss, spec, again).status == bt::Status::kOk);
  BT_CHECK(t, (first.bytes == out.stream.size) && (again.bytes == first.bytes) && (again.hash == first.hash));

  // A sink that fills up: reported, nothing written past it.
  std::uint8_t small[64 + 8];
  std::memset(small, 0xA5, sizeof(small));
  bt::MemoryStream tight{small, 64U, 0U, 0U};
  const bt::compile::Refusal full =
      bt::compile::emit_step(tape, m, loss, spec, bt::compile::Part::kSource, bt::memory_sink(&tight));
  BT_CHECK(t, full.status == bt::Status::kIoError);
  bool untouched = true;
  for (std::size_t k = 64U; k < sizeof(small); ++k) {
    untouched = untouched && (small[k] == 0xA5U);
  }
  BT_CHECK(t, untouched && (tight.size <= 64U));
  BT_CHECK(t, bt::compile::emit_step(tape, m, loss, spec, bt::compile::Part::kHeader, bt::ByteSink{}).status ==
                  bt::Status::kInvalidArgument);

  // Each refusal: kInvalidArgument, the node, nothing written.
  const auto refused = [&](bt::Mark mk, bt::Value<float> l, const Spec& s, bt::Index node) {
    Count o;
    const bt::compile::Refusal r = count(tape, mk, l, s, o);
    BT_CHECK(t, r.status == bt::Status::kInvalidArgument);
    BT_CHECK(t, r.node == node);
    BT_CHECK(t, r.reason[0] != '\0');
    BT_CHECK(t, o.bytes == 0U);
  };
  Spec bad = spec;
  bad.name = "not an identifier";
  refused(m, loss, bad, bt::kNoIndex);
  bad = spec;
  bad.params = bt::View{x.index(), 1U};  // an input after the mark, not a parameter
  refused(m, loss, bad, x.index());
  bad = spec;
  bad.targets = bt::View{loss.index(), 1U};  // tanh is not a difference x - c
  refused(m, loss, bad, loss.index());
  bad = spec;
  bad.class_loss = loss.index();  // not a cross-entropy
  refused(m, loss, bad, loss.index());
  refused(m, x, spec, x.index());  // a loss that is an input

  // An op of a family the emitter does not compile (a program's own).
  const bt::Value<float> own = OwnFamily::unary<Twice>(loss);
  refused(m, own, spec, own.index());

  // An interior node before the mark: the step would start inside the graph.
  tape.reset();
  const bt::Value<float> w2 = tape.param(0.5F);
  const bt::Value<float> early = bt::tanh(w2);
  const bt::Mark late = tape.mark();
  const bt::Value<float> l2 = early * tape.input(3.0F);
  spec.inputs = bt::View{late.nodes, 1U};
  refused(late, l2, spec, early.index());

  // stop_gradient() after the mark: the sweep would stop inside the step.
  tape.reset();
  static_cast<void>(tape.param(0.5F));
  const bt::Mark m3 = tape.mark();
  const bt::Value<float> x3 = tape.input(1.0F);
  const bt::Value<float> h3 = bt::tanh(bt::Value<float>(&tape, 0U) * x3);
  bt::stop_gradient(tape);
  const bt::Value<float> l3 = bt::sqr(h3);
  spec.inputs = bt::View{x3.index(), 1U};
  Count none;
  const bt::compile::Refusal stopped = count(tape, m3, l3, spec, none);
  BT_CHECK(t, stopped.status == bt::Status::kInvalidArgument);
  BT_CHECK(t, none.bytes == 0U);

  // A tape holding an error.
  tape.reset();
  static_cast<void>(tape.param(0.5F));
  const bt::Mark m4 = tape.mark();
  const bt::Value<float> l4 = bt::tanh(tape.input(1.0F));
  static_cast<void>(tape.report(bt::Status::kCapacityExceeded));
  spec.inputs = bt::View{m4.nodes, 1U};
  refused(m4, l4, spec, bt::kNoIndex);
}

// On a double tape, a constant that is not exactly a float is not kept for
// replay: the emitter refuses it too.
void double_constant_not_kept(bt_test::Context& t) {
  static bt::FixedTape<double, 16, 16> tape;
  static_cast<void>(tape.param(0.5));
  const bt::Mark m = tape.mark();
  const bt::Value<double> x = tape.input(1.0);
  const bt::Value<double> kept = x + 0.5;
  bt::compile::StepSpec spec;
  spec.params = bt::View{0U, 1U};
  spec.inputs = bt::View{x.index(), 1U};
  Count written;
  const bt::compile::Refusal ok = bt::compile::emit_step(tape, m, kept, spec, bt::compile::Part::kSource,
                                                         bt::ByteSink{&count_bytes, &written});
  BT_CHECK(t, ok.status == bt::Status::kOk);
  BT_CHECK(t, written.bytes > 100U);
  const bt::Value<double> lost = kept + 0.1;  // 0.1 is no float
  Count none;
  const bt::compile::Refusal r = bt::compile::emit_step(tape, m, lost, spec, bt::compile::Part::kSource,
                                                        bt::ByteSink{&count_bytes, &none});
  BT_CHECK(t, r.status == bt::Status::kInvalidArgument);
  BT_CHECK(t, r.node == lost.index());
  BT_CHECK(t, none.bytes == 0U);
}

const bt_test::TestCase kCases[] = {
    {"xor_matches_replay", xor_matches_replay},
#if !defined(BURTORCH_TEST_SMALL_TARGET)
    {"mlp_matches_replay", mlp_matches_replay},
#endif
    {"random_graphs_match_replay", random_graphs_match_replay},
    {"refusals_name_the_node", refusals_name_the_node},
    {"double_constant_not_kept", double_constant_not_kept},
};

}  // namespace

BT_TEST_MAIN("compiled_step", kCases)
