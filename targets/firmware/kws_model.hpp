// SPDX-License-Identifier: Apache-2.0
// burtorch-train-kws's model (plans.hpp, namespace kws: Conv1d(kBins -> 8,
// k 3, stride 2) ReLU, Conv1d(8 -> 8, k 3) ReLU, a global AvgPool1d,
// Linear(8 -> 4)) and the spectrograms it learns from, in one header: the
// firmware (train_kws.cpp) trains it serially or by lane batches, and
// tests/nn/test_nn_firmware_lanes.cpp checks on every target that both give
// the same losses and gradients.
#ifndef BURTORCH_TARGETS_FIRMWARE_KWS_MODEL_HPP
#define BURTORCH_TARGETS_FIRMWARE_KWS_MODEL_HPP

#include <burtorch/burtorch.hpp>
#include <burtorch/nn/nn.hpp>

#include <cstddef>
#include <cstdint>

#include "plans.hpp"

namespace firmware {
namespace kws {

// The model's layers and where its parameters lie on their tape.
struct Model {
  nn::Conv1d<float> conv1;
  nn::Conv1d<float> conv2;
  nn::AvgPool1d<float> pool{kPool};
  nn::Linear<float> head;
  bt::View params = bt::kNoView;

  // Appends the parameters to `tape` (first on it: the parameter region),
  // drawn from rng; false if they do not fit.
  bool create(bt::Tape<float>& tape, nn::Rng& rng) {
    const bool ok =
        conv1.create(tape, kConv1, rng) && conv2.create(tape, kConv2, rng) && head.create(tape, kHead, rng);
    params = nn::model_params(ok, conv1.params(), head.params(), kParameters);
    return params.count != 0U;
  }

  // The logits of input x (kInputs values, channels-last), recorded on the
  // tape that holds the parameters; the input as leaves.
  bt::View logits(bt::Tape<float>& tape, const float* x) const {
    const bt::View in = bt::record_view(tape, kInputs, [&](bt::Index i) noexcept { return tape.leaf(x[i]); });
    const bt::View h1 = conv1.forward<kConv1.act>(tape, in, kTime);
    const bt::View h2 = conv2.forward<kConv2.act>(tape, h1, kLength1);
    const bt::View pooled = pool.forward(tape, h2, kLength2);
    return head.forward<kHead.act>(tape, nn::flatten(pooled));
  }

  // The logits of N inputs on a tape of N lanes (lane l: xs[l]), the layers
  // reading their weights from their own tape through p (nn::lane_params):
  // the same layers and leaves as logits().
  template <std::size_t N>
  bt::View logits(bt::Tape<bt::Lanes<float, N>>& tape, const bt::LaneParams<float>& p, const float* const* xs) const {
    const bt::View in = bt::record_view(tape, kInputs, [&](bt::Index i) noexcept {
      bt::Lanes<float, N> v;
      for (std::size_t l = 0U; l < N; ++l) {
        v.lane[l] = xs[l][i];
      }
      return tape.leaf(v);
    });
    const bt::View h1 = conv1.forward<kConv1.act>(tape, p, in, kTime);
    const bt::View h2 = conv2.forward<kConv2.act>(tape, p, h1, kLength1);
    const bt::View pooled = pool.forward(tape, h2, kLength2);
    return head.forward<kHead.act>(tape, p, nn::flatten(pooled));
  }
};

// One input of class `label` into x[kInputs] (channels-last).
inline void generate(nn::Rng& rng, std::uint32_t label, float* x) {
  for (bt::Index i = 0U; i < kInputs; ++i) {
    x[i] = 0.15F * rng.normal_float();
  }
  const std::uint32_t onset = rng.below(kTime - kWordFrames + 1U);
  const float loudness = rng.uniform_float(0.6F, 1.2F);
  // Pitch of the first frame: the whole word stays inside the bins.
  std::uint32_t start = 0U;
  if (label == 0U) {
    start = rng.below(kBins - kWordFrames + 1U);
  } else if (label == 1U) {
    start = (kWordFrames - 1U) + rng.below(kBins - kWordFrames + 1U);
  } else if (label == 2U) {
    start = rng.below(kBins);
  } else {
    start = rng.below(kBins - (kWordFrames / 2U) + 1U);
  }
  for (std::uint32_t k = 0U; k < kWordFrames; ++k) {
    std::uint32_t bin = start;
    if (label == 0U) {
      bin = start + k;
    } else if (label == 1U) {
      bin = start - k;
    } else if (label == 3U) {
      const std::uint32_t half = kWordFrames / 2U;
      bin = (k < half) ? (start + k) : (start + ((2U * half) - 1U - k));
    }
    float* frame = x + ((onset + k) * kBins);
    const float a = loudness * rng.uniform_float(0.8F, 1.2F);
    frame[bin] += a;
    // A tone leaks into its neighbouring bins.
    if (bin > 0U) {
      frame[bin - 1U] += 0.3F * a;
    }
    if ((bin + 1U) < kBins) {
      frame[bin + 1U] += 0.3F * a;
    }
  }
}

}  // namespace kws
}  // namespace firmware

#endif  // BURTORCH_TARGETS_FIRMWARE_KWS_MODEL_HPP
