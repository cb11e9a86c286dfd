// SPDX-License-Identifier: Apache-2.0
// burtorch-finetune's network (finetune.cpp): the pretrained backbone of
// finetune_model.hpp frozen in flash, twice (int8 weights with FP32 biases,
// and FP16), and the logits of the head trained over it, serially (the
// backbone recorded on the tape below Tape::stop_gradient) or for a sweep of
// N pictures on a tape of N lanes (the backbone evaluated in lanes without a
// tape). tests/nn/test_nn_firmware_lanes.cpp checks on every target that
// both give the same losses and gradients.
#ifndef BURTORCH_TARGETS_FIRMWARE_FINETUNE_NET_HPP
#define BURTORCH_TARGETS_FIRMWARE_FINETUNE_NET_HPP

#include <burtorch/burtorch.hpp>
#include <burtorch/frozen/ops.hpp>
#include <burtorch/nn/nn.hpp>

#include <cstddef>

#include "finetune_model.hpp"
#include "plans.hpp"

namespace firmware {
namespace finetune {

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

// The logits of picture x: the frozen backbone and the pool recorded on the
// tape, the stop (the backward sweep ends at the features), the head.
inline bt::View logits(bt::Tape<float>& tape, const Backbone& bb, const nn::AvgPool2d<float>& pool,
                       const nn::Linear<float>& head, const float* x) {
  const bt::View in = bt::record_view(tape, kInputs, [&](bt::Index i) noexcept { return tape.leaf(x[i]); });
  const bt::View h1 = bb.conv1->forward<kConv1Options.act>(tape, in, kIn);
  const bt::View h2 = bb.conv2->forward<kConv2Options.act>(tape, h1, kSize1);
  const bt::View features = pool.forward(tape, h2, kSize2);
  bt::stop_gradient(tape);
  return head.forward<kHead.act>(tape, nn::flatten(features));
}

// The frozen backbone's values for one sweep of N pictures.
template <std::size_t N>
struct LaneActivations {
  bt::Lanes<float, N> in[kInputs];
  bt::Lanes<float, N> h1[kActivations1];
  bt::Lanes<float, N> h2[kActivations2];
  bt::Lanes<float, N> features[kHead.in];
};

// The logits of the pictures xs[0 .. N) on a tape of N lanes: the frozen
// backbone and the pool evaluated in lanes without a tape (into act: each
// weight read once for the N pictures; no node, as nothing below the
// features is swept), the features recorded as inputs, then the head over
// the parameters p (nn::lane_params). kNoView and kInvalidArgument on the
// tape if the backbone refuses the geometry.
template <std::size_t N>
bt::View logits(bt::Tape<bt::Lanes<float, N>>& tape, const bt::LaneParams<float>& p, const Backbone& bb,
                const nn::AvgPool2d<float>& pool, const nn::Linear<float>& head, const float* const* xs,
                LaneActivations<N>& act) {
  for (bt::Index i = 0U; i < kInputs; ++i) {
    for (std::size_t l = 0U; l < N; ++l) {
      act.in[i].lane[l] = xs[l][i];
    }
  }
  const bool evaluated = bb.conv1->evaluate<kConv1Options.act>(act.in, kIn, act.h1) &&
                         bb.conv2->evaluate<kConv2Options.act>(act.h1, kSize1, act.h2) &&
                         pool.evaluate(act.h2, kSize2, act.features);
  if (!evaluated) {
    static_cast<void>(tape.report(bt::Status::kInvalidArgument));
    return bt::kNoView;
  }
  const bt::View features =
      bt::record_view(tape, kHead.in, [&tape, &act](bt::Index i) noexcept { return tape.input(act.features[i]); });
  return head.forward<kHead.act>(tape, p, features);
}

}  // namespace finetune
}  // namespace firmware

#endif  // BURTORCH_TARGETS_FIRMWARE_FINETUNE_NET_HPP
