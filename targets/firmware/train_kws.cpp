// SPDX-License-Identifier: Apache-2.0
// On-device training of a small keyword-spotting-like convolutional model
// in FP32 with Adam, on spectrogram-like inputs the firmware generates
// itself (nothing stored but the model). An input is kTime frames of kBins
// frequency bins, channels-last (frame t's bins are nodes [t * kBins, t *
// kBins + kBins)): background noise plus one "word", a tone kWordFrames
// frames long at a random onset, pitch and loudness, whose class is its
// shape over time:
//   0 rising   the tone climbs one bin per frame
//   1 falling  it descends one bin per frame
//   2 steady   it holds one bin
//   3 hump     it climbs for half the word, then descends
// Model: Conv1d(kBins -> 8, k 3, stride 2) ReLU -> Conv1d(8 -> 8, k 3) ReLU
// -> AvgPool1d over all remaining frames (a global average: the class does
// not depend on where the word lies) -> Linear(8 -> 4) -> cross-entropy.
// The whole state -- parameters, gradients, one sample's activations -- is
// one statically allocated tape sized by the model's constexpr memory plan;
// the link's RAM budget (targets/firmware/CMakeLists.txt) is the enforced
// limit.
// Prints the loss and accuracy on a held-out generated set before and after
// training and the mean training loss every kPrintEvery steps; exits 0 only
// if the last printed loss is below kLossThreshold and the held-out
// accuracy after training at least kAccuracyThreshold.
//
// Built with BURTORCH_FIRMWARE_LANES=1 (burtorch-train-kws-lanes, on the
// Cortex-M55) it trains by lane batches instead: the same model, data and
// steps, kLanes samples per sweep on a tape of Lanes<float, kLanes> (one
// Helium register per node) whose layers read the parameters of their own
// tape as shared scalars (nn::lane_batch); the held-out set is evaluated
// kLanes inputs at a time too. Its memory is the lane plan's, within the
// same budget.
#include <burtorch/burtorch.hpp>
#include <burtorch/nn/nn.hpp>
#include <burtorch/port/port.hpp>

#include <cstddef>
#include <cstdint>

#include "firmware.hpp"
#include "kws_model.hpp"
#include "plans.hpp"

namespace bt = burtorch;
namespace nn = burtorch::nn;

#ifndef BURTORCH_FIRMWARE_LANES
#define BURTORCH_FIRMWARE_LANES 0  // 1: lane batches (see the file comment)
#endif

namespace {

// The model and its memory plan: plans.hpp (tests/nn/test_nn_memory.cpp checks the plan).
using firmware::kws::kClasses;
using firmware::kws::kInputs;
using firmware::kws::kSampleNodes;
using firmware::kws::kSampleSlots;
using firmware::kws::kPlan;
using firmware::kws::generate;
static_assert(kPlan.parameters == 484U, "248 + 200 + 36");
// The link enforces the whole firmware's 64 KiB (stacks, the port's state);
// the model's own memory must leave room for them.
constexpr std::size_t kModelBudget = 48U * 1024U;
static_assert(kPlan.bytes <= kModelBudget, "the model's memory plan does not fit its share of 64 KiB");

constexpr int kSteps = 300;
constexpr int kBatch = 8;
constexpr int kPrintEvery = 50;
constexpr float kLr = 0.03F;
constexpr std::uint32_t kHeldOut = 200U;
// ln 4 = 1.386 is the loss of a uniform guess over the four classes.
constexpr float kLossThreshold = 0.3F;
constexpr float kAccuracyThreshold = 0.9F;

#if BURTORCH_FIRMWARE_LANES
using firmware::kws::kLanes;
using firmware::kws::kLanePlan;
using Lane = bt::Lanes<float, kLanes>;
static_assert(kLanePlan.bytes <= kModelBudget, "the model's lane plan does not fit its share of 64 KiB");
// The parameter tape, Adam's state and the lane tape: one object of kLanePlan.bytes.
nn::LaneMemory<float, kLanePlan> g_memory;
static_assert(sizeof(g_memory) == kLanePlan.bytes, "the plan counts every byte");
bt::Tape<float>& g_tape = g_memory.params;
bt::Tape<Lane>& g_lanes = g_memory.lanes;
#else
// The tape and Adam's state: one object of kPlan.bytes.
nn::TrainingMemory<float, kPlan> g_memory;
static_assert(sizeof(g_memory) == kPlan.bytes, "the plan counts every byte");
bt::Tape<float>& g_tape = g_memory.tape;
#endif

firmware::kws::Model g_model;
// One batch of generated inputs and their classes (static: 6.4 KB would not
// fit the thread stack).
float g_x[kBatch][kInputs];
std::uint32_t g_y[kBatch];

void fail(const char* what) { firmware::fail(what, g_tape); }

#if !BURTORCH_FIRMWARE_LANES
bt::Value<float> sample_loss(bt::Tape<float>& tape, const float* x, std::uint32_t label) {
  return nn::cross_entropy(tape, g_model.logits(tape, x), label);
}
#else
// The losses of samples first .. first + active - 1 of the batch in lanes
// 0 .. active - 1 (the lanes after them repeat sample `first`).
bt::Value<Lane> lane_loss(bt::Tape<Lane>& tape, const bt::LaneParams<float>& p, std::size_t first,
                          std::size_t active) {
  const float* xs[kLanes];
  bt::Index ys[kLanes];
  firmware::sweep_samples(g_x, g_y, first, active, xs, ys);
  return nn::cross_entropy(tape, g_model.logits(tape, p, xs), ys);
}
#endif

struct Score {
  float loss = 0.0F;
  float accuracy = 0.0F;
};

// Mean loss and accuracy over kHeldOut inputs drawn from a generator of
// their own (the same set every time: seed 7, balanced classes).
#if BURTORCH_FIRMWARE_LANES
// The same, kLanes inputs per sweep of the lane tape (forward only; the
// batch's buffer g_x holds them).
static_assert((kHeldOut % kLanes) == 0U, "whole sweeps");
static_assert(kLanes <= kBatch, "a sweep's inputs fit the batch's buffer");
Score evaluate() {
  nn::Rng rng(7U);
  Score s;
  std::uint32_t right = 0U;
  for (std::uint32_t n = 0U; n < kHeldOut; n += kLanes) {
    const float* xs[kLanes];
    bt::Index ys[kLanes];
    for (std::size_t l = 0U; l < kLanes; ++l) {
      ys[l] = (n + l) % kClasses;
      generate(rng, ys[l], g_x[l]);
      xs[l] = g_x[l];
    }
    const bt::Mark start = g_lanes.mark();
    const bt::View z = g_model.logits(g_lanes, nn::lane_params(g_tape), xs);
    const bt::Value<Lane> loss = nn::cross_entropy(g_lanes, z, ys);
    if (g_lanes.status() != bt::Status::kOk) {
      firmware::fail("evaluation failed", g_lanes);
    }
    for (std::size_t l = 0U; l < kLanes; ++l) {
      s.loss += loss.value().lane[l];
      std::uint32_t best = 0U;
      for (std::uint32_t c = 1U; c < z.count; ++c) {
        best = (g_lanes.value(z.first + c).lane[l] > g_lanes.value(z.first + best).lane[l]) ? c : best;
      }
      right += (best == ys[l]) ? 1U : 0U;
    }
    static_cast<void>(g_lanes.rewind(start));
  }
  s.loss /= kHeldOut;
  s.accuracy = static_cast<float>(right) / kHeldOut;
  return s;
}
#else
Score evaluate() {
  nn::Rng rng(7U);
  Score s;
  std::uint32_t right = 0U;
  float x[kInputs];
  for (std::uint32_t n = 0U; n < kHeldOut; ++n) {
    const std::uint32_t label = n % kClasses;
    generate(rng, label, x);
    const bt::Mark start = g_tape.mark();
    const bt::View z = g_model.logits(g_tape, x);
    const bt::Value<float> loss = nn::cross_entropy(g_tape, z, label);
    if (g_tape.status() != bt::Status::kOk) {
      fail("evaluation failed");
    }
    s.loss += loss.value();
    right += (firmware::argmax(g_tape, z) == label) ? 1U : 0U;
    static_cast<void>(g_tape.rewind(start));
  }
  s.loss /= kHeldOut;
  s.accuracy = static_cast<float>(right) / kHeldOut;
  return s;
}
#endif

// One batch's forward and backward: the mean loss, the gradients of the
// batch's mean on g_tape (serially, or by lane batches).
float batch_loss() {
#if BURTORCH_FIRMWARE_LANES
  const float loss = nn::lane_batch(
      g_tape, g_model.params, g_lanes, kBatch,
      [](bt::Tape<Lane>& lt, const bt::LaneParams<float>& p, std::size_t first, std::size_t active) {
        return lane_loss(lt, p, first, active);
      });
  if (g_lanes.status() != bt::Status::kOk) {
    firmware::fail("training failed", g_lanes);
  }
#else
  const float loss = nn::serial_batch(g_tape, g_model.params, kBatch, [&](bt::Tape<float>& tp, std::size_t i) {
    return sample_loss(tp, g_x[i], g_y[i]);
  });
#endif
  if (g_tape.status() != bt::Status::kOk) {
    fail("training failed");
  }
  return loss;
}

// True if one sample (a sweep of kLanes copies of it) records exactly the
// nodes and slots the memory plan says. Draws one input from rng.
bool plan_is_exact(nn::Rng& rng) {
  g_y[0] = 0U;
  generate(rng, 0U, g_x[0]);
#if BURTORCH_FIRMWARE_LANES
  return firmware::records_exactly(g_lanes, firmware::kws::kLaneSampleNodes, firmware::kws::kLaneSampleSlots, [] {
    static_cast<void>(lane_loss(g_lanes, nn::lane_params(g_tape), 0U, 1U));
  });
#else
  return firmware::records_exactly(g_tape, kSampleNodes, kSampleSlots,
                                   [] { static_cast<void>(sample_loss(g_tape, g_x[0], 0U)); });
#endif
}

void print_score(const char* when, const Score& s) {
  firmware::print(when);
  firmware::print(" held-out loss ");
  firmware::print_number(s.loss);
  firmware::print(" accuracy ");
  firmware::print_number(s.accuracy);
  firmware::print("\n");
}

}  // namespace

int main() {
  using firmware::print;
  print("burtorch-train-kws: Conv1d keyword spotting, 4 generated words (");
  firmware::print_unsigned(kPlan.parameters);
  print(" parameters), FP32, Adam, batch ");
  firmware::print_unsigned(kBatch);
  print("\n");
#if BURTORCH_FIRMWARE_LANES
  firmware::print_lanes(kLanes, "samples");
  print("\n");
  firmware::print_lane_plan(kLanePlan);
  print("  Adam state ");
  firmware::print_unsigned(kLanePlan.params.optimizer_bytes);
  print(" bytes; plan total ");
  firmware::print_unsigned(kLanePlan.bytes);
  print(" bytes\n");
#else
  firmware::print_plan(kPlan);
  print("  Adam state ");
  firmware::print_unsigned(kPlan.optimizer_bytes);
  print(" bytes; plan total ");
  firmware::print_unsigned(kPlan.bytes);
  print(" bytes\n");
#endif
  nn::Rng rng(42U);
  if (!g_model.create(g_tape, rng)) {
    fail("model creation failed");
  }
  // The plan is exact: one sample (one sweep) records exactly the plan's
  // nodes and slots.
  if (!plan_is_exact(rng)) {
    fail("one sample does not record what the memory plan says");
  }
  const Score before = evaluate();
  print_score("before:", before);
  nn::OptimizerOptions<float> oc;
  oc.kind = nn::OptimizerKind::kAdam;
  oc.lr = kLr;
  nn::Optimizer<float> opt = g_memory.optimizer(oc);  // over the memory's Adam state
  float since = 0.0F;
  float last = 1e9F;
  const float t0 = firmware::seconds();
  // Board-timer ticks inside the training steps only (forward, backward and
  // Adam over a batch; not generating the batch): under QEMU with -icount
  // they count instructions at a fixed rate (docs/footprint.md).
  std::uint64_t step_ticks = 0U;
  for (int step = 1; step <= kSteps; ++step) {
    for (int b = 0; b < kBatch; ++b) {
      g_y[b] = rng.below(kClasses);
      generate(rng, g_y[b], g_x[b]);
    }
    const std::uint64_t s0 = bt::port::ticks();
    const float loss = batch_loss();
    firmware::step(opt, g_tape, g_model.params);
    step_ticks += bt::port::ticks() - s0;
    since += loss;
    if ((step % kPrintEvery) == 0) {
      last = since / kPrintEvery;
      since = 0.0F;
      firmware::print_step("", static_cast<std::uint64_t>(step), last);
    }
  }
  const float elapsed = firmware::seconds() - t0;
  firmware::print_rate(kSteps, elapsed);
  print("board-timer ticks per training step (");
  firmware::print_unsigned(bt::port::ticks_per_second());
  print(" per second): ");
  firmware::print_number(firmware::per_step(step_ticks, static_cast<std::uint64_t>(kSteps)));
  print("\n");
  const Score after = evaluate();
  print_score("after:", after);
  const bool ok = (last < kLossThreshold) && (after.accuracy >= kAccuracyThreshold);
  print(ok ? "PASS: " : "FAIL: ");
  print("loss below ");
  firmware::print_number(kLossThreshold);
  print(" and held-out accuracy at least ");
  firmware::print_number(kAccuracyThreshold);
  print(ok ? "\n" : " not both reached\n");
  bt::port::exit(ok ? 0 : 1);
}
