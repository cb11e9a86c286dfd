// SPDX-License-Identifier: Apache-2.0
// Record once, replay many (Tape::replayable, set, set_target, replay):
//  - for new leaf values, a replay gives every node the bits that recording
//    the graph again gives, and every leaf the same gradient: the paper's
//    tiny and small graphs (FP64, with folded constants), a graph of every
//    kind of op (reductions over runs and lists, inner products of every
//    operand kind, view lists, scale_shift, the ops linked on use, fused
//    layer rows), a ReLU MLP trained for several batches with
//    cross-entropy targets that change per sample (FP32), each compared
//    with a second tape that re-records every sample;
//  - the error model: a replay after the graph changed (nodes recorded or
//    discarded, a rewind or reset, even back to the same size), of another
//    tape's recording or of an empty one is refused with kInvalidArgument
//    and computes nothing; set and set_target refuse what they cannot do;
//    graphs replay cannot re-evaluate are refused when taken.
#include <burtorch/burtorch.hpp>
#include <burtorch/nn/nn.hpp>

#include <cmath>
#include <cstring>

#include "graphs.hpp"
#include "harness.hpp"

namespace bt = burtorch;
namespace nn = burtorch::nn;

namespace {

// Shared by the tests (each resets what it uses): the micro:bit has 16 KiB
// of RAM for all of them.
using DoubleTape = bt::FixedTape<double, 40, 16>;
using FloatTape = bt::FixedTape<float, 112, 64>;
DoubleTape g_d0;
DoubleTape g_d1;
FloatTape g_f0;
FloatTape g_f1;

template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// Every value, and every gradient of the nodes a and b name, bit for bit.
template <class T>
long differences(const bt::Tape<T>& x, const bt::Tape<T>& y) {
  long wrong = (x.size() == y.size()) ? 0 : 1;
  for (bt::Index i = 0U; (wrong == 0) && (i < x.size()); ++i) {
    wrong += same_bits(x.value(i), y.value(i)) ? 0 : 1;
    wrong += (bt::node_op(x, i) == bt::node_op(y, i)) ? 0 : 1;
  }
  return wrong;
}

// --- the paper's graphs -----------------------------------------------------------

template <class Build>
void graph_case(bt_test::Context& t, Build build, const char* name) {
  t.test_name = name;
  DoubleTape& once = g_d0;
  DoubleTape& again = g_d1;
  once.reset();
  const bt::Mark start = once.mark();
  const auto n = build(once, 1.5, -0.75);
  const bt::Replay r = bt::replayable(once, start, n.g);
  BT_CHECK(t, (r.tape == &once) && (once.status() == bt::Status::kOk));
  const double points[][2] = {{-41.0, 2.0}, {-4.0, 2.0}, {0.5, 3.25}, {2.0, -1.0}, {0.0, 0.0}, {1e300, -3.0}};
  for (const auto& p : points) {
    BT_CHECK(t, (bt::set_value(once, n.a, p[0]) == bt::Status::kOk) && (bt::set_value(once, n.b, p[1]) == bt::Status::kOk));
    BT_CHECK(t, bt::replay(once, r) == bt::Status::kOk);
    again.reset();
    const auto m = build(again, p[0], p[1]);
    BT_CHECK(t, again.backward(m.g) == bt::Status::kOk);
    BT_CHECK(t, differences(once, again) == 0);
    BT_CHECK(t, same_bits(n.a.grad(), m.a.grad()) && same_bits(n.b.grad(), m.b.grad()));
    // The recording's own leaves start at zero on every replay, as when
    // recorded again (no zero_grad needed): the next point checks that too.
  }
}

void paper_graphs(bt_test::Context& t) {
  graph_case(t, [](bt::Tape<double>& tape, double a, double b) { return examples::tiny_graph(tape, a, b); }, "tiny");
  graph_case(t, [](bt::Tape<double>& tape, double a, double b) { return examples::small_graph(tape, a, b); }, "small");
  // Closed forms at the paper's points (Fig. 1: dg/da = -35; Fig. 2:
  // micrograd's README value).
  DoubleTape& tape = g_d0;
  tape.reset();
  const bt::Mark start = tape.mark();
  const auto n = examples::small_graph(tape, 1.0, 1.0);
  const bt::Replay r = bt::replayable(tape, start, n.g);
  BT_CHECK(t, (bt::set_value(tape, n.a, -4.0) == bt::Status::kOk) && (bt::set_value(tape, n.b, 2.0) == bt::Status::kOk));
  BT_CHECK(t, bt::replay(tape, r) == bt::Status::kOk);
  BT_CHECK(t, n.g.value() == 24.70408163265306);
  BT_CHECK(t, n.a.grad() == 138.83381924198252);
  tape.reset();
  const bt::Mark s2 = tape.mark();
  const auto m = examples::tiny_graph(tape, 0.0, 0.0);
  const bt::Replay r2 = bt::replayable(tape, s2, m.g);
  BT_CHECK(t, (bt::set_value(tape, m.a, -41.0) == bt::Status::kOk) && (bt::set_value(tape, m.b, 2.0) == bt::Status::kOk));
  BT_CHECK(t, bt::replay(tape, r2) == bt::Status::kOk);
  BT_CHECK(t, (m.g.value() == 612.5) && (m.a.grad() == -35.0));
}

// --- every kind of op ----------------------------------------------------------------

// Leaves x[0..5], parameters of a 3 x 4 layer and a layer norm's gain and
// shift, then one node of each kind; the root sums them.
struct Kinds {
  bt::Value<float> x[6];
  bt::Value<float> root;
};

Kinds record_kinds(bt::Tape<float>& tape, const float* in) {
  Kinds k{};
  for (int i = 0; i < 6; ++i) {
    k.x[i] = tape.leaf(in[i]);
  }
  const bt::Value<float>* x = k.x;
  const bt::Value<float> list[4] = {x[3], x[0], x[5], x[1]};
  bt::Value<float> y = bt::reduce_sum(x, 4U) + bt::reduce_mean(list, 4U) + bt::variance(list, 4U);
  y = y + bt::reduce_mul(x, 3U) + bt::log_sum_exp(list, 4U) + bt::variance_biased(x, 6U);
  y = y + bt::inner_product(x, x + 2, 3U) + bt::inner_product(x, list, 4U) + bt::inner_product(list, x + 1, 4U);
  y = y + bt::inner_product_with_bias(x, x + 3, 3U, x[2]);
  const bt::View parts[2] = {{x[4].index(), 2U}, {x[0].index(), 2U}};
  const bt::ViewList segs = bt::view_list(tape, parts, 2U);
  y = y + bt::inner_product_views_with_bias(x[1], segs, x[5]);
  // Elementwise, folded and stored constants.
  y = y + (x[0] - x[1]) * (x[2] / (x[3] + 3.0F)) + bt::tanh(x[4]) + bt::exp(x[5] * 0.25F) + bt::sigmoid(-x[0]);
  y = y + (2.0F - x[1]) + (1.0F / (x[2] + 4.0F)) + (x[3] / 8.0F) + bt::sqrt(bt::sqr(x[4]) + 1.0F);
  y = y + bt::relu(x[5] - 0.5F) + bt::pow3(x[1]) + bt::log(bt::sqr(x[2]) + 0.5F) + bt::inv_sqrt(x[3] * x[3] + 2.0F);
  y = y + bt::mean(x[0], x[1]) + bt::add_squares(x[2], x[3]) + bt::mean_squares(x[4], x[5]) + bt::negative_mean(x[0], x[5]);
  // Ops linked on use (families 0 and 1).
  y = y + bt::gelu_tanh(x[0]) + bt::silu(x[1]) + bt::abs(x[2]) + bt::leaky_relu(x[3], 0.1F) + bt::reduce_max(list, 4U);
  y = y + bt::bce_with_logits(x[4], 0.25F) + bt::huber(x[5], 0.5F);
  const bt::View w{x[0].index(), 4U};
  const bt::View h = bt::matvec<bt::Op::kSigmoid>(tape, x[0].index(), 1U, bt::view_list(tape, &w, 1U), x[5].index());
  const bt::View ss = bt::scale_shift(tape, x[0].index(), x[2].index(), x[3].index(), 3U);
  y = y + bt::Value<float>(&tape, h.first) + bt::reduce(tape, bt::Op::kSumR, bt::View{ss.first, ss.count});
  k.root = y;
  return k;
}

void every_kind_of_op(bt_test::Context& t) {
  FloatTape& once = g_f0;
  FloatTape& again = g_f1;
  once.reset();
  const float first[6] = {0.5F, -1.25F, 2.0F, 0.75F, -0.5F, 1.5F};
  const bt::Mark start = once.mark();
  const Kinds k = record_kinds(once, first);
  const bt::Replay r = bt::replayable(once, start, k.root);
  BT_CHECK(t, (r.tape != nullptr) && (once.status() == bt::Status::kOk));
  float in[6] = {};
  for (int round = 0; round < 5; ++round) {
    for (int i = 0; i < 6; ++i) {
      in[i] = (0.375F * static_cast<float>((i * 7 + round * 3) % 11)) - 1.8F;
      BT_CHECK(t, bt::set_value(once, k.x[i], in[i]) == bt::Status::kOk);
    }
    once.zero_grad();
    BT_CHECK(t, bt::replay(once, r) == bt::Status::kOk);
    again.reset();
    const Kinds m = record_kinds(again, in);
    BT_CHECK(t, again.backward(m.root) == bt::Status::kOk);
    BT_CHECK(t, differences(once, again) == 0);
    long wrong = 0;
    for (int i = 0; i < 6; ++i) {
      wrong += same_bits(k.x[i].grad(), m.x[i].grad()) ? 0 : 1;
    }
    BT_CHECK(t, wrong == 0);
    BT_CHECK(t, std::isfinite(k.root.value()));
  }
  // replay_forward: the values alone (gradients untouched).
  once.zero_grad();
  BT_CHECK(t, bt::set_value(once, k.x[0], 0.25F) == bt::Status::kOk);
  BT_CHECK(t, bt::replay_forward(once, r) == bt::Status::kOk);
  again.reset();
  in[0] = 0.25F;
  static_cast<void>(record_kinds(again, in));
  BT_CHECK(t, differences(once, again) == 0);
  BT_CHECK(t, k.x[0].grad() == 0.0F);
}

// --- an MLP trained by replay --------------------------------------------------------

// 6 -> 8 (ReLU) -> 3, cross-entropy, SGD with the batch's mean folded into
// the step, 4 batches of 5 samples: once by replaying one recording (inputs
// set, target set), once by recording every sample (nn::serial_batch). The
// parameters after every step, the losses and the gradients are the same
// bits.
constexpr std::size_t kIn = 6U;
constexpr std::size_t kHidden = 8U;
constexpr std::size_t kOut = 3U;
constexpr std::size_t kBatch = 5U;

struct Mlp {
  nn::Linear<float> l1;
  nn::Linear<float> l2;
  bt::View params = bt::kNoView;
};

bool make_mlp(bt::Tape<float>& tape, Mlp& m) {
  nn::Rng rng(11U);
  nn::LinearOptions h{};
  h.in = kIn;
  h.out = kHidden;
  h.act = nn::Activation::kRelu;
  nn::LinearOptions o{};
  o.in = kHidden;
  o.out = kOut;
  const bool ok = m.l1.create(tape, h, rng) && m.l2.create(tape, o, rng);
  m.params = bt::View{0U, static_cast<bt::Index>(tape.size())};
  return ok;
}

float feature(std::size_t sample, std::size_t k) {
  return (0.25F * static_cast<float>((sample * 5U + k * 3U) % 9U)) - 1.0F;
}
bt::Index label(std::size_t sample) { return static_cast<bt::Index>((sample * 7U) % kOut); }

void mlp_trained_by_replay(bt_test::Context& t) {
  constexpr std::size_t kParams = (kIn * kHidden) + kHidden + (kHidden * kOut) + kOut;
  static_assert(kParams + 19U <= 112U, "the shared tapes hold the model and one sample");
  FloatTape& once = g_f0;
  FloatTape& again = g_f1;
  once.reset();
  again.reset();
  Mlp a;
  Mlp b;
  BT_CHECK(t, make_mlp(once, a) && make_mlp(again, b));
  nn::OptimizerOptions<float> config;
  config.lr = 0.2F;
  nn::Optimizer<float> oa(config);
  nn::Optimizer<float> ob(config);
  // The recording: sample 0's inputs, the layers, the loss.
  const bt::Mark start = once.mark();
  bt::Value<float> x[kIn];
  for (std::size_t k = 0U; k < kIn; ++k) {
    x[k] = once.input(feature(0U, k));
  }
  const bt::View hidden = a.l1.forward<nn::Activation::kRelu>(once, bt::View{x[0].index(), kIn});
  const bt::Value<float> loss = nn::cross_entropy(once, a.l2.forward(once, hidden), label(0U));
  const bt::Replay r = bt::replayable(once, start, loss);
  BT_CHECK(t, r.tape != nullptr);
  std::size_t batch = 0U;
  auto sample_loss = [&](bt::Tape<float>& tape, std::size_t i) {
    const std::size_t s = (batch * kBatch) + i;
    const bt::Index first = static_cast<bt::Index>(tape.size());
    for (std::size_t k = 0U; k < kIn; ++k) {
      static_cast<void>(tape.input(feature(s, k)));
    }
    const bt::View h = b.l1.forward<nn::Activation::kRelu>(tape, bt::View{first, kIn});
    return nn::cross_entropy(tape, b.l2.forward(tape, h), label(s));
  };
  long wrong = 0;
  for (batch = 0U; batch < 4U; ++batch) {
    once.zero_grad(a.params.first, a.params.count);
    float total = 0.0F;
    for (std::size_t i = 0U; i < kBatch; ++i) {
      const std::size_t s = (batch * kBatch) + i;
      for (std::size_t k = 0U; k < kIn; ++k) {
        wrong += (bt::set_value(once, x[k], feature(s, k)) == bt::Status::kOk) ? 0 : 1;
      }
      wrong += (bt::nn::set_target(once, loss, label(s)) == bt::Status::kOk) ? 0 : 1;
      wrong += (bt::replay(once, r) == bt::Status::kOk) ? 0 : 1;
      total += loss.value();
    }
    const float mean_a = total / static_cast<float>(kBatch);
    wrong += (oa.step(once, a.params, 1.0F / static_cast<float>(kBatch)) == bt::Status::kOk) ? 0 : 1;
    const float mean_b = nn::serial_batch(again, b.params, kBatch, sample_loss, ob);
    wrong += same_bits(mean_a, mean_b) ? 0 : 1;
    for (bt::Index i = 0U; i < a.params.count; ++i) {
      wrong += (same_bits(once.value(i), again.value(i)) && same_bits(once.grad(i), again.grad(i))) ? 0 : 1;
    }
  }
  BT_CHECK(t, wrong == 0);
  BT_CHECK(t, (once.status() == bt::Status::kOk) && (again.status() == bt::Status::kOk));
}

// --- misuse ----------------------------------------------------------------------------

void replay_refuses_a_changed_graph(bt_test::Context& t) {
  DoubleTape& tape = g_d0;
  DoubleTape& other = g_d1;
  tape.reset();
  other.reset();
  const bt::Mark start = tape.mark();
  const auto n = examples::tiny_graph(tape, 1.0, 2.0);
  const bt::Replay r = bt::replayable(tape, start, n.g);
  const double g0 = n.g.value();
  BT_CHECK(t, bt::set_value(tape, n.a, 3.0) == bt::Status::kOk);
  // Nodes recorded after it: refused, sticky, nothing computed.
  const bt::Mark end = tape.mark();
  const bt::Value<double> extra = n.g * n.a;
  BT_CHECK(t, extra.valid());
  BT_CHECK(t, bt::replay(tape, r) == bt::Status::kInvalidArgument);
  BT_CHECK(t, tape.status() == bt::Status::kInvalidArgument);
  BT_CHECK(t, n.g.value() == g0);
  tape.clear_status();
  // Rewound back to its end: the same size, a new generation: refused.
  BT_CHECK(t, tape.rewind(end) == bt::Status::kOk);
  BT_CHECK(t, tape.size() == r.end);
  BT_CHECK(t, bt::replay(tape, r) == bt::Status::kInvalidArgument);
  BT_CHECK(t, n.g.value() == g0);
  tape.clear_status();
  // Rewound to the start and recorded again (the same structure): the old
  // recording is gone, refused; a new one replays.
  BT_CHECK(t, tape.rewind(start) == bt::Status::kOk);
  const auto m = examples::tiny_graph(tape, 1.0, 2.0);
  BT_CHECK(t, bt::replay(tape, r) == bt::Status::kInvalidArgument);
  tape.clear_status();
  const bt::Replay r2 = bt::replayable(tape, start, m.g);
  BT_CHECK(t, bt::replay(tape, r2) == bt::Status::kOk);
  // Another tape's recording, an empty one, one after reset: refused.
  BT_CHECK(t, bt::replay(other, r2) == bt::Status::kInvalidArgument);
  BT_CHECK(t, other.status() == bt::Status::kInvalidArgument);
  BT_CHECK(t, bt::replay(tape, bt::Replay{}) == bt::Status::kInvalidArgument);
  tape.clear_status();
  tape.reset();
  static_cast<void>(examples::tiny_graph(tape, 1.0, 2.0));
  BT_CHECK(t, bt::replay(tape, r2) == bt::Status::kInvalidArgument);
  // A tape holding an error: its status, nothing computed.
  BT_CHECK(t, bt::replay_forward(tape, r2) == bt::Status::kInvalidArgument);
}

void replayable_refuses_what_it_cannot_replay(bt_test::Context& t) {
  DoubleTape& tape = g_d0;
  tape.reset();
  const bt::Mark start = tape.mark();
  const bt::Value<double> x = tape.leaf(1.0);
  // 0.1 is not a float: the double constant of x + 0.1 is not kept.
  const bt::Value<double> y = x + 0.1;
  BT_CHECK(t, std::isnan(bt::node_constant(tape, y.index())));
  BT_CHECK(t, bt::replayable(tape, start, y).tape == nullptr);
  BT_CHECK(t, tape.status() == bt::Status::kInvalidArgument);
  tape.clear_status();
  // 0.5 is: kept, read back by constant(), replayable.
  const bt::Value<double> z = x + 0.5;
  BT_CHECK(t, bt::node_constant(tape, z.index()) == 0.5);
  const bt::Mark mid = tape.mark();
  const bt::Value<double> w = 3.0 - z;
  BT_CHECK(t, bt::replayable(tape, mid, w).tape == &tape);
  // A root before the mark, a stale mark, a foreign root, an error.
  BT_CHECK(t, bt::replayable(tape, mid, z).tape == nullptr);
  tape.clear_status();
  DoubleTape& other = g_d1;
  other.reset();
  BT_CHECK(t, bt::replayable(tape, start, other.leaf(1.0)).tape == nullptr);
  tape.clear_status();
  BT_CHECK(t, tape.rewind(start) == bt::Status::kOk);
  static_cast<void>(tape.leaf(2.0) * 3.0);
  static_cast<void>(tape.leaf(2.0) * 3.0);
  BT_CHECK(t, bt::replayable(tape, mid, bt::Value<double>(&tape, 3U)).tape == nullptr);  // mid was discarded
  tape.clear_status();
  // A frozen-weight row cannot be re-evaluated (its bias is not kept).
  FloatTape& f = g_f0;
  f.reset();
  static const float kW[2] = {1.0F, 2.0F};
  const bt::Mark fs = f.mark();
  const bt::Value<float> a = f.leaf(1.0F);
  static_cast<void>(f.leaf(2.0F));
  const bt::View in{a.index(), 2U};
  const bt::View y2 = bt::matvec_frozen(f, bt::FrozenMatrix{bt::frozen_f32(kW), 1U, 2U}, bt::view_list(f, &in, 1U), nullptr);
  BT_CHECK(t, bt::replayable(f, fs, bt::Value<float>(&f, y2.first)).tape == nullptr);
  BT_CHECK(t, f.status() == bt::Status::kInvalidArgument);
}

// set(View, x): the run of a sample's features in one call, the same as
// one set() per node; refused with nothing written if a node of the view is
// not a leaf or input, the view is not recorded, or x is null.
void bulk_set(bt_test::Context& t) {
  FloatTape& tape = g_f0;
  tape.reset();
  const bt::Value<float> w = tape.param(2.0F);
  const bt::Value<float> x0 = tape.input(0.0F);
  static_cast<void>(tape.input(0.0F));
  static_cast<void>(tape.leaf(0.0F));
  const bt::Value<float> y = x0 * w;
  const float in[3] = {1.5F, -2.0F, 0.25F};
  BT_CHECK(t, bt::set_values(tape, bt::View{x0.index(), 3U}, in) == bt::Status::kOk);
  BT_CHECK(t, (tape.value(x0.index()) == 1.5F) && (tape.value(x0.index() + 1U) == -2.0F) &&
                  (tape.value(x0.index() + 2U) == 0.25F));
  const float other[4] = {7.0F, 7.0F, 7.0F, 7.0F};
  BT_CHECK(t, bt::set_values(tape, bt::View{x0.index(), 4U}, other) == bt::Status::kInvalidArgument);  // y is interior
  BT_CHECK(t, bt::set_values(tape, bt::View{x0.index(), 9U}, other) == bt::Status::kInvalidHandle);    // past the end
  BT_CHECK(t, bt::set_values(tape, bt::View{x0.index(), 2U}, nullptr) == bt::Status::kInvalidArgument);
  BT_CHECK(t, (tape.value(x0.index()) == 1.5F) && (y.value() == 0.0F));  // nothing written
  BT_CHECK(t, tape.status() == bt::Status::kOk);
}

void set_and_set_target_refuse_misuse(bt_test::Context& t) {
  FloatTape& tape = g_f0;
  tape.reset();
  const bt::Value<float> p = tape.param(0.5F);
  const bt::Value<float> z0 = tape.leaf(1.0F);
  static_cast<void>(tape.leaf(2.0F));
  static_cast<void>(tape.leaf(3.0F));
  const bt::Value<float> y = z0 * p;
  BT_CHECK(t, bt::set_value(tape, y, 1.0F) == bt::Status::kInvalidArgument);  // interior
  BT_CHECK(t, bt::set_value(tape, bt::Value<float>(&tape, 99U), 1.0F) == bt::Status::kInvalidHandle);
  BT_CHECK(t, bt::set_value(tape, bt::Value<float>(), 1.0F) == bt::Status::kInvalidHandle);
  BT_CHECK(t, (bt::set_value(tape, p, 0.25F) == bt::Status::kOk) && (p.value() == 0.25F));  // a parameter is a leaf
  const bt::Value<float> ce = nn::cross_entropy(tape, bt::View{z0.index(), 3U}, 1U);
  BT_CHECK(t, bt::nn::set_target(tape, ce, 3U) == bt::Status::kInvalidArgument);  // past the run
  BT_CHECK(t, bt::nn::set_target(tape, y, 0U) == bt::Status::kInvalidArgument);   // not a cross-entropy
  BT_CHECK(t, bt::nn::set_target(tape, ce, 2U) == bt::Status::kOk);
  BT_CHECK(t, bt::node_operands(tape, ce.index()).b == z0.index() + 2U);
  BT_CHECK(t, tape.status() == bt::Status::kOk);  // misuse of set: a value, not sticky
  static_cast<void>(tape.report(bt::Status::kCapacityExceeded));
  BT_CHECK(t, bt::set_value(tape, p, 1.0F) == bt::Status::kCapacityExceeded);
  BT_CHECK(t, p.value() == 0.25F);
}

const bt_test::TestCase kCases[] = {
    {"paper_graphs", paper_graphs},
    {"every_kind_of_op", every_kind_of_op},
    {"mlp_trained_by_replay", mlp_trained_by_replay},
    {"replay_refuses_a_changed_graph", replay_refuses_a_changed_graph},
    {"replayable_refuses_what_it_cannot_replay", replayable_refuses_what_it_cannot_replay},
    {"bulk_set", bulk_set},
    {"set_and_set_target_refuse_misuse", set_and_set_target_refuse_misuse},
};

}  // namespace

BT_TEST_MAIN("replay", kCases)
