// SPDX-License-Identifier: Apache-2.0
// On-device fine-tuning of a pretrained CNN whose backbone is frozen in
// flash. The model (nn::SmallCnn, include/burtorch/nn/cnn.hpp) was trained
// on the host by burtorch-cnn on generated 8x8 pictures of strokes
// (data/shapes_data.hpp, style kPretrain) and exported with
// --export-header into finetune_model.hpp: both convolutions as int8
// (per-tensor scale, FP32 biases) and as FP16 arrays, the head as FP32.
//
// The device's camera is different (style kShifted: a quarter turn, dimmer,
// a brighter and noisier background), so the pretrained model is mostly
// wrong on its pictures. The firmware keeps the backbone in flash
// (nn::FrozenConv2d over the arrays: no RAM, no gradient, no optimizer
// state), calls Tape::stop_gradient() after the pooled features, and trains
// only the head (36 parameters, the only ones on the tape) with SGD on
// pictures it generates in the new style. It does this twice, from the same
// pretrained head: over the int8 backbone, then over the FP16 one.
//
// Prints, per backbone, the held-out accuracy on the original style (the
// frozen backbone works), on the shifted style before and after
// fine-tuning, and the mean training loss every kPrintEvery steps; exits 0
// only if, for both backbones, the last printed loss is below
// kLossThreshold and the shifted accuracy after fine-tuning at least
// kAccuracyThreshold. The whole state is one statically allocated tape
// sized by the constexpr memory plan; the link's RAM budget
// (targets/firmware/CMakeLists.txt: 16 KiB with the stacks, on every board) is the
// enforced limit.
//
// Built with BURTORCH_FIRMWARE_LANES=1 (burtorch-finetune-lanes, on the
// Cortex-M55) it trains by lane batches instead: the same pictures, head and
// steps, kLanes pictures per sweep. The frozen backbone is evaluated in
// Lanes<float, kLanes> without a tape (FrozenConv2d::evaluate: each weight
// read once for the four pictures; no node, as nothing below the features
// is swept), the pooled features are recorded as inputs on a tape of lanes
// whose head reads its weights from the parameter tape as shared scalars
// (nn::lane_batch); the held-out sets are evaluated kLanes pictures at a
// time. Its memory is the lane plan's and the backbone's activations of one
// sweep, within the same budget.
#include <burtorch/burtorch.hpp>
#include <burtorch/frozen/ops.hpp>
#include <burtorch/nn/nn.hpp>
#include <burtorch/port/port.hpp>

#include <cstddef>
#include <cstdint>

#include "finetune_model.hpp"
#include "finetune_net.hpp"
#include "firmware.hpp"
#include "plans.hpp"
#include "shapes_data.hpp"

namespace bt = burtorch;
namespace nn = burtorch::nn;
namespace fm = finetune_model;

#ifndef BURTORCH_FIRMWARE_LANES
#define BURTORCH_FIRMWARE_LANES 0  // 1: lane batches (see the file comment)
#endif

namespace {

// The model and its memory plan: plans.hpp (tests/nn/test_nn_memory.cpp checks the plan).
using firmware::finetune::kInputs;
using firmware::finetune::kHead;
using firmware::finetune::kPool;
using firmware::finetune::kSampleNodes;
using firmware::finetune::kSampleSlots;
using firmware::finetune::kPlan;
using firmware::finetune::kParameters;
using firmware::finetune::Backbone;
using firmware::finetune::kBackbones;
static_assert(kPlan.parameters == 36U, "Linear(8 -> 4)");
// The link enforces the whole firmware's budget (16 KiB with stacks on the
// micro:bit); the model's own memory must leave room for the stacks, the
// batch and the port.
constexpr std::size_t kModelBudget = 9U * 1024U;
static_assert(kPlan.bytes <= kModelBudget, "the fine-tuning plan does not fit its share of 16 KiB");

constexpr int kSteps = 150;
constexpr int kBatch = 8;
constexpr int kPrintEvery = 25;
constexpr float kLr = 0.5F;
constexpr std::uint32_t kHeldOut = 200U;
// Streams of pictures (data/shapes_data.hpp): the host trained on stream
// kSeed; the device draws its own.
constexpr std::uint64_t kTrainStream = shapes_data::kSeed + 10U;
constexpr std::uint64_t kHeldOutStream = shapes_data::kSeed + 11U;
// ln 4 = 1.386 is the loss of a uniform guess over the four classes.
constexpr float kLossThreshold = 0.3F;
constexpr float kAccuracyThreshold = 0.9F;

#if BURTORCH_FIRMWARE_LANES
using firmware::finetune::kLanes;
using firmware::finetune::kLanePlan;
using Lane = bt::Lanes<float, kLanes>;
using Activations = firmware::finetune::LaneActivations<kLanes>;
static_assert(kLanePlan.bytes + sizeof(Activations) <= kModelBudget,
              "the lane plan and the backbone's activations do not fit the model's share of 16 KiB");
// The parameter tape and the lane tape (SGD: no optimizer state): one object of kLanePlan.bytes.
nn::LaneMemory<float, kLanePlan> g_memory;
static_assert(sizeof(g_memory) == kLanePlan.bytes, "the plan counts every byte");
bt::Tape<float>& g_tape = g_memory.params;
bt::Tape<Lane>& g_lanes = g_memory.lanes;
Activations g_act;
#else
// The tape (SGD: no optimizer state): one object of kPlan.bytes.
nn::TrainingMemory<float, kPlan> g_memory;
static_assert(sizeof(g_memory) == kPlan.bytes, "the plan counts every byte");
bt::Tape<float>& g_tape = g_memory.tape;
#endif
nn::Linear<float> g_head;
nn::AvgPool2d<float> g_pool{kPool};
// One batch of generated pictures and their classes.
float g_x[kBatch][kInputs];
std::uint32_t g_y[kBatch];

void fail(const char* what) { firmware::fail(what, g_tape); }

// The head's pretrained weights and biases (FP32, from the header).
void load_head() {
  float* w = g_tape.values() + g_head.weight;
  for (std::size_t i = 0U; i < (sizeof(fm::kHeadWeight) / sizeof(float)); ++i) {
    w[i] = fm::kHeadWeight[i];
  }
  float* b = g_tape.values() + g_head.bias;
  for (std::size_t i = 0U; i < fm::kClasses; ++i) {
    b[i] = fm::kHeadBias[i];
  }
}

#if !BURTORCH_FIRMWARE_LANES
// The logits of picture x: the frozen backbone, the stop, the head.
bt::View logits(bt::Tape<float>& tape, const Backbone& bb, const float* x) {
  return firmware::finetune::logits(tape, bb, g_pool, g_head, x);
}

// Accuracy over kHeldOut pictures of `style` from the held-out stream.
float accuracy(const Backbone& bb, const shapes_data::Style& style) {
  std::uint32_t right = 0U;
  float x[kInputs];
  for (std::uint32_t n = 0U; n < kHeldOut; ++n) {
    const std::uint32_t label = shapes_data::image(kHeldOutStream, n, style, x);
    const bt::Mark start = g_tape.mark();
    const bt::View z = logits(g_tape, bb, x);
    if (g_tape.status() != bt::Status::kOk) {
      fail("evaluation failed");
    }
    right += (firmware::argmax(g_tape, z) == label) ? 1U : 0U;
    static_cast<void>(g_tape.rewind(start));
  }
  return static_cast<float>(right) / kHeldOut;
}

// One batch's forward and backward: the mean loss, the gradients of the
// batch's mean on g_tape.
float batch_loss(const Backbone& bb) {
  return nn::serial_batch(g_tape, g_head.params(), kBatch, [&](bt::Tape<float>& tp, std::size_t i) {
    return nn::cross_entropy(tp, logits(tp, bb, g_x[i]), g_y[i]);
  });
}

// True if one sample's loss over backbone bb records exactly the plan's
// nodes and slots (main's check; fleet_device.cpp has a main of its own).
[[maybe_unused]] bool plan_is_exact(const Backbone& bb, const float* x, std::uint32_t label) {
  return firmware::records_exactly(g_tape, kSampleNodes, kSampleSlots, [&] {
    static_cast<void>(nn::cross_entropy(g_tape, logits(g_tape, bb, x), label));
  });
}
#else
// The losses of the pictures of the batch from `first` in lanes 0 ..
// active - 1 (the lanes after them repeat picture `first`).
bt::Value<Lane> lane_loss(bt::Tape<Lane>& tape, const bt::LaneParams<float>& p, const Backbone& bb,
                          std::size_t first, std::size_t active) {
  const float* xs[kLanes];
  bt::Index ys[kLanes];
  firmware::sweep_samples(g_x, g_y, first, active, xs, ys);
  return nn::cross_entropy(tape, firmware::finetune::logits(tape, p, bb, g_pool, g_head, xs, g_act), ys);
}

// Accuracy over kHeldOut pictures of `style` from the held-out stream,
// kLanes per sweep of the lane tape (forward only; the batch's buffer g_x
// holds them).
static_assert((kHeldOut % kLanes) == 0U, "whole sweeps");
static_assert(kLanes <= kBatch, "a sweep's pictures fit the batch's buffer");
float accuracy(const Backbone& bb, const shapes_data::Style& style) {
  std::uint32_t right = 0U;
  for (std::uint32_t n = 0U; n < kHeldOut; n += kLanes) {
    const float* xs[kLanes];
    std::uint32_t labels[kLanes];
    for (std::size_t l = 0U; l < kLanes; ++l) {
      labels[l] = shapes_data::image(kHeldOutStream, n + l, style, g_x[l]);
      xs[l] = g_x[l];
    }
    const bt::Mark start = g_lanes.mark();
    const bt::View z = firmware::finetune::logits(g_lanes, nn::lane_params(g_tape), bb, g_pool, g_head, xs, g_act);
    if (g_lanes.status() != bt::Status::kOk) {
      firmware::fail("evaluation failed", g_lanes);
    }
    for (std::size_t l = 0U; l < kLanes; ++l) {
      std::uint32_t best = 0U;
      for (std::uint32_t c = 1U; c < z.count; ++c) {
        best = (g_lanes.value(z.first + c).lane[l] > g_lanes.value(z.first + best).lane[l]) ? c : best;
      }
      right += (best == labels[l]) ? 1U : 0U;
    }
    static_cast<void>(g_lanes.rewind(start));
  }
  return static_cast<float>(right) / kHeldOut;
}

// One batch's forward and backward by lane batches: the mean loss, the
// gradients of the batch's mean on g_tape.
float batch_loss(const Backbone& bb) {
  const float loss = nn::lane_batch(
      g_tape, g_head.params(), g_lanes, kBatch,
      [&bb](bt::Tape<Lane>& lt, const bt::LaneParams<float>& p, std::size_t first, std::size_t active) {
        return lane_loss(lt, p, bb, first, active);
      });
  if (g_lanes.status() != bt::Status::kOk) {
    firmware::fail("training failed", g_lanes);
  }
  return loss;
}

// True if a sweep of copies of one picture records exactly the lane plan's
// nodes and slots.
[[maybe_unused]] bool plan_is_exact(const Backbone& bb, const float* x, std::uint32_t label) {
  const float* xs[kLanes] = {x, x, x, x};
  const bt::Index ys[kLanes] = {label, label, label, label};
  return firmware::records_exactly(g_lanes, firmware::finetune::kLaneSampleNodes, firmware::finetune::kLaneSampleSlots, [&] {
    const bt::View z = firmware::finetune::logits(g_lanes, nn::lane_params(g_tape), bb, g_pool, g_head, xs, g_act);
    static_cast<void>(nn::cross_entropy(g_lanes, z, ys));
  });
}
#endif

void print_accuracy(const char* what, float a) {
  firmware::print("  ");
  firmware::print(what);
  firmware::print(" held-out accuracy ");
  firmware::print_number(a);
  firmware::print("\n");
}

// Fine-tunes the head over backbone bb from the pretrained weights; true if
// both thresholds are met. Adds the board-timer ticks of the training steps
// to *ticks.
bool finetune(const Backbone& bb, std::uint64_t* ticks) {
  const std::uint64_t ticks0 = *ticks;
  firmware::print(bb.name);
  firmware::print(" backbone in flash:\n");
  load_head();
  print_accuracy("original pictures:", accuracy(bb, fm::kPretrain));
  const float before = accuracy(bb, fm::kShifted);
  print_accuracy("shifted pictures, before fine-tuning:", before);
  nn::Optimizer<float> opt(firmware::sgd(kLr));  // SGD: no optimizer state
  float since = 0.0F;
  float last = 1e9F;
  std::uint64_t drawn = 0U;
  for (int step = 1; step <= kSteps; ++step) {
    for (int b = 0; b < kBatch; ++b) {
      g_y[b] = shapes_data::image(kTrainStream, drawn, fm::kShifted, g_x[b]);
      ++drawn;
    }
    const std::uint64_t t0 = bt::port::ticks();
    const float loss = batch_loss(bb);
    if (g_tape.status() != bt::Status::kOk) {
      fail("training failed");
    }
    firmware::step(opt, g_tape, g_head.params());
    *ticks += bt::port::ticks() - t0;
    since += loss;
    if ((step % kPrintEvery) == 0) {
      last = since / kPrintEvery;
      since = 0.0F;
      firmware::print_step("  ", static_cast<std::uint64_t>(step), last);
    }
  }
  const float after = accuracy(bb, fm::kShifted);
  print_accuracy("shifted pictures, after fine-tuning:", after);
  firmware::print("  board-timer ticks per training step of this backbone: ");
  firmware::print_number(firmware::per_step(*ticks - ticks0, static_cast<std::uint64_t>(kSteps)));
  firmware::print("\n");
  return (last < kLossThreshold) && (after >= kAccuracyThreshold);
}

}  // namespace

// fleet_device.cpp includes this file for its fine-tuning and has a main of
// its own.
#ifndef BURTORCH_FINETUNE_NO_MAIN
int main() {
  using firmware::print;
  print("burtorch-finetune: a CNN pretrained on the host, backbone frozen in flash, head fine-tuned on\n");
  print("  shifted pictures; ");
  firmware::print_unsigned(kPlan.parameters);
  print(" trainable parameters, FP32, SGD, batch ");
  firmware::print_unsigned(kBatch);
  print(", ");
  firmware::print_unsigned(kSteps);
  print(" steps\n");
#if BURTORCH_FIRMWARE_LANES
  firmware::print_lanes(kLanes, "pictures");
  print("; the backbone's activations of a sweep ");
  firmware::print_unsigned(sizeof(Activations));
  print(" bytes\n");
  firmware::print_lane_plan(kLanePlan);
#else
  firmware::print_plan(kPlan);
#endif
  print("  backbone in flash: int8 ");
  firmware::print_unsigned(sizeof(fm::kConv1WeightI8) + sizeof(fm::kConv2WeightI8) + 8U + sizeof(fm::kConv1Bias) +
                           sizeof(fm::kConv2Bias));
  print(" bytes, FP16 ");
  firmware::print_unsigned(sizeof(fm::kConv1WeightF16) + sizeof(fm::kConv2WeightF16) + sizeof(fm::kConv1BiasF16) +
                           sizeof(fm::kConv2BiasF16));
  print(" bytes\n");
  nn::Rng rng(1U);  // the head's draws; replaced by the pretrained weights
  if (!g_head.create(g_tape, kHead, rng) || (g_head.weight != 0U)) {
    fail("head creation failed");
  }
  // The plan is exact: one sample (a sweep) records exactly the plan's nodes
  // and slots.
  {
    float x[kInputs];
    const std::uint32_t label = shapes_data::image(kTrainStream, 0U, fm::kShifted, x);
    if (!plan_is_exact(kBackbones[0], x, label)) {
      fail("one sample does not record what the memory plan says");
    }
  }
  bool ok = true;
  std::uint64_t ticks = 0U;
  for (const Backbone& bb : kBackbones) {
    ok = finetune(bb, &ticks) && ok;
  }
  print("board-timer ticks per training step, both backbones (");
  firmware::print_unsigned(bt::port::ticks_per_second());
  print(" per second): ");
  firmware::print_number(firmware::per_step(ticks, 2U * static_cast<std::uint64_t>(kSteps)));
  print("\n");
  print(ok ? "PASS: " : "FAIL: ");
  print("with both backbones the loss fell below ");
  firmware::print_number(kLossThreshold);
  print(" and the shifted held-out accuracy reached ");
  firmware::print_number(kAccuracyThreshold);
  print(ok ? "\n" : " (not both)\n");
  bt::port::exit(ok ? 0 : 1);
}
#endif  // BURTORCH_FINETUNE_NO_MAIN
