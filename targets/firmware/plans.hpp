// SPDX-License-Identifier: Apache-2.0
// The models of the on-device trainers and their memory plans, in one
// header: each firmware declares nn::TrainingMemory<float, kPlan> (the tape
// and the optimizer state, sizeof == kPlan.bytes) from it, and
// tests/nn/test_nn_memory.cpp checks on every target that each plan's
// bytes are the size of the objects it describes.
#ifndef BURTORCH_TARGETS_FIRMWARE_PLANS_HPP
#define BURTORCH_TARGETS_FIRMWARE_PLANS_HPP

#include <burtorch/frozen/ops.hpp>
#include <burtorch/nn/nn.hpp>

#include <cstddef>

#include "finetune_model.hpp"

namespace firmware {

// burtorch-train-mlp: the paper's makemore MLP, e = 4, SGD.
namespace mlp {
constexpr burtorch::nn::MlpOptions kConfig{27U, 16U, 64U, 4U};
constexpr burtorch::nn::MemoryPlan kPlan =
    burtorch::nn::MakemoreMlp<float>::plan(kConfig, burtorch::nn::OptimizerKind::kSgd);
}  // namespace mlp

// burtorch-train-gpt: the paper's GPT-like model, 65 characters, SGD.
namespace gpt {
constexpr burtorch::nn::GptOptions kConfig{65U, 8U, 24U, 6U, 6U, 1e-5};
constexpr burtorch::nn::MemoryPlan kPlan = burtorch::nn::Gpt<float>::plan(kConfig, burtorch::nn::OptimizerKind::kSgd);
}  // namespace gpt

// burtorch-train-kws: Conv1d(kBins -> 8, k 3, stride 2) ReLU, Conv1d(8 -> 8,
// k 3) ReLU, a global AvgPool1d, Linear(8 -> 4), cross-entropy; Adam.
namespace kws {
namespace bt = burtorch;
namespace nn = burtorch::nn;

constexpr bt::Index kTime = 20U;       // frames per input
constexpr bt::Index kBins = 10U;       // frequency bins per frame
constexpr bt::Index kClasses = 4U;     // rising, falling, steady, hump
constexpr bt::Index kChannels = 8U;    // feature channels of both convolutions
constexpr bt::Index kWordFrames = 8U;  // frames a word lasts
constexpr bt::Index kInputs = kTime * kBins;

constexpr nn::Conv1dOptions conv1_options() {
  nn::Conv1dOptions o{};
  o.in_channels = kBins;
  o.out_channels = kChannels;
  o.kernel = 3U;
  o.stride = 2U;
  o.act = nn::Activation::kRelu;
  return o;
}
constexpr nn::Conv1dOptions kConv1 = conv1_options();
constexpr bt::Index kLength1 = nn::Conv1d<float>::output_length(kConv1, kTime);  // 9

constexpr nn::Conv1dOptions conv2_options() {
  nn::Conv1dOptions o{};
  o.in_channels = kChannels;
  o.out_channels = kChannels;
  o.kernel = 3U;
  o.act = nn::Activation::kRelu;
  return o;
}
constexpr nn::Conv1dOptions kConv2 = conv2_options();
constexpr bt::Index kLength2 = nn::Conv1d<float>::output_length(kConv2, kLength1);  // 7

constexpr nn::Pool1dOptions kPool{kChannels, kLength2, 0U};  // global average over frames
static_assert(nn::AvgPool1d<float>::output_length(kPool, kLength2) == 1U, "the pool is global");

constexpr nn::LinearOptions head_options() {
  nn::LinearOptions o{};
  o.in = kChannels;
  o.out = kClasses;
  return o;
}
constexpr nn::LinearOptions kHead = head_options();

constexpr std::size_t kParameters =
    nn::Conv1d<float>::parameters(kConv1) + nn::Conv1d<float>::parameters(kConv2) + nn::Linear<float>::parameters(kHead);
// One sample: the input leaves, both convolutions, the pool, the head, the loss.
constexpr std::size_t kSampleNodes = kInputs + nn::Conv1d<float>::nodes(kConv1, kTime) +
                                     nn::Conv1d<float>::nodes(kConv2, kLength1) +
                                     nn::AvgPool1d<float>::nodes(kPool, kLength2) + nn::Linear<float>::nodes(kHead) +
                                     nn::kCrossEntropyNodes;
constexpr std::size_t kSampleSlots = nn::Conv1d<float>::slots(kConv1, kTime) +
                                     nn::Conv1d<float>::slots(kConv2, kLength1) +
                                     nn::AvgPool1d<float>::slots(kPool, kLength2) + nn::Linear<float>::view_slots(kHead);
constexpr nn::MemoryPlan kPlan = nn::make_plan<float>(kParameters, kSampleNodes, kSampleSlots, nn::OptimizerKind::kAdam);

// Lane batches of kLanes samples per sweep (burtorch-train-kws-lanes): the
// parameters and Adam's state on a tape of their own, one sweep's graph of
// kLanes samples on a tape of Lanes<float, kLanes> whose layers read the
// weights as shared scalars (nn::lane_params).
constexpr std::size_t kLanes = 4U;
using LaneSource = bt::LaneParams<float>;
constexpr std::size_t kLaneSampleNodes =
    kInputs + nn::Conv1d<float>::nodes<LaneSource>(kConv1, kTime) + nn::Conv1d<float>::nodes<LaneSource>(kConv2, kLength1) +
    nn::AvgPool1d<float>::nodes(kPool, kLength2) + nn::Linear<float>::nodes<LaneSource>(kHead) +
    nn::kLaneCrossEntropyNodes;
constexpr std::size_t kLaneSampleSlots =
    nn::Conv1d<float>::slots<LaneSource>(kConv1, kTime) + nn::Conv1d<float>::slots<LaneSource>(kConv2, kLength1) +
    nn::AvgPool1d<float>::slots(kPool, kLength2) + nn::Linear<float>::view_slots<LaneSource>(kHead) +
    bt::pick_slots(kLanes);
constexpr nn::LanePlan kLanePlan =
    nn::make_lane_plan<float, kLanes>(kParameters, kLaneSampleNodes, kLaneSampleSlots, nn::OptimizerKind::kAdam);
}  // namespace kws

// burtorch-finetune: nn::SmallCnn of finetune_model.hpp with its backbone
// frozen in flash; on the tape the head's parameters only, SGD.
namespace finetune {
namespace bt = burtorch;
namespace nn = burtorch::nn;
namespace fm = finetune_model;

using Cnn = nn::SmallCnn<float>;
constexpr nn::CnnOptions make_config() {
  nn::CnnOptions c{};
  c.side = fm::kSide;
  c.channels = fm::kChannels;
  c.conv1 = fm::kConv1;
  c.conv2 = fm::kConv2;
  c.classes = fm::kClasses;
  return c;
}
constexpr nn::CnnOptions kConfig = make_config();
constexpr bt::Index kInputs = static_cast<bt::Index>(Cnn::inputs(kConfig));
constexpr nn::Size2d kIn{fm::kSide, fm::kSide};
constexpr nn::Size2d kSize1 = Cnn::size1(kConfig);
constexpr nn::Size2d kSize2 = Cnn::size2(kConfig);
constexpr nn::Conv2dOptions kConv1Options = Cnn::conv1_options(kConfig);
constexpr nn::Conv2dOptions kConv2Options = Cnn::conv2_options(kConfig);
constexpr nn::LinearOptions kHead = Cnn::head_options(kConfig);
constexpr nn::Pool2dOptions kPool = Cnn::pool_options(kConfig);

// On the tape: the head's parameters only. Per sample: the input leaves,
// both frozen convolutions, the pool, the head, the loss.
constexpr std::size_t kParameters = nn::Linear<float>::parameters(kHead);
constexpr std::size_t kSampleNodes = Cnn::sample_nodes(kConfig);
constexpr std::size_t kSampleSlots = nn::FrozenConv2d<float>::slots(kConv1Options, kIn) +
                                     nn::FrozenConv2d<float>::slots(kConv2Options, kSize1) +
                                     nn::AvgPool2d<float>::slots(kPool, kSize2) + nn::Linear<float>::view_slots(kHead);
constexpr nn::MemoryPlan kPlan =
    nn::make_finetune_plan<float>(kParameters, kParameters, kSampleNodes, kSampleSlots, nn::OptimizerKind::kSgd);

// Lane batches of kLanes samples per sweep (burtorch-finetune-lanes): the
// frozen backbone evaluated in lanes without a tape (FrozenConv2d::evaluate,
// AvgPool2d::evaluate: nothing below the features needs a graph), the
// pooled features recorded as inputs on a tape of Lanes<float, kLanes>,
// then the head over the shared parameters and the loss. (Recording the
// backbone on the lane tape as the serial path records it on its tape
// would take 13 KB of lane tape: more than the firmware's 16 KiB leave.)
constexpr std::size_t kLanes = 4U;
constexpr std::size_t kActivations1 = static_cast<std::size_t>(kSize1.height) * kSize1.width * fm::kConv1;
constexpr std::size_t kActivations2 = static_cast<std::size_t>(kSize2.height) * kSize2.width * fm::kConv2;
constexpr std::size_t kLaneSampleNodes =
    kHead.in + nn::Linear<float>::nodes<bt::LaneParams<float>>(kHead) + nn::kLaneCrossEntropyNodes;
constexpr std::size_t kLaneSampleSlots =
    nn::Linear<float>::view_slots<bt::LaneParams<float>>(kHead) + bt::pick_slots(kLanes);
constexpr nn::LanePlan kLanePlan =
    nn::make_lane_plan<float, kLanes>(kParameters, kLaneSampleNodes, kLaneSampleSlots, nn::OptimizerKind::kSgd);
}  // namespace finetune

}  // namespace firmware

#endif  // BURTORCH_TARGETS_FIRMWARE_PLANS_HPP
