// SPDX-License-Identifier: Apache-2.0
// nn memory plans, serial batches, the PRNG and initialisation, view list
// lists' error paths, and resuming from a checkpoint.
//  - A tape sized by a model's plan trains without kCapacityExceeded; one
//    node or one slot less fails cleanly (status set, nothing overwritten).
//  - Peak tape use of a serial batch does not depend on the batch size, and
//    its gradient is the mean of the per-sample gradients.
//  - PRNG outputs equal an independent Python implementation of xoshiro256**
//    (tests/golden/test_nn_golden.hpp); normals and fan-in inits have the moments
//    their closed forms give.
//  - Training resumed from a checkpoint (parameters, Adam moments, step
//    counters, PRNG state) continues the identical loss curve.
#include <burtorch/burtorch.hpp>
#include <burtorch/tools/checkpoint.hpp>
#include <burtorch/nn/nn.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <cstring>

#include "harness.hpp"
#include "golden/test_nn_golden.hpp"

namespace bt = burtorch;
namespace nn = burtorch::nn;

namespace {

#ifndef BURTORCH_TEST_SMALL_TARGET
#define BURTORCH_TEST_SMALL_TARGET 0
#endif

// Small enough for a 128 KB board in FP64 (tiny boards: smaller still); the
// paper's sizes run on 64-bit hosts (below).
#if BURTORCH_TEST_SMALL_TARGET
constexpr nn::MlpOptions kMlp{7U, 3U, 3U, 2U};
constexpr nn::GptOptions kGpt{5U, 2U, 4U, 2U, 1U, 1e-5};  // not run: stack and RAM
#else
constexpr nn::MlpOptions kMlp{27U, 16U, 8U, 4U};
constexpr nn::GptOptions kGpt{11U, 4U, 8U, 2U, 1U, 1e-5};
#endif
#if UINTPTR_MAX > 0xFFFFFFFFU
constexpr bool kBig = true;
constexpr nn::MlpOptions kPaperMlp{27U, 16U, 64U, 4U};
constexpr nn::GptOptions kPaperGpt{65U, 8U, 24U, 6U, 6U, 1e-5};
using SmallGptScalar = double;
constexpr std::size_t kArenaBytes = nn::Gpt<double>::plan(kPaperGpt, nn::OptimizerKind::kSgd).tape_bytes;
#else
constexpr bool kBig = false;
constexpr nn::MlpOptions kPaperMlp = kMlp;
constexpr nn::GptOptions kPaperGpt = kGpt;
using SmallGptScalar = float;  // the FP64 GPT tape does not fit 128 KB
constexpr std::size_t kGptBytes =
    BURTORCH_TEST_SMALL_TARGET ? 0U : nn::Gpt<float>::plan(kGpt, nn::OptimizerKind::kSgd).tape_bytes;
constexpr std::size_t kMlpBytes = nn::MakemoreMlp<double>::plan(kMlp, nn::OptimizerKind::kSgd).tape_bytes;
constexpr std::size_t kArenaBytes = (kGptBytes > kMlpBytes) ? kGptBytes : kMlpBytes;
#endif
constexpr std::size_t kMlpParams = nn::MakemoreMlp<double>::parameters(kMlp);
alignas(64) unsigned char g_arena[kArenaBytes];
alignas(64) unsigned char g_arena2[kMlpParams * sizeof(double)];

// Deterministic sample i of a toy task: context and target from the index.
void mlp_sample(std::size_t i, std::uint8_t* ctx, std::uint8_t* target, std::uint32_t vocab, std::size_t context) {
  for (std::size_t k = 0U; k < context; ++k) {
    ctx[k] = static_cast<std::uint8_t>(((i * 7U) + (k * 3U) + ((i * k) % 5U)) % vocab);
  }
  *target = static_cast<std::uint8_t>(((i * 11U) + 1U) % vocab);
}

template <class T>
void mlp_plan_case(bt_test::Context& t, const nn::MlpOptions& c, long node_delta, long slot_delta) {
  const nn::MemoryPlan plan = nn::MakemoreMlp<T>::plan(c, nn::OptimizerKind::kSgd);
  const std::size_t nodes = static_cast<std::size_t>(static_cast<long>(plan.nodes) + node_delta);
  const std::size_t slots = static_cast<std::size_t>(static_cast<long>(plan.slots) + slot_delta);
  BT_CHECK(t, bt::Tape<T>::bytes_required(nodes, slots, plan.parameters) <= sizeof(g_arena));
  bt::Tape<T> tape(g_arena, sizeof(g_arena), nodes, slots, plan.parameters);
  static nn::MakemoreMlp<T> model;
  nn::Rng rng(5U);
  BT_CHECK(t, model.create(tape, c, rng));
  BT_CHECK(t, model.params().count == plan.parameters);
  std::size_t peak_nodes = 0U;
  std::size_t peak_slots = 0U;
  const T loss = nn::serial_batch(tape, model.params(), 3U,
                                  [&](bt::Tape<T>& tp, std::size_t i) {
                                    std::uint8_t ctx[64] = {};
                                    std::uint8_t y = 0U;
                                    mlp_sample(i, ctx, &y, c.vocab, c.context);
                                    const bt::Value<T> l = model.loss(tp, ctx, y);
                                    peak_nodes = tp.size();
                                    peak_slots = tp.usage().slots;
                                    return l;
                                  });
  if ((node_delta == 0) && (slot_delta == 0)) {
    BT_CHECK(t, tape.status() == bt::Status::kOk);
    BT_CHECK(t, std::isfinite(static_cast<double>(loss)));
    BT_CHECK(t, peak_nodes == plan.nodes);
    BT_CHECK(t, peak_slots == plan.slots);
  } else {
    BT_CHECK(t, tape.status() == bt::Status::kCapacityExceeded);
    BT_CHECK(t, std::isnan(static_cast<double>(loss)));
    BT_CHECK(t, tape.size() <= tape.usage().node_capacity);
    BT_CHECK(t, tape.usage().slots <= tape.usage().slot_capacity);
  }
}

template <class T>
void gpt_plan_case(bt_test::Context& t, const nn::GptOptions& c, long node_delta, long slot_delta) {
  const nn::MemoryPlan plan = nn::Gpt<T>::plan(c, nn::OptimizerKind::kSgd);
  const std::size_t nodes = static_cast<std::size_t>(static_cast<long>(plan.nodes) + node_delta);
  const std::size_t slots = static_cast<std::size_t>(static_cast<long>(plan.slots) + slot_delta);
  BT_CHECK(t, bt::Tape<T>::bytes_required(nodes, slots, plan.parameters) <= sizeof(g_arena));
  bt::Tape<T> tape(g_arena, sizeof(g_arena), nodes, slots, plan.parameters);
  static nn::Gpt<T> model;
  nn::Rng rng(6U);
  BT_CHECK(t, model.create(tape, c, rng));
  BT_CHECK(t, model.params().count == plan.parameters);
  std::uint8_t tokens[64];
  std::uint8_t targets[64];
  for (std::size_t i = 0U; i < c.block; ++i) {
    tokens[i] = static_cast<std::uint8_t>((i * 5U + 2U) % c.vocab);
    targets[i] = static_cast<std::uint8_t>((i * 3U + 1U) % c.vocab);
  }
  std::size_t peak_nodes = 0U;
  std::size_t peak_slots = 0U;
  const T loss = nn::serial_batch(tape, model.params(), 2U,
                                  [&](bt::Tape<T>& tp, std::size_t) {
                                    const bt::Value<T> l = model.loss(tp, tokens, targets, c.block);
                                    peak_nodes = tp.size();
                                    peak_slots = tp.usage().slots;
                                    return l;
                                  });
  if ((node_delta == 0) && (slot_delta == 0)) {
    BT_CHECK(t, tape.status() == bt::Status::kOk);
    BT_CHECK(t, std::isfinite(static_cast<double>(loss)));
    BT_CHECK(t, peak_nodes == plan.nodes);
    BT_CHECK(t, peak_slots == plan.slots);
  } else {
    BT_CHECK(t, tape.status() == bt::Status::kCapacityExceeded);
    BT_CHECK(t, std::isnan(static_cast<double>(loss)));
    BT_CHECK(t, tape.size() <= tape.usage().node_capacity);
  }
}

void plan_mlp(bt_test::Context& t) {
  mlp_plan_case<double>(t, kMlp, 0, 0);
  mlp_plan_case<double>(t, kMlp, -1, 0);
  mlp_plan_case<double>(t, kMlp, 0, -1);
  mlp_plan_case<float>(t, kPaperMlp, 0, 0);
  mlp_plan_case<float>(t, kPaperMlp, -1, 0);
  mlp_plan_case<float>(t, kPaperMlp, 0, -1);
  // The paper's formula: d = 1,755 + 1,052 e.
  BT_CHECK(t, nn::MakemoreMlp<double>::parameters(nn::MlpOptions{27U, 16U, 64U, 4U}) == 5963U);
  BT_CHECK(t, nn::MakemoreMlp<double>::parameters(nn::MlpOptions{27U, 16U, 64U, 1024U}) == 1079003U);
  // Per sample: e + 27 + 2 nodes (the hidden layer's tanh is fused into
  // its rows); slots: the context's 16-run view list (1 + 2 * 16), a matvec
  // descriptor (4), the hidden view as a one-run list (3) and the output
  // matvec (4).
  BT_CHECK(t, nn::MakemoreMlp<float>::sample_nodes(nn::MlpOptions{27U, 16U, 64U, 4U}) == 33U);
  BT_CHECK(t, nn::MakemoreMlp<float>::sample_slots(nn::MlpOptions{27U, 16U, 64U, 4U}) == 44U);
  // Bytes add up: the tape object (the FixedTape of these capacities) plus
  // two Adam moments per parameter, padded to the tape's alignment.
  constexpr nn::MemoryPlan p = nn::MakemoreMlp<float>::plan(nn::MlpOptions{27U, 16U, 64U, 4U}, nn::OptimizerKind::kAdam);
  static_assert(p.tape_object_bytes == sizeof(bt::FixedTape<float, 5963U + 33U, 44U, 5963U>), "tape object");
  static_assert(p.optimizer_bytes == (2U * 5963U * sizeof(float)), "Adam's moments");
  constexpr std::size_t kAlign = bt::Tape<float>::kArrayAlign;
  BT_CHECK(t, p.tape_bytes == bt::Tape<float>::bytes_required(5963U + 33U, 44U, 5963U));
  BT_CHECK(t, p.bytes == (p.tape_object_bytes + ((((2U * 5963U * 4U) + kAlign) - 1U) / kAlign * kAlign)));
}

#if !BURTORCH_TEST_SMALL_TARGET
void plan_gpt(bt_test::Context& t) {
  gpt_plan_case<SmallGptScalar>(t, kGpt, 0, 0);
  gpt_plan_case<SmallGptScalar>(t, kGpt, -1, 0);
  gpt_plan_case<SmallGptScalar>(t, kGpt, 0, -1);
  gpt_plan_case<float>(t, kPaperGpt, 0, 0);
  gpt_plan_case<float>(t, kPaperGpt, -1, 0);
  // The paper's model: 46,337 parameters (tools/golden/nn/models.py counts
  // the same).
  BT_CHECK(t, nn::Gpt<double>::parameters(nn::GptOptions{65U, 8U, 24U, 6U, 6U, 1e-5}) == 46337U);
  BT_CHECK(t, kBig || (sizeof(void*) == 4U));
}
#endif

// Batch of b: the tape never holds more than one sample, and the gradient
// is the mean of the per-sample gradients.
void batch_is_serial(bt_test::Context& t) {
  const nn::MemoryPlan plan = nn::MakemoreMlp<double>::plan(kMlp, nn::OptimizerKind::kSgd);
  bt::Tape<double> tape(g_arena, sizeof(g_arena), plan.nodes, plan.slots, plan.parameters);
  static nn::MakemoreMlp<double> model;
  nn::Rng rng(9U);
  BT_CHECK(t, model.create(tape, kMlp, rng));
  const bt::View params = model.params();
  const bt::Index first = params.first;
  const std::size_t n = params.count;
  // Per-sample gradients, summed in a side buffer (g_arena2).
  double* sum = reinterpret_cast<double*>(g_arena2);  // BT-DEV-001: scratch carved from a byte buffer
  const std::size_t room = sizeof(g_arena2) / sizeof(double);
  BT_CHECK(t, n <= room);
  for (std::size_t i = 0U; i < n; ++i) {
    sum[i] = 0.0;
  }
  constexpr std::size_t kB = 16U;
  auto loss_of = [&](bt::Tape<double>& tp, std::size_t i) {
    std::uint8_t ctx[64] = {};
    std::uint8_t y = 0U;
    mlp_sample(i, ctx, &y, kMlp.vocab, kMlp.context);
    return model.loss(tp, ctx, y);
  };
  for (std::size_t s = 0U; s < kB; ++s) {
    static_cast<void>(nn::serial_batch(tape, params, 1U, [&](bt::Tape<double>& tp, std::size_t) {
      return loss_of(tp, s);
    }));
    for (std::size_t i = 0U; i < n; ++i) {
      sum[i] += tape.grads()[first + i];
    }
  }
  std::size_t peak = 0U;
  static_cast<void>(nn::serial_batch(tape, params, kB, [&](bt::Tape<double>& tp, std::size_t i) {
    const bt::Value<double> l = loss_of(tp, i);
    peak = (tp.size() > peak) ? tp.size() : peak;
    return l;
  }));
  BT_CHECK(t, peak == plan.nodes);
  bool all = true;
  for (std::size_t i = 0U; i < n; ++i) {
    all = all && bt_test::near(tape.grads()[first + i], sum[i] / kB, 1e-12, 1e-15);
  }
  BT_CHECK(t, all);
}

void rng_known_answers(bt_test::Context& t) {
  nn::Rng a(42U);
  for (unsigned long long expected : golden::rng_seed42_u64) {
    BT_CHECK(t, a.next_u64() == expected);
  }
  nn::Rng b(7U);
  for (double expected : golden::rng_seed7_uniform) {
    BT_CHECK(t, b.uniform() == expected);
  }
  // Python's math.log vs our portable logarithm: equal to a few ulp.
  nn::Rng c(7U);
  for (double expected : golden::rng_seed7_normal) {
    BT_CHECK_NEAR(t, c.normal(), expected, 1e-14);
  }
  // The same state after a round trip through state().
  nn::Rng d(99U);
  nn::Rng e(1U);
  std::memcpy(e.state(), d.state(), sizeof(std::uint64_t) * nn::Rng::kStateWords);
  BT_CHECK(t, d.next_u64() == e.next_u64());
  // below(n) stays below n.
  bool inside = true;
  for (int i = 0; i < 1000; ++i) {
    inside = inside && (d.below(27U) < 27U);
  }
  BT_CHECK(t, inside);
}

void portable_log_accuracy(bt_test::Context& t) {
  nn::Rng r(3U);
  double worst = 0.0;
  for (int i = 0; i < 2000; ++i) {
    const double x = std::ldexp(0.5 + r.uniform(), static_cast<int>(r.below(200U)) - 100);
    const double rel = std::fabs(nn::portable_log(x) - std::log(x)) / ((std::fabs(std::log(x)) > 1e-300) ? std::fabs(std::log(x)) : 1.0);
    worst = (rel > worst) ? rel : worst;
  }
  BT_CHECK(t, worst < 1e-14);
  BT_CHECK(t, nn::portable_log(1.0) == 0.0);
}

// narrow_to_float (integer arithmetic) against the compiler's conversion,
// bit for bit but for NaN payloads: random encodings (NaNs, infinities, subnormals of both), the
// doubles halfway between two floats and their neighbours, float's range
// ends.
void narrow_to_float_matches_cast(bt_test::Context& t) {
  const auto bits_of = [](float f) {
    std::uint32_t b = 0U;
    std::memcpy(&b, &f, sizeof(b));
    return b;
  };
  // A NaN stays a NaN (its payload is the C library's choice: the soft-float
  // conversion of a Cortex-M does not keep it).
  const auto same = [&](double x) {
    const float got = nn::narrow_to_float(x);
    const float want = static_cast<float>(x);
    return (std::isnan(want) && std::isnan(got)) || (bits_of(got) == bits_of(want));
  };
  long wrong = 0;
  std::uint64_t z = 0x1234567ULL;
  for (int i = 0; i < 200000; ++i) {
    z = (z * 6364136223846793005ULL) + 1442695040888963407ULL;
    double x = 0.0;
    const std::uint64_t any = z ^ (z >> 29U);
    std::memcpy(&x, &any, sizeof(x));
    wrong += same(x) ? 0 : 1;
    // an exponent near float's range: normal, subnormal and overflowing floats
    const std::uint64_t near = (any & 0x800FFFFFFFFFFFFFULL) | (static_cast<std::uint64_t>(850U + ((z >> 40U) % 320U)) << 52U);
    std::memcpy(&x, &near, sizeof(x));
    wrong += same(x) ? 0 : 1;
    // exactly halfway between two floats, and one double ulp either side
    const std::uint64_t tie = (near & ~((std::uint64_t{1} << 29U) - 1U)) | (std::uint64_t{1} << 28U);
    std::memcpy(&x, &tie, sizeof(x));
    wrong += (same(x) && same(std::nextafter(x, 0.0)) && same(std::nextafter(x, 1e300))) ? 0 : 1;
  }
  const double edges[] = {0.0, -0.0, 1.0, 0.1, 3.4028235677973366e38, 3.4028235677973362e38, 3.40282357e38, 1e39,
                          1.1754943508222875e-38, 1.401298464324817e-45, 7.006492321624085e-46, 7.0064923216240862e-46,
                          1e-300, 4.9e-324, std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()};
  for (const double x : edges) {
    wrong += (same(x) && same(-x)) ? 0 : 1;
  }
  BT_CHECK(t, wrong == 0);
}

// narrow_as<T>: a double option in T's precision, as static_cast<T> gives
// it; a LayerNorm<float> keeps its eps so rounded (no double arithmetic for
// it in a float firmware), a LayerNorm<double> keeps it whole.
void options_in_model_precision(bt_test::Context& t) {
  const double xs[] = {1e-5, 1e-12, 0.1, 2.0 / 3.0, 1e-45, 5e-324, 3.5e38, -7.25};
  for (const double x : xs) {
    BT_CHECK(t, nn::narrow_as<float>(x) == static_cast<float>(x));
    BT_CHECK(t, nn::narrow_as<double>(x) == x);
  }
  nn::Rng rng(3U);
  nn::LayerNormOptions o;
  o.width = 2U;
  o.eps = 1e-6;
  bt::FixedTape<float, 8U, 4U> tf;
  nn::LayerNorm<float> nf;
  BT_CHECK(t, nf.create(tf, o, rng));
  BT_CHECK(t, nf.eps == 1e-6F);
  bt::FixedTape<double, 8U, 4U> td;
  nn::LayerNorm<double> nd;
  BT_CHECK(t, nd.create(td, o, rng));
  BT_CHECK(t, nd.eps == 1e-6);
}

// A float model's draws (draw_float): Rng::uniform_float is uniform()'s top
// 24 bits; portable_logf within a few float ulp of the double logarithm;
// the moments and bounds as for double; a double model's draws (draw_as)
// are draw()'s, bit for bit.
void float_draws(bt_test::Context& t) {
  nn::Rng a(5U);
  nn::Rng b(5U);
  bool truncated = true;
  for (int i = 0; i < 1000; ++i) {
    const double wide = a.uniform();
    const float narrow = b.uniform_float();
    truncated = truncated && (static_cast<double>(narrow) == (std::floor(wide * 16777216.0) / 16777216.0));
  }
  BT_CHECK(t, truncated);
  nn::Rng r(3U);
  double worst = 0.0;
  for (int i = 0; i < 20000; ++i) {
    const float x = static_cast<float>(std::ldexp(0.5 + r.uniform(), static_cast<int>(r.below(280U)) - 150));
    const double exact = std::log(static_cast<double>(x));
    const double err = std::fabs(static_cast<double>(nn::portable_logf(x)) - exact);
    const double scale = (std::fabs(exact) > 1.0) ? std::fabs(exact) : 1.0;
    worst = (err / scale > worst) ? (err / scale) : worst;
  }
  BT_CHECK(t, worst < 4.0 * 5.96e-8);
  BT_CHECK(t, nn::portable_logf(1.0F) == 0.0F);
  constexpr int kN = 20000;
  const nn::Init init = nn::Init::fan_in_uniform(nn::kGainTanh);
  const float bound = static_cast<float>(nn::kGainTanh * std::sqrt(3.0 / 64.0));
  bool inside = true;
  double s2 = 0.0;
  for (int i = 0; i < kN; ++i) {
    const float w = nn::draw_as<float>(init, 64U, r);
    inside = inside && (std::fabs(w) <= bound * 1.0000002F);
    s2 += static_cast<double>(w) * w;
  }
  BT_CHECK(t, inside);
  BT_CHECK_NEAR(t, s2 / kN, (nn::kGainTanh * nn::kGainTanh) / 64.0, 0.05 * (nn::kGainTanh * nn::kGainTanh) / 64.0 * 20.0);
  double s1 = 0.0;
  s2 = 0.0;
  for (int i = 0; i < kN; ++i) {
    const double x = r.normal_float();
    s1 += x;
    s2 += x * x;
  }
  BT_CHECK(t, std::fabs(s1 / kN) < 5.0 / std::sqrt(double(kN)));
  BT_CHECK(t, std::fabs((s2 / kN) - 1.0) < 5.0 * std::sqrt(2.0 / kN));
  BT_CHECK(t, nn::draw_as<float>(nn::Init::constant(0.1), 3U, r) == 0.1F);
  nn::Rng c(9U);
  nn::Rng d(9U);
  bool identical = true;
  for (int i = 0; i < 1000; ++i) {
    const nn::Init each = ((i % 2) == 0) ? nn::Init::fan_in_normal(nn::kGainRelu) : nn::Init::uniform(-0.3, 0.7);
    identical = identical && (nn::draw_as<double>(each, 7U, c) == nn::draw(each, 7U, d));
  }
  BT_CHECK(t, identical);
}

// A float Linear made from options the compiler knows (constexpr, as the
// docs write them; create() then draws through known_uniform's bounds)
// holds the same parameters, bit for bit, as one made from the same options
// known only at run time (through a volatile) and as draw_float's draws
// from an Rng of the same seed (weights first, then biases); every
// parameter inside torch.nn.Linear's bound 1/sqrt(in). For the default
// init, a kUniform one and a normal one (which always takes draw_float).
constexpr nn::LinearOptions known_options(bt::Index in, bt::Index out, nn::Init init) noexcept {
  nn::LinearOptions o{};
  o.in = in;
  o.out = out;
  o.act = nn::Activation::kTanh;
  if (init.kind != nn::InitKind::kFanInUniform) {
    o.weight_init = init;
    o.bias_init = init;
  }
  return o;
}
constexpr nn::LinearOptions kKnownDefault = known_options(5U, 3U, nn::Init::fan_in_uniform(0.0));  // the default kept
constexpr nn::LinearOptions kKnownUniform = known_options(4U, 2U, nn::Init::uniform(-0.3, 0.7));
constexpr nn::LinearOptions kKnownNormal = known_options(3U, 2U, nn::Init::normal(0.1, 0.5));

void known_case(bt_test::Context& t, const nn::LinearOptions& known, double bound) {
  static bt::FixedTape<float, 24U, 8U> a;
  static bt::FixedTape<float, 24U, 8U> b;
  a.reset();
  b.reset();
  volatile bt::Index hidden_in = known.in;  // not known to the compiler
  nn::LinearOptions at_run_time = known;
  at_run_time.in = hidden_in;
  nn::Rng ra(21U);
  nn::Rng rb(21U);
  nn::Rng rc(21U);
  nn::Linear<float> la;
  nn::Linear<float> lb;
  BT_CHECK(t, la.create(a, known, ra));
  BT_CHECK(t, lb.create(b, at_run_time, rb));
  const bt::View pa = la.params();
  const bt::View pb = lb.params();
  BT_CHECK(t, (pa.count == (known.in * known.out) + known.out) && (pb.count == pa.count));
  bool same = true;
  bool drawn = true;
  bool inside = true;
  for (bt::Index k = 0U; k < pa.count; ++k) {
    const float x = a.value(pa.first + k);
    const float y = b.value(pb.first + k);
    const nn::Init& init = (k < (known.in * known.out)) ? known.weight_init : known.bias_init;
    const float z = nn::draw_float(init, known.in, rc);
    std::uint32_t bx = 0U;
    std::uint32_t by = 0U;
    std::uint32_t bz = 0U;
    std::memcpy(&bx, &x, sizeof(bx));
    std::memcpy(&by, &y, sizeof(by));
    std::memcpy(&bz, &z, sizeof(bz));
    same = same && (bx == by);
    drawn = drawn && (bx == bz);
    inside = inside && ((bound <= 0.0) || (std::fabs(static_cast<double>(x)) <= bound));
  }
  BT_CHECK(t, same);
  BT_CHECK(t, drawn);
  BT_CHECK(t, inside);
}

void linear_draws_from_known_options(bt_test::Context& t) {
  known_case(t, kKnownDefault, 1.0 / std::sqrt(5.0) * 1.0000001);
  BT_CHECK(t, (kKnownDefault.weight_init.a == nn::kGainLinearDefault) &&
                  (kKnownDefault.bias_init.a == nn::kGainLinearDefault));
  known_case(t, kKnownUniform, 0.7);
  known_case(t, kKnownNormal, 0.0);
}

// Moments of 20,000 draws against the closed forms (5 standard errors).
void init_moments(bt_test::Context& t) {
  nn::Rng r(11U);
  constexpr int kN = 20000;
  double s1 = 0.0;
  double s2 = 0.0;
  for (int i = 0; i < kN; ++i) {
    const double x = r.normal();
    s1 += x;
    s2 += x * x;
  }
  BT_CHECK(t, std::fabs(s1 / kN) < 5.0 / std::sqrt(double(kN)));
  BT_CHECK(t, std::fabs((s2 / kN) - 1.0) < 5.0 * std::sqrt(2.0 / kN));
  // Fan-in uniform with the tanh gain: |w| <= gain*sqrt(3/fan_in), variance gain^2/fan_in.
  const nn::Init init = nn::Init::fan_in_uniform(nn::kGainTanh);
  const double bound = nn::kGainTanh * std::sqrt(3.0 / 64.0);
  bool inside = true;
  s2 = 0.0;
  for (int i = 0; i < kN; ++i) {
    const double w = nn::draw(init, 64U, r);
    inside = inside && (std::fabs(w) <= bound);
    s2 += w * w;
  }
  BT_CHECK(t, inside);
  const double var = (nn::kGainTanh * nn::kGainTanh) / 64.0;
  BT_CHECK_NEAR(t, s2 / kN, var, 0.05);
  // Fan-in normal with the ReLU gain: variance 2/fan_in.
  s2 = 0.0;
  for (int i = 0; i < kN; ++i) {
    const double w = nn::draw(nn::Init::fan_in_normal(nn::kGainRelu), 10U, r);
    s2 += w * w;
  }
  BT_CHECK_NEAR(t, s2 / kN, 0.2, 0.05);
  // Same seed, same weights (in float too).
  nn::Rng a(123U);
  nn::Rng b(123U);
  BT_CHECK(t, static_cast<float>(nn::draw(nn::Init::normal(0.0, 0.02), 1U, a)) ==
                  static_cast<float>(nn::draw(nn::Init::normal(0.0, 0.02), 1U, b)));
}

void view_list_errors(bt_test::Context& t) {
  // 12 nodes are used; the micro:bit's arena holds 32 double nodes, not 64.
  constexpr std::size_t kCap = BURTORCH_TEST_SMALL_TARGET ? 32U : 64U;
  bt::Tape<double> tape(g_arena, sizeof(g_arena), kCap, kCap);
  for (int i = 0; i < 8; ++i) {
    static_cast<void>(tape.param(1.0 + i));
  }
  const bt::Mark m = tape.mark();
  const bt::Value<double> x0 = tape.leaf(2.0);
  const bt::Value<double> x1 = tape.leaf(3.0);
  const bt::View runs[2] = {{x0.index(), 1U}, {x1.index(), 1U}};
  const bt::ViewList list = bt::view_list(tape, runs, 2U);
  BT_CHECK(t, list.total == 2U);
  // w = params 0, 1 = (1, 2): 1*2 + 2*3 = 8.
  const bt::Value<double> y = bt::inner_product(tape, 0U, list, nullptr);
  BT_CHECK(t, y.value() == 8.0);
  BT_CHECK(t, tape.backward(y) == bt::Status::kOk);
  BT_CHECK(t, tape.grad(0U) == 2.0 && tape.grad(1U) == 3.0 && x1.grad() == 2.0);
  // A weight range past the end of the tape.
  static_cast<void>(bt::inner_product(tape, static_cast<bt::Index>(tape.size()) - 1U, list, nullptr));
  BT_CHECK(t, tape.status() == bt::Status::kInvalidHandle);
  tape.clear_status();
  // A run that is not on the tape.
  const bt::View bad = {1000U, 4U};
  BT_CHECK(t, bt::view_list(tape, &bad, 1U).slot == bt::kNoIndex);
  BT_CHECK(t, tape.status() == bt::Status::kInvalidHandle);
  tape.clear_status();
  // After a rewind past the list, it is rejected, not read.
  BT_CHECK(t, tape.rewind(m) == bt::Status::kOk);
  static_cast<void>(bt::inner_product(tape, 0U, list, nullptr));
  BT_CHECK(t, tape.status() == bt::Status::kInvalidArgument);
  BT_CHECK(t, tape.size() == 8U);
}

// matvec: a layer's rows share one descriptor. Dyadic values, so every sum
// is exact and the closed forms below must match bit for bit.
void matvec_rows(bt_test::Context& t) {
  constexpr bt::Index kRows = 3U;
  constexpr bt::Index kIn = 4U;
  constexpr std::size_t kCap = BURTORCH_TEST_SMALL_TARGET ? 32U : 64U;
  bt::Tape<double> tape(g_arena, sizeof(g_arena), kCap, kCap);
  double w[kRows * kIn];
  double bias[kRows];
  for (bt::Index k = 0U; k < (kRows * kIn); ++k) {
    w[k] = -1.0 + (0.25 * static_cast<double>(k));
    static_cast<void>(tape.param(w[k]));
  }
  for (bt::Index o = 0U; o < kRows; ++o) {
    bias[o] = 0.5 * static_cast<double>(o + 1U);
    static_cast<void>(tape.param(bias[o]));
  }
  const double x[kIn] = {1.5, -2.0, 0.75, 3.0};
  // Two runs with a node between them: x0 x1 | spacer | x2 x3.
  const bt::Index x0 = tape.leaf(x[0]).index();
  static_cast<void>(tape.leaf(x[1]));
  static_cast<void>(tape.leaf(100.0));
  const bt::Index x2 = tape.leaf(x[2]).index();
  static_cast<void>(tape.leaf(x[3]));
  const bt::View runs[2] = {{x0, 2U}, {x2, 2U}};
  const bt::ViewList list = bt::view_list(tape, runs, 2U);
  const std::size_t slots_before = tape.usage().slots;
  const bt::View y_view = bt::matvec(tape, 0U, kRows, list, kRows * kIn);
  const bt::Value<double> y(&tape, y_view.first);  // the first output (invalid for kNoView)
  BT_CHECK(t, y.valid());
  BT_CHECK(t, tape.usage().slots == slots_before + 4U);  // one descriptor for all rows
  for (bt::Index o = 0U; o < kRows; ++o) {
    double expect = bias[o];
    for (bt::Index k = 0U; k < kIn; ++k) {
      expect += w[(o * kIn) + k] * x[k];
    }
    BT_CHECK(t, tape.value(y.index() + o) == expect);
    BT_CHECK(t, bt::node_op(tape, y.index() + o) == bt::Op::kMatRow);
  }
  // L = 1*y0 - 2*y1 + 3*y2: dW[o][k] = c_o x_k, db_o = c_o, dx_k = sum_o c_o W[o][k].
  const double c[kRows] = {1.0, -2.0, 3.0};
  bt::Value<double> terms[kRows];
  for (bt::Index o = 0U; o < kRows; ++o) {
    terms[o] = bt::Value<double>(&tape, y.index() + o) * c[o];
  }
  const bt::Value<double> loss = bt::reduce_sum(terms, kRows);
  BT_CHECK(t, tape.backward(loss) == bt::Status::kOk);
  for (bt::Index o = 0U; o < kRows; ++o) {
    for (bt::Index k = 0U; k < kIn; ++k) {
      BT_CHECK(t, tape.grad((o * kIn) + k) == c[o] * x[k]);
    }
    BT_CHECK(t, tape.grad((kRows * kIn) + o) == c[o]);
  }
  const bt::Index xs[kIn] = {x0, x0 + 1U, x2, x2 + 1U};
  for (bt::Index k = 0U; k < kIn; ++k) {
    double expect = 0.0;
    for (bt::Index o = 0U; o < kRows; ++o) {
      expect += c[o] * w[(o * kIn) + k];
    }
    BT_CHECK(t, tape.grad(xs[k]) == expect);
  }
  BT_CHECK(t, tape.grad(x2 - 1U) == 0.0);  // the spacer is not an operand

  // Errors record a status and add no node and no slot.
  const std::size_t size = tape.size();
  const std::size_t used = tape.usage().slots;
  const auto rejected = [&](bt::Status want) {
    const bool same = (tape.size() == size) && (tape.usage().slots == used) && (tape.status() == want);
    tape.clear_status();
    return same;
  };
  static_cast<void>(bt::matvec(tape, 0U, 0U, list, bt::kNoIndex));
  BT_CHECK(t, rejected(bt::Status::kInvalidArgument));
  // Weights past the end: 4 rows of 4 need 16 nodes, 15 are left.
  static_cast<void>(bt::matvec(tape, static_cast<bt::Index>(size) - 15U, 4U, list, bt::kNoIndex));
  BT_CHECK(t, rejected(bt::Status::kInvalidHandle));
  // rows * length beyond 32 bits must not wrap into range.
  static_cast<void>(bt::matvec(tape, 0U, 0x80000000U, list, bt::kNoIndex));
  BT_CHECK(t, rejected(bt::Status::kInvalidHandle));
  // Bias rows past the end.
  static_cast<void>(bt::matvec(tape, 0U, kRows, list, static_cast<bt::Index>(size) - 2U));
  BT_CHECK(t, rejected(bt::Status::kInvalidHandle));

  // Capacity: a tape with room for exactly the rows and the descriptor
  // works; one node or one slot less records nothing. (These tapes reuse
  // the arena: the first tape is not used again.)
  for (int less = 0; less < 3; ++less) {
    constexpr bt::Index kTwoRows = 2U;
    const std::size_t nodes = 2U + 2U + kTwoRows - ((less == 1) ? 1U : 0U);
    const std::size_t slots = 3U + 4U - ((less == 2) ? 1U : 0U);
    bt::Tape<double> small(g_arena, sizeof(g_arena), nodes, slots);
    static_cast<void>(small.param(1.0));
    static_cast<void>(small.param(2.0));
    const bt::Value<double> a = small.leaf(3.0);
    static_cast<void>(small.leaf(4.0));
    const bt::View one = {a.index(), 2U};
    const bt::ViewList l = bt::view_list(small, &one, 1U);
    // Rows of 2 weights from node 0, overlapping the inputs: allowed (any recorded nodes).
    const bt::View r_view = bt::matvec(small, 0U, kTwoRows, l, bt::kNoIndex);
  const bt::Value<double> r(&small, r_view.first);  // the first output (invalid for kNoView)
    if (less == 0) {
      BT_CHECK(t, r.valid() && (small.status() == bt::Status::kOk));
      BT_CHECK(t, r.value() == (1.0 * 3.0) + (2.0 * 4.0));
      const bt::View r2_view = bt::matvec(small, 0U, 1U, l, bt::kNoIndex);
  const bt::Value<double> r2(&small, r2_view.first);  // the first output (invalid for kNoView)
      BT_CHECK(t, !r2.valid() && (small.status() == bt::Status::kCapacityExceeded));  // slots are used up
    } else {
      BT_CHECK(t, !r.valid() && (small.status() == bt::Status::kCapacityExceeded));
      BT_CHECK(t, (small.size() == 4U) && (small.usage().slots == 3U));
    }
  }
}

// dot_ranges and scale_shift: range operands given by their first nodes.
// Dyadic values: every result is exact, so closed forms compare with ==.
void range_ops(bt_test::Context& t) {
  constexpr std::size_t kCap = BURTORCH_TEST_SMALL_TARGET ? 32U : 64U;
  bt::Tape<double> tape(g_arena, sizeof(g_arena), kCap, kCap);
  const double a[3] = {1.5, -2.0, 0.25};
  const double b[3] = {4.0, 0.5, -8.0};
  const double c[3] = {0.75, 1.0, -0.5};
  const bt::Index a0 = static_cast<bt::Index>(tape.size());
  for (double x : a) {
    static_cast<void>(tape.param(x));
  }
  const bt::Index b0 = static_cast<bt::Index>(tape.size());
  for (double x : b) {
    static_cast<void>(tape.leaf(x));
  }
  const bt::Index c0 = static_cast<bt::Index>(tape.size());
  for (double x : c) {
    static_cast<void>(tape.leaf(x));
  }
  const bt::Value<double> bias = tape.leaf(10.0);
  // dot_ranges: a . b + bias = 6 - 1 - 2 + 10 = 13; d/da = b, d/db = a, d/dbias = 1.
  const bt::Value<double> d = bt::inner_product(tape, bt::View{a0, 3U}, bt::View{b0, 3U}, &bias);
  BT_CHECK(t, d.value() == 13.0);
  BT_CHECK(t, bt::node_op(tape, d.index()) == bt::Op::kDotRR);
  BT_CHECK(t, tape.backward(d) == bt::Status::kOk);
  for (bt::Index i = 0U; i < 3U; ++i) {
    BT_CHECK(t, tape.grad(a0 + i) == b[i]);
    BT_CHECK(t, tape.grad(b0 + i) == a[i]);
  }
  BT_CHECK(t, bias.grad() == 1.0);
  tape.zero_grad();
  // scale_shift: y_o = b_o * a_o + c_o; L = y0 - 2 y1 + 3 y2.
  const std::size_t slots_before = tape.usage().slots;
  const bt::View y_view = bt::scale_shift(tape, a0, b0, c0, 3U);
  const bt::Value<double> y(&tape, y_view.first);  // the first output (invalid for kNoView)
  BT_CHECK(t, y.valid() && (tape.usage().slots == slots_before + 3U));
  const double w[3] = {1.0, -2.0, 3.0};
  bt::Value<double> terms[3];
  for (bt::Index o = 0U; o < 3U; ++o) {
    BT_CHECK(t, tape.value(y.index() + o) == (b[o] * a[o]) + c[o]);
    BT_CHECK(t, bt::node_op(tape, y.index() + o) == bt::Op::kScaleShift);
    terms[o] = bt::Value<double>(&tape, y.index() + o) * w[o];
  }
  BT_CHECK(t, tape.backward(bt::reduce_sum(terms, 3U)) == bt::Status::kOk);
  for (bt::Index o = 0U; o < 3U; ++o) {
    BT_CHECK(t, tape.grad(a0 + o) == w[o] * b[o]);
    BT_CHECK(t, tape.grad(b0 + o) == w[o] * a[o]);
    BT_CHECK(t, tape.grad(c0 + o) == w[o]);
  }
  // The same run as scale and input: y = x * x + c, dy/dx = 2x.
  tape.zero_grad();
  const bt::View sq_view = bt::scale_shift(tape, b0, b0, c0, 1U);
  const bt::Value<double> sq(&tape, sq_view.first);  // the first output (invalid for kNoView)
  BT_CHECK(t, sq.value() == (b[0] * b[0]) + c[0]);
  BT_CHECK(t, tape.backward(sq) == bt::Status::kOk);
  BT_CHECK(t, tape.grad(b0) == 2.0 * b[0]);

  // Errors record a status and add no node and no slot.
  const std::size_t size = tape.size();
  const std::size_t used = tape.usage().slots;
  const auto rejected = [&](bt::Status want) {
    const bool same = (tape.size() == size) && (tape.usage().slots == used) && (tape.status() == want);
    tape.clear_status();
    return same;
  };
  const bt::Index last = static_cast<bt::Index>(size) - 1U;
  static_cast<void>(bt::inner_product(tape, bt::View{a0, 0U}, bt::View{b0, 0U}, nullptr));
  BT_CHECK(t, rejected(bt::Status::kInvalidArgument));
  static_cast<void>(bt::inner_product(tape, bt::View{last, 2U}, bt::View{b0, 2U}, nullptr));  // runs past the end
  BT_CHECK(t, rejected(bt::Status::kInvalidHandle));
  static_cast<void>(bt::inner_product(tape, bt::View{a0, 1U}, bt::View{bt::kNoIndex, 1U}, nullptr));
  BT_CHECK(t, rejected(bt::Status::kInvalidHandle));
  static_cast<void>(bt::scale_shift(tape, a0, b0, c0, 0U));
  BT_CHECK(t, rejected(bt::Status::kInvalidArgument));
  static_cast<void>(bt::scale_shift(tape, a0, b0, last, 2U));
  BT_CHECK(t, rejected(bt::Status::kInvalidHandle));
  static_cast<void>(bt::scale_shift(tape, a0, 0xFFFFFFF0U, c0, 0x20U));  // wraps past 2^32
  BT_CHECK(t, rejected(bt::Status::kInvalidHandle));
  bt::FixedTape<double, 4> other;
  const bt::Value<double> foreign = other.leaf(1.0);
  static_cast<void>(bt::inner_product(tape, bt::View{a0, 3U}, bt::View{b0, 3U}, &foreign));
  BT_CHECK(t, rejected(bt::Status::kForeignValue));

  // Capacity: room for exactly the outputs and the descriptor works; one
  // node or one slot less records nothing. (These tapes reuse the arena.)
  for (int less = 0; less < 3; ++less) {
    const std::size_t nodes = 4U + 2U - ((less == 1) ? 1U : 0U);
    const std::size_t slots = 3U - ((less == 2) ? 1U : 0U);
    bt::Tape<double> small(g_arena, sizeof(g_arena), nodes, slots);
    static_cast<void>(small.param(2.0));
    static_cast<void>(small.param(3.0));
    static_cast<void>(small.leaf(5.0));
    static_cast<void>(small.leaf(7.0));
    const bt::View r_view = bt::scale_shift(small, 0U, 2U, 0U, 2U);
  const bt::Value<double> r(&small, r_view.first);  // the first output (invalid for kNoView)  // x * s + s
    if (less == 0) {
      BT_CHECK(t, r.valid() && (r.value() == (5.0 * 2.0) + 2.0) && (small.size() == 6U));
    } else {
      BT_CHECK(t, !r.valid() && (small.status() == bt::Status::kCapacityExceeded));
      BT_CHECK(t, (small.size() == 4U) && (small.usage().slots == 0U));
    }
  }
}

// Train 6 Adam steps; separately train 3, checkpoint to memory, restore into
// a fresh tape and model initialised differently, train 3 more: the last
// three losses are bit-identical.
void resume_continues_curve(bt_test::Context& t) {
  using T = double;
  const nn::MemoryPlan plan = nn::MakemoreMlp<T>::plan(kMlp, nn::OptimizerKind::kAdam);
  const std::size_t n = plan.parameters;
  static T moments[2U * kMlpParams];
  static std::uint8_t bytes[bt::checkpoint_overhead(3U) + 64U + (3U * kMlpParams * sizeof(T))];
  nn::OptimizerOptions<T> oc;
  oc.kind = nn::OptimizerKind::kAdam;
  oc.lr = 0.01;
  struct Counters {
    std::uint64_t step;
    std::uint64_t optimizer_steps;
    std::uint64_t rng[nn::Rng::kStateWords];
  };
  auto train = [&](bt::Tape<T>& tape, nn::MakemoreMlp<T>& model, nn::Optimizer<T>& opt, nn::Rng& batches,
                   int steps, T* losses) {
    for (int s = 0; s < steps; ++s) {
      std::uint32_t ids[4];
      for (std::uint32_t& id : ids) {
        id = batches.below(1000U);
      }
      losses[s] = nn::serial_batch(tape, model.params(), 4U, [&](bt::Tape<T>& tp, std::size_t i) {
        std::uint8_t ctx[64] = {};
        std::uint8_t y = 0U;
        mlp_sample(ids[i], ctx, &y, kMlp.vocab, kMlp.context);
        return model.loss(tp, ctx, y);
      });
      BT_CHECK(t, opt.step(tape, model.params()) == bt::Status::kOk);
    }
  };
  T full[6];
  {
    bt::Tape<T> tape(g_arena, sizeof(g_arena), plan.nodes, plan.slots, plan.parameters);
    static nn::MakemoreMlp<T> model;
    nn::Rng init(1U);
    BT_CHECK(t, model.create(tape, kMlp, init));
    nn::Optimizer<T> opt(oc, moments);
    nn::Rng batches(2U);
    train(tape, model, opt, batches, 6, full);
  }
  T resumed[6];
  bt::MemoryStream stream{bytes, sizeof(bytes), 0U, 0U};
  {
    bt::Tape<T> tape(g_arena, sizeof(g_arena), plan.nodes, plan.slots, plan.parameters);
    static nn::MakemoreMlp<T> model;
    nn::Rng init(1U);
    BT_CHECK(t, model.create(tape, kMlp, init));
    nn::Optimizer<T> opt(oc, moments);
    nn::Rng batches(2U);
    train(tape, model, opt, batches, 3, resumed);
    Counters c{3U, opt.steps(), {}};
    std::memcpy(c.rng, batches.state(), sizeof(c.rng));
    const bt::Section sections[3] = {{&c, sizeof(c), 1U},
                                     {tape.values() + model.params().first, n * sizeof(T), 2U},
                                     {moments, 2U * n * sizeof(T), 3U}};
    BT_CHECK(t, bt::save_checkpoint(bt::memory_sink(&stream), bt::ScalarKind::kFloat64, sections, 3U) ==
                    bt::Status::kOk);
  }
  {
    bt::Tape<T> tape(g_arena, sizeof(g_arena), plan.nodes, plan.slots, plan.parameters);
    static nn::MakemoreMlp<T> model;
    nn::Rng init(777U);  // different weights: the checkpoint must replace them
    BT_CHECK(t, model.create(tape, kMlp, init));
    nn::Optimizer<T> opt(oc, moments);  // zeroes the moments: must be restored
    nn::Rng batches(555U);
    Counters c{0U, 0U, {}};
    const bt::Section sections[3] = {{&c, sizeof(c), 1U},
                                     {tape.values() + model.params().first, n * sizeof(T), 2U},
                                     {moments, 2U * n * sizeof(T), 3U}};
    BT_CHECK(t, bt::load_checkpoint(bt::memory_source(&stream), bt::ScalarKind::kFloat64, sections, 3U) ==
                    bt::Status::kOk);
    BT_CHECK(t, c.step == 3U);
    *opt.step_counter() = c.optimizer_steps;
    std::memcpy(batches.state(), c.rng, sizeof(c.rng));
    train(tape, model, opt, batches, 3, resumed + 3);
  }
  for (int s = 0; s < 6; ++s) {
    BT_CHECK(t, resumed[s] == full[s]);
  }
  BT_CHECK(t, std::isfinite(full[5]) && (full[5] != full[2]));
}

// A plan too large for this target's size_t never wraps to a small number.
void plan_sizes_saturate(bt_test::Context& t) {
  constexpr std::size_t kMax = std::numeric_limits<std::size_t>::max();
  constexpr auto huge = nn::make_plan<float>(kMax / 2U, kMax / 2U + 8U, 16U, nn::OptimizerKind::kAdam);
  static_assert(huge.bytes == kMax, "a plan that cannot exist is kTooLarge");
  BT_CHECK(t, (huge.nodes == kMax) && (huge.tape_bytes == kMax) && (huge.tape_object_bytes == kMax) && (huge.bytes == kMax));
  // Adam's state of 2^30 + 1 FP32 parameters: 8 GiB + 8 bytes, which wraps
  // on a 32-bit target; exact on a 64-bit one.
  constexpr std::size_t params = (std::size_t{1} << 30U) + 1U;
  constexpr auto adam = nn::make_plan<float>(params, 8U, 8U, nn::OptimizerKind::kAdam);
  if (sizeof(std::size_t) == 4U) {
    BT_CHECK(t, (adam.optimizer_bytes == kMax) && (adam.bytes == kMax));
  } else {
    BT_CHECK(t, static_cast<std::uint64_t>(adam.optimizer_bytes) == (static_cast<std::uint64_t>(params) * 8U));
    constexpr std::size_t kAlign = bt::Tape<float>::kArrayAlign;
    BT_CHECK(t, adam.bytes == (adam.tape_object_bytes + (((adam.optimizer_bytes + kAlign) - 1U) / kAlign * kAlign)));
  }
  static_assert(adam.bytes > 65536U, "never a small number");
}

const bt_test::TestCase kCases[] = {
    {"plan_sizes_saturate", plan_sizes_saturate},
    {"plan_mlp", plan_mlp},
#if !BURTORCH_TEST_SMALL_TARGET
    {"plan_gpt", plan_gpt},
#endif
    {"batch_is_serial", batch_is_serial},
    {"rng_known_answers", rng_known_answers},
    {"portable_log_accuracy", portable_log_accuracy},
    {"init_moments", init_moments},
    {"narrow_to_float_matches_cast", narrow_to_float_matches_cast},
    {"float_draws", float_draws},
    {"linear_draws_from_known_options", linear_draws_from_known_options},
    {"options_in_model_precision", options_in_model_precision},
    {"view_list_errors", view_list_errors},
    {"matvec_rows", matvec_rows},
    {"range_ops", range_ops},
    {"resume_continues_curve", resume_continues_curve},
};

}  // namespace

BT_TEST_MAIN("nn_plan", kCases)
