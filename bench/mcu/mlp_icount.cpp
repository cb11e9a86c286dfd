// SPDX-License-Identifier: Apache-2.0
// Instructions per training step of a ReLU MLP (in -> hidden -> out, FP32,
// softmax cross-entropy, plain SGD, batch 8 run one sample at a time),
// trained by the library (nn::Linear, nn::cross_entropy, nn::serial_batch,
// nn::Optimizer with SGD) and by the hand-written reference trainer
// (handwritten_mlp.hpp): same initial weights, same synthetic data (drawn
// here from a fixed seed), same number of steps. Measured by tools/icount
// under qemu-system-arm -icount (icount.hpp).
//
// Exits 1 unless both trainers end at the same mean loss of the last batch
// to 6 significant digits (relative difference at most kParity) and below
// the loss of their first batch.
//
// The library trains twice: recording every sample (nn::serial_batch with
// the optimizer) and by replay (one recording, Tape::replay per sample);
// both must end at the same losses bit for bit.
//
// Output per model: "icount mlp <in> <hidden> <out> <steps> <batch> <MACs
// per step> <hand ticks> <hand first loss> <hand last loss> <library
// ticks> <library first loss> <library last loss>"; ticks cover all steps.
// Then "icount mlp-replay <in> <hidden> <out> <ticks> <first loss> <last
// loss>" for the training by replay.
// MACs per step: batch * (forward in*hidden + hidden*out, the same again
// for the weight gradients, hidden*out for the hidden layer's gradient).
//
// The two trainers run one after the other in one static arena (the 16 KiB
// board has no room for both at once).
#include <burtorch/burtorch.hpp>
#include <burtorch/nn/nn.hpp>
#include <burtorch/port/port.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "handwritten_mlp.hpp"
#include "icount.hpp"

namespace bt = burtorch;
namespace nn = burtorch::nn;

namespace {

constexpr std::size_t kBatch = 8U;
constexpr float kLr = 0.1F;
constexpr double kParity = 5e-6;
constexpr std::uint64_t kDataSeed = 2024U;
constexpr std::uint64_t kInitSeed = 7U;

// Steps per model: 200, or fewer for a profile run (tools/icount --profile).
#ifndef ICOUNT_MLP_STEPS
#define ICOUNT_MLP_STEPS 200U
#endif
// 0: without the training by replay (Tape::replay instantiates the forward
// of every core op, tanhf and expf included): the firmware then links only
// what an SGD + ReLU trainer records, which is what docs/training.md shows.
#ifndef ICOUNT_MLP_REPLAY
#define ICOUNT_MLP_REPLAY 1
#endif

constexpr handwritten::Shape kSmall{16U, 32U, 4U};
constexpr handwritten::Shape kLarge{64U, 128U, 10U};

#if ICOUNT_SMALL_BOARD
// 16 KiB of RAM: the small model only, 16 stored samples.
constexpr handwritten::Shape kShapes[] = {kSmall};
constexpr std::size_t kSamples = 16U;
constexpr std::size_t kMaxIn = kSmall.in;
constexpr std::uint32_t kSteps = ICOUNT_MLP_STEPS;
#else
constexpr handwritten::Shape kShapes[] = {kSmall, kLarge};
constexpr std::size_t kSamples = 256U;
constexpr std::size_t kMaxIn = kLarge.in;
constexpr std::uint32_t kSteps = ICOUNT_MLP_STEPS;
#endif

// The library's layers for a shape: ReLU hidden layer, linear output; fan-in
// uniform weights, biases U(-0.1, 0.1) (what the hand-written trainer copies).
constexpr nn::LinearOptions hidden_options(handwritten::Shape s) {
  nn::LinearOptions o{};
  o.in = static_cast<bt::Index>(s.in);
  o.out = static_cast<bt::Index>(s.hidden);
  o.act = nn::Activation::kRelu;
  o.weight_init = nn::Init::fan_in_uniform(nn::kGainRelu);
  o.bias_init = nn::Init::uniform(-0.1, 0.1);
  return o;
}
constexpr nn::LinearOptions output_options(handwritten::Shape s) {
  nn::LinearOptions o{};
  o.in = static_cast<bt::Index>(s.hidden);
  o.out = static_cast<bt::Index>(s.out);
  o.weight_init = nn::Init::fan_in_uniform(nn::kGainLinear);
  o.bias_init = nn::Init::uniform(-0.1, 0.1);
  return o;
}
constexpr std::size_t plan_nodes(handwritten::Shape s) {
  return handwritten::parameters(s) + s.in + nn::Linear<float>::nodes(hidden_options(s)) +
         nn::Linear<float>::nodes(output_options(s)) + nn::kCrossEntropyNodes;
}
constexpr std::size_t plan_slots(handwritten::Shape s) {
  return nn::Linear<float>::view_slots(hidden_options(s)) + nn::Linear<float>::view_slots(output_options(s)) + 8U;
}
constexpr std::size_t tape_bytes(handwritten::Shape s) {
  return bt::Tape<float>::bytes_required(plan_nodes(s), plan_slots(s), handwritten::parameters(s));
}
constexpr std::size_t hand_bytes(handwritten::Shape s) {
  return ((2U * handwritten::parameters(s)) + handwritten::scratch(s)) * sizeof(float);
}
constexpr std::size_t max_of(std::size_t a, std::size_t b) { return (a > b) ? a : b; }
constexpr std::size_t arena_bytes() {
  std::size_t m = 0U;
  for (const handwritten::Shape& s : kShapes) {
    m = max_of(m, max_of(tape_bytes(s), hand_bytes(s)));
  }
  return m;
}
constexpr std::size_t max_parameters() {
  std::size_t m = 0U;
  for (const handwritten::Shape& s : kShapes) {
    m = max_of(m, handwritten::parameters(s));
  }
  return m;
}

alignas(32) unsigned char g_arena[arena_bytes()];
float g_initial[max_parameters()];
float g_x[kSamples][kMaxIn];
unsigned g_y[kSamples];

void fail(const char* what) {
  icount::print("FAIL: ");
  icount::print(what);
  icount::print("\n");
  bt::port::exit(1);
}

// Inputs uniform in [-1, 1); the class of a sample is the group (inputs j
// with j % out == c) with the largest sum: learnable, not trivial.
void make_data(handwritten::Shape s) {
  nn::Rng rng(kDataSeed);
  for (std::size_t i = 0U; i < kSamples; ++i) {
    float sums[16] = {};
    for (std::size_t k = 0U; k < s.in; ++k) {
      g_x[i][k] = static_cast<float>(rng.uniform(-1.0, 1.0));
      sums[k % s.out] += g_x[i][k];
    }
    unsigned best = 0U;
    for (unsigned c = 1U; c < s.out; ++c) {
      best = (sums[c] > sums[best]) ? c : best;
    }
    g_y[i] = best;
  }
}

std::size_t sample_index(std::uint32_t step, std::size_t b) { return ((step * kBatch) + b) % kSamples; }

struct Run {
  std::uint64_t ticks = 0U;
  float first = 0.0F;
  float last = 0.0F;
};

Run train_library(handwritten::Shape s) {
  const std::size_t params = handwritten::parameters(s);
  bt::Tape<float> tape(g_arena, sizeof(g_arena), plan_nodes(s), plan_slots(s), params);
  nn::Rng rng(kInitSeed);
  nn::Linear<float> l1;
  nn::Linear<float> l2;
  const bool made = l1.create(tape, hidden_options(s), rng) && l2.create(tape, output_options(s), rng);
  // The hand-written trainer reads the same layout: W1, b1, W2, b2.
  if (!made || (l1.weight != 0U) || (l1.bias != (s.in * s.hidden)) || (l2.weight != (l1.bias + s.hidden)) ||
      (l2.bias != (l2.weight + (s.hidden * s.out))) || (tape.size() != params)) {
    fail("library model creation");
  }
  std::memcpy(g_initial, tape.values(), params * sizeof(float));
  nn::OptimizerOptions<float> oc;
  oc.kind = nn::OptimizerKind::kSgd;
  oc.lr = kLr;
  nn::Optimizer<float> opt(oc);  // SGD: no state
  const bt::View all{0U, static_cast<bt::Index>(params)};  // W1, b1, W2, b2
  Run run;
  std::uint32_t step = 0U;
  const auto sample_loss = [&](bt::Tape<float>& tp, std::size_t b) {
    const std::size_t i = sample_index(step, b);
    const bt::Index first = static_cast<bt::Index>(tp.size());
    for (std::size_t k = 0U; k < s.in; ++k) {
      static_cast<void>(tp.input(g_x[i][k]));  // features: no gradient
    }
    const bt::View h = l1.forward<nn::Activation::kRelu>(tp, bt::View{first, static_cast<bt::Index>(s.in)});
    const bt::View z = l2.forward<nn::Activation::kIdentity>(tp, h);
    return nn::cross_entropy(tp, z, static_cast<bt::Index>(g_y[i]));
  };
  bool refused = false;  // an optimizer step refused (checked after the timed loop)
  const std::uint64_t t0 = icount::ticks();
  for (step = 0U; step < kSteps; ++step) {
    // The batch and its SGD step, 1/B folded into the step; activations and
    // the update rule chosen at compile time (no tanhf, expf or Adam step
    // linked for them).
    const float loss = nn::serial_batch<nn::OptimizerKind::kSgd>(tape, all, kBatch, sample_loss, opt);
    refused = refused || std::isnan(loss);
    run.first = (step == 0U) ? loss : run.first;
    run.last = loss;
  }
  run.ticks = icount::ticks() - t0;
  if (tape.status() != bt::Status::kOk) {
    icount::print(bt::status_name(tape.status()));
    fail(": library training");
  }
  if (refused) {
    fail("library optimizer step");
  }
  return run;
}

// The same training by replay: sample 0 recorded once (Tape::replayable),
// then per sample its inputs set (one call for the run), its target set and the recording replayed
// (forward and backward, Tape::replay); the step as above. The same bits
// as re-recording every sample (tests/core/test_replay.cpp): the run must end at
// the library's loss exactly.
#if ICOUNT_MLP_REPLAY
Run train_library_replay(handwritten::Shape s) {
  const std::size_t params = handwritten::parameters(s);
  bt::Tape<float> tape(g_arena, sizeof(g_arena), plan_nodes(s), plan_slots(s), params);
  nn::Rng rng(kInitSeed);
  nn::Linear<float> l1;
  nn::Linear<float> l2;
  if (!(l1.create(tape, hidden_options(s), rng) && l2.create(tape, output_options(s), rng))) {
    fail("library model creation (replay)");
  }
  nn::OptimizerOptions<float> oc;
  oc.kind = nn::OptimizerKind::kSgd;
  oc.lr = kLr;
  nn::Optimizer<float> opt(oc);
  const bt::View all{0U, static_cast<bt::Index>(params)};
  const bt::Mark start = tape.mark();
  const bt::Index first = static_cast<bt::Index>(tape.size());
  for (std::size_t k = 0U; k < s.in; ++k) {
    static_cast<void>(tape.input(g_x[0][k]));
  }
  const bt::View h = l1.forward<nn::Activation::kRelu>(tape, bt::View{first, static_cast<bt::Index>(s.in)});
  const bt::Value<float> loss =
      nn::cross_entropy(tape, l2.forward<nn::Activation::kIdentity>(tape, h), static_cast<bt::Index>(g_y[0]));
  const bt::Replay recording = bt::replayable(tape, start, loss);
  Run run;
  bool refused = false;
  const float scale = 1.0F / static_cast<float>(kBatch);
  const std::uint64_t t0 = icount::ticks();
  for (std::uint32_t step = 0U; step < kSteps; ++step) {
    tape.zero_grad(all.first, all.count);
    float total = 0.0F;
    for (std::size_t b = 0U; b < kBatch; ++b) {
      const std::size_t i = sample_index(step, b);
      static_cast<void>(bt::set_values(tape, bt::View{first, static_cast<bt::Index>(s.in)}, g_x[i]));
      static_cast<void>(bt::nn::set_target(tape, loss, static_cast<bt::Index>(g_y[i])));
      refused = refused || (bt::replay(tape, recording) != bt::Status::kOk);
      total += loss.value();
    }
    refused = refused || (opt.step<nn::OptimizerKind::kSgd>(tape, all, scale) != bt::Status::kOk);
    const float mean = total / static_cast<float>(kBatch);
    run.first = (step == 0U) ? mean : run.first;
    run.last = mean;
  }
  run.ticks = icount::ticks() - t0;
  if (refused || (tape.status() != bt::Status::kOk)) {
    icount::print(bt::status_name(tape.status()));
    fail(": library training by replay");
  }
  return run;
}
#endif

Run train_handwritten(handwritten::Shape s) {
  const std::size_t params = handwritten::parameters(s);
  // The arena is reused as floats once the library trainer is done with it.
  float* const w = reinterpret_cast<float*>(g_arena);
  float* const g = w + params;
  float* const work = g + params;
  std::memcpy(w, g_initial, params * sizeof(float));
  handwritten::Mlp mlp(s, w, g, work);
  Run run;
  const float* xb[kBatch];
  unsigned yb[kBatch];
  const std::uint64_t t0 = icount::ticks();
  for (std::uint32_t step = 0U; step < kSteps; ++step) {
    for (std::size_t b = 0U; b < kBatch; ++b) {
      const std::size_t i = sample_index(step, b);
      xb[b] = g_x[i];
      yb[b] = g_y[i];
    }
    const float loss = mlp.step(xb, yb, kBatch, kLr);
    run.first = (step == 0U) ? loss : run.first;
    run.last = loss;
  }
  run.ticks = icount::ticks() - t0;
  return run;
}

}  // namespace

int main() {
  icount::print("burtorch-mlp-icount: ReLU MLP, FP32, SGD, batch 8 one sample at a time\n");
  icount::calibrate(100000U);
  const icount::Rate rate = icount::own_rate(100000U);
  bool ok = true;
  for (const handwritten::Shape& s : kShapes) {
    make_data(s);
    const Run lib = train_library(s);
#if ICOUNT_MLP_REPLAY
    const Run replayed = train_library_replay(s);
#else
    const Run replayed = lib;
#endif
    const Run hand = train_handwritten(s);
    const std::uint64_t macs = kBatch * ((2U * ((s.in * s.hidden) + (s.hidden * s.out))) + (s.hidden * s.out));
    icount::print("icount mlp ");
    const std::uint64_t fields[] = {s.in, s.hidden, s.out, kSteps, kBatch, macs};
    for (const std::uint64_t v : fields) {
      icount::print_u(v);
      icount::print(" ");
    }
    icount::print_u(hand.ticks);
    icount::print(" ");
    icount::print_d(static_cast<double>(hand.first));
    icount::print(" ");
    icount::print_d(static_cast<double>(hand.last));
    icount::print(" ");
    icount::print_u(lib.ticks);
    icount::print(" ");
    icount::print_d(static_cast<double>(lib.first));
    icount::print(" ");
    icount::print_d(static_cast<double>(lib.last));
    icount::print("\n");
    // "icount mlp-replay <in> <hidden> <out> <ticks> <first loss> <last loss>"
    icount::print(ICOUNT_MLP_REPLAY ? "icount mlp-replay " : "(no replay) ");
    const std::uint64_t replay_fields[] = {s.in, s.hidden, s.out, replayed.ticks};
    for (const std::uint64_t v : replay_fields) {
      icount::print_u(v);
      icount::print(" ");
    }
    icount::print_d(static_cast<double>(replayed.first));
    icount::print(" ");
    icount::print_d(static_cast<double>(replayed.last));
    icount::print("\n");
    const double per_step = static_cast<double>(kSteps) * rate.ticks_per_instruction;
    icount::print("  ");
    icount::print_u(s.in);
    icount::print("-");
    icount::print_u(s.hidden);
    icount::print("-");
    icount::print_u(s.out);
    const double hand_step = std::floor(static_cast<double>(hand.ticks) / per_step);
    const double lib_step = std::floor(static_cast<double>(lib.ticks) / per_step);
    icount::print(": instructions per step hand-written ");
    icount::print_d(hand_step);
    icount::print(" (");
    icount::print_d(std::floor((10.0 * hand_step) / static_cast<double>(macs)) / 10.0);
    icount::print(" per MAC), library ");
    icount::print_d(lib_step);
    icount::print(" (");
    icount::print_d(std::floor((10.0 * lib_step) / static_cast<double>(macs)) / 10.0);
    icount::print(" per MAC); last loss ");
    icount::print_d(static_cast<double>(hand.last));
    icount::print(" vs ");
    icount::print_d(static_cast<double>(lib.last));
    icount::print("\n");
    const double a = static_cast<double>(hand.last);
    const double b = static_cast<double>(lib.last);
    const double scale = (std::fabs(a) > std::fabs(b)) ? std::fabs(a) : std::fabs(b);
    const bool same = std::fabs(a - b) <= (kParity * scale);
    const bool learned = (hand.last < hand.first) && (lib.last < lib.first);
    // Replay is re-recording, bit for bit.
    const bool replay_same = (replayed.first == lib.first) && (replayed.last == lib.last);
    if (!same) {
      icount::print("FAIL: final losses differ beyond 6 significant digits\n");
    }
    if (!replay_same) {
      icount::print("FAIL: the replayed training's losses differ from the recorded one's\n");
      ok = false;
    }
    if (!learned) {
      icount::print("FAIL: the loss did not go down\n");
    }
    ok = ok && same && learned;
  }
  icount::print(ok ? "icount end\n" : "icount failed\n");
  bt::port::exit(ok ? 0 : 1);
}
