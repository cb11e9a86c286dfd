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
#include <burtorch/burtorch.hpp>
#include <burtorch/frozen/ops.hpp>
#include <burtorch/nn/nn.hpp>
#include <burtorch/port/port.hpp>

#include <cstdint>

#include "finetune_model.hpp"
#include "firmware.hpp"
#include "plans.hpp"
#include "shapes_data.hpp"

namespace bt = burtorch;
namespace nn = burtorch::nn;
namespace fm = finetune_model;

namespace {

// The model and its memory plan: plans.hpp (tests/nn/test_nn_memory.cpp checks the plan).
using firmware::finetune::kInputs;
using firmware::finetune::kIn;
using firmware::finetune::kSize1;
using firmware::finetune::kSize2;
using firmware::finetune::kConv1Options;
using firmware::finetune::kConv2Options;
using firmware::finetune::kHead;
using firmware::finetune::kPool;
using firmware::finetune::kSampleNodes;
using firmware::finetune::kSampleSlots;
using firmware::finetune::kPlan;
using firmware::finetune::kParameters;
constexpr bt::Index kCols1 = 9U * fm::kChannels;
constexpr bt::Index kCols2 = 9U * fm::kConv1;
static_assert(sizeof(fm::kConv1WeightI8) == (fm::kConv1 * kCols1), "conv1: [C_out][3][3][C_in]");
static_assert(sizeof(fm::kConv2WeightI8) == (fm::kConv2 * kCols2), "conv2: [C_out][3][3][C_in]");
static_assert(shapes_data::kPixels == kInputs, "the generated pictures are the model's input");

// The backbone in flash, twice: int8 weights (FP32 biases) and FP16.
constexpr nn::FrozenConv2d<float> kConv1I8{
    {bt::frozen_i8(fm::kConv1WeightI8, fm::kConv1WeightScale), fm::kConv1, kCols1},
    {bt::frozen_f32(fm::kConv1Bias), fm::kConv1},
    kConv1Options};
constexpr nn::FrozenConv2d<float> kConv2I8{
    {bt::frozen_i8(fm::kConv2WeightI8, fm::kConv2WeightScale), fm::kConv2, kCols2},
    {bt::frozen_f32(fm::kConv2Bias), fm::kConv2},
    kConv2Options};
constexpr nn::FrozenConv2d<float> kConv1F16{
    {bt::frozen_f16(fm::kConv1WeightF16), fm::kConv1, kCols1}, {bt::frozen_f16(fm::kConv1BiasF16), fm::kConv1},
    kConv1Options};
constexpr nn::FrozenConv2d<float> kConv2F16{
    {bt::frozen_f16(fm::kConv2WeightF16), fm::kConv2, kCols2}, {bt::frozen_f16(fm::kConv2BiasF16), fm::kConv2},
    kConv2Options};

struct Backbone {
  const char* name;
  const nn::FrozenConv2d<float>* conv1;
  const nn::FrozenConv2d<float>* conv2;
};
constexpr Backbone kBackbones[2] = {{"int8", &kConv1I8, &kConv2I8}, {"FP16", &kConv1F16, &kConv2F16}};

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

// The tape (SGD: no optimizer state): one object of kPlan.bytes.
nn::TrainingMemory<float, kPlan> g_memory;
static_assert(sizeof(g_memory) == kPlan.bytes, "the plan counts every byte");
bt::Tape<float>& g_tape = g_memory.tape;
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

// The logits of picture x: the frozen backbone, the stop, the head.
bt::View logits(bt::Tape<float>& tape, const Backbone& bb, const float* x) {
  const bt::View in = bt::record_view(tape, kInputs, [&](bt::Index i) noexcept { return tape.leaf(x[i]); });
  const bt::View h1 = bb.conv1->forward(tape, in, kIn);
  const bt::View h2 = bb.conv2->forward(tape, h1, kSize1);
  const bt::View features = g_pool.forward(tape, h2, kSize2);
  bt::stop_gradient(tape);  // the backward sweep ends at the features
  return g_head.forward(tape, nn::flatten(features));
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
    const float loss = nn::serial_batch(g_tape, g_head.params(), kBatch, [&](bt::Tape<float>& tp, std::size_t i) {
      return nn::cross_entropy(tp, logits(tp, bb, g_x[i]), g_y[i]);
    });
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
  firmware::print_plan(kPlan);
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
  // The plan is exact: one sample records exactly kSampleNodes nodes and
  // kSampleSlots slots.
  {
    float x[kInputs];
    const std::uint32_t label = shapes_data::image(kTrainStream, 0U, fm::kShifted, x);
    const bt::Mark start = g_tape.mark();
    const std::size_t nodes0 = g_tape.size();
    const std::size_t slots0 = g_tape.usage().slots;
    static_cast<void>(nn::cross_entropy(g_tape, logits(g_tape, kBackbones[0], x), label));
    const bool exact = (g_tape.status() == bt::Status::kOk) && ((g_tape.size() - nodes0) == kSampleNodes) &&
                       ((g_tape.usage().slots - slots0) == kSampleSlots);
    static_cast<void>(g_tape.rewind(start));
    if (!exact) {
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
