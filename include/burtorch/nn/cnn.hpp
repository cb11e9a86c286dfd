// SPDX-License-Identifier: Apache-2.0
/// @file
/// A small image CNN (burtorch-cnn's model, the backbone the fine-tuning
/// firmware freezes in flash, bench_cnn's row):
///
///   x: side x side pixels of `channels`, channels-last
///   conv1  Conv2d(channels -> conv1, 3 x 3, stride 2, padding 1), ReLU
///   conv2  Conv2d(conv1 -> conv2, 3 x 3, stride 2, padding 1), ReLU
///   pool   AvgPool2d over all remaining positions (a global average)
///   head   Linear(conv2 -> classes), softmax cross-entropy
///
/// For side 8: 8 x 8 -> 4 x 4 x conv1 -> 2 x 2 x conv2 -> conv2 features.
/// Parameters in this order, each layer weights then biases: conv1
/// ([conv1][3][3][channels]), conv2, head ([classes][conv2]); every one
/// drawn as torch.nn's defaults draw them (U(-1/sqrt(fan_in),
/// 1/sqrt(fan_in)), Init::fan_in_uniform(kGainLinearDefault)). The pooled
/// features are the backbone's output: a fine-tuned copy keeps conv1 and
/// conv2 frozen (nn::FrozenConv2d over the same options) and trains the
/// head alone. Lane batches (nn::lane_batch): loss() on a tape of N lanes,
/// N pictures per sweep, the parameters shared from their own tape;
/// lane_plan() sizes both tapes.
#ifndef BURTORCH_NN_CNN_HPP
#define BURTORCH_NN_CNN_HPP

#include <cstddef>
#include <cstdint>

#include "burtorch/lanes/ops.hpp"
#include "burtorch/lanes/lanes.hpp"
#include "burtorch/nn/conv.hpp"
#include "burtorch/nn/linear.hpp"
#include "burtorch/nn/losses.hpp"
#include "burtorch/nn/optim.hpp"
#include "burtorch/nn/plan.hpp"
#include "burtorch/nn/train.hpp"
#include "burtorch/nn/pool.hpp"
#include "burtorch/nn/random.hpp"
#include "burtorch/core/tape.hpp"

namespace burtorch {
namespace nn {

/// Sizes of a SmallCnn (burtorch-cnn's defaults).
struct CnnOptions {
  Index side = 8U;      ///< pixels per row and column (2 to 20: the pooled map is at most 5 x 5)
  Index channels = 1U;  ///< input channels
  Index conv1 = 4U;     ///< first convolution's channels
  Index conv2 = 8U;     ///< second convolution's channels: the features the head sees
  Index classes = 4U;   ///< logits
};
/// The model of the file comment.
template <class T>
class SmallCnn {
 public:
  static constexpr Index kMaxSide = 20U;  ///< largest CnnOptions::side

  /// The layers of a configuration, as create() builds them (the pool and
  /// the head below).
  /// @{
  static constexpr Conv2dOptions conv1_options(const CnnOptions& c) noexcept {
    Conv2dOptions o{};
    o.in_channels = c.channels;
    o.out_channels = c.conv1;
    o.kernel_h = 3U;
    o.kernel_w = 3U;
    o.stride_h = 2U;
    o.stride_w = 2U;
    o.padding_h = 1U;
    o.padding_w = 1U;
    o.act = Activation::kRelu;
    o.weight_name = BURTORCH_NAME("conv1.w");
    o.bias_name = BURTORCH_NAME("conv1.b");
    return o;
  }
  static constexpr Conv2dOptions conv2_options(const CnnOptions& c) noexcept {
    Conv2dOptions o = conv1_options(c);
    o.in_channels = c.conv1;
    o.out_channels = c.conv2;
    o.weight_name = BURTORCH_NAME("conv2.w");
    o.bias_name = BURTORCH_NAME("conv2.b");
    return o;
  }
  /// @}
  /// Positions after conv1.
  static constexpr Size2d size1(const CnnOptions& c) noexcept {
    return Conv2d<T>::output_size(conv1_options(c), Size2d{c.side, c.side});
  }
  /// Positions after conv2.
  static constexpr Size2d size2(const CnnOptions& c) noexcept {
    return Conv2d<T>::output_size(conv2_options(c), size1(c));
  }
  /// The global average: one window over all of conv2's positions.
  static constexpr Pool2dOptions pool_options(const CnnOptions& c) noexcept {
    return Pool2dOptions{c.conv2, size2(c).height, size2(c).width, 0U, 0U};
  }
  /// The head: Linear(conv2 -> classes).
  static constexpr LinearOptions head_options(const CnnOptions& c) noexcept {
    LinearOptions o{};
    o.in = c.conv2;
    o.out = c.classes;
    o.weight_name = BURTORCH_NAME("head.w");
    o.bias_name = BURTORCH_NAME("head.b");
    return o;
  }

  /// Pixels of one input (side * side * channels).
  static constexpr std::size_t inputs(const CnnOptions& c) noexcept {
    return static_cast<std::size_t>(c.side) * c.side * c.channels;
  }
  /// Parameters of conv1 and conv2 (weights and biases): the backbone.
  static constexpr std::size_t backbone_parameters(const CnnOptions& c) noexcept {
    return Conv2d<T>::parameters(conv1_options(c)) + Conv2d<T>::parameters(conv2_options(c));
  }
  /// Every parameter: the backbone's, then the head's.
  static constexpr std::size_t parameters(const CnnOptions& c) noexcept {
    return backbone_parameters(c) + Linear<T>::parameters(head_options(c));
  }
  /// One sample up to the pooled features: the input leaves, conv1, conv2, the pool.
  static constexpr std::size_t feature_nodes(const CnnOptions& c) noexcept {
    return inputs(c) + Conv2d<T>::nodes(conv1_options(c), Size2d{c.side, c.side}) +
           Conv2d<T>::nodes(conv2_options(c), size1(c)) + AvgPool2d<T>::nodes(pool_options(c), size2(c));
  }
  /// feature_nodes(), the logits and the loss.
  static constexpr std::size_t sample_nodes(const CnnOptions& c) noexcept {
    return feature_nodes(c) + Linear<T>::nodes(head_options(c)) + kCrossEntropyNodes;
  }
  /// Both convolutions' view lists and descriptors, the pool's lists, the head's.
  static constexpr std::size_t sample_slots(const CnnOptions& c) noexcept {
    return Conv2d<T>::slots(conv1_options(c), Size2d{c.side, c.side}) + Conv2d<T>::slots(conv2_options(c), size1(c)) +
           AvgPool2d<T>::slots(pool_options(c), size2(c)) + Linear<T>::view_slots(head_options(c));
  }
  /// The model's memory plan (exact: tests/nn/test_nn_conv.cpp, small_cnn_plan_exact).
  static constexpr MemoryPlan plan(const CnnOptions& c, OptimizerKind optimizer) noexcept {
    return make_plan<T>(parameters(c), sample_nodes(c), sample_slots(c), optimizer);
  }
  /// One sweep of a lane batch (loss() on a tape of lanes): the pictures
  /// as inputs, both convolutions and the pool, the head, the loss.
  static constexpr std::size_t lane_sample_nodes(const CnnOptions& c) noexcept {
    return inputs(c) + Conv2d<T>::template nodes<LaneParams<T>>(conv1_options(c), Size2d{c.side, c.side}) +
           Conv2d<T>::template nodes<LaneParams<T>>(conv2_options(c), size1(c)) + AvgPool2d<T>::nodes(pool_options(c), size2(c)) +
           Linear<T>::template nodes<LaneParams<T>>(head_options(c)) + kLaneCrossEntropyNodes;
  }
  /// Argument slots of that sweep on a tape of N lanes.
  template <std::size_t N>
  static constexpr std::size_t lane_sample_slots(const CnnOptions& c) noexcept {
    return Conv2d<T>::template slots<LaneParams<T>>(conv1_options(c), Size2d{c.side, c.side}) +
           Conv2d<T>::template slots<LaneParams<T>>(conv2_options(c), size1(c)) + AvgPool2d<T>::slots(pool_options(c), size2(c)) +
           Linear<T>::template view_slots<LaneParams<T>>(head_options(c)) + burtorch::pick_slots(N);
  }
  /// The memory plan of lane batches of N lanes (exact: tests/nn/test_nn_lanes.cpp).
  template <std::size_t N>
  static constexpr LanePlan lane_plan(const CnnOptions& c, OptimizerKind optimizer) noexcept {
    return make_lane_plan<T, N>(parameters(c), lane_sample_nodes(c), lane_sample_slots<N>(c), optimizer);
  }
  /// True for sizes create() accepts.
  static constexpr bool valid(const CnnOptions& c) noexcept {
    return (c.side >= 2U) && (c.side <= kMaxSide) && (c.channels != 0U) && (c.conv1 != 0U) && (c.conv2 != 0U) &&
           (c.classes != 0U);
  }

  /// Creates every parameter in the order of the file comment; call on an
  /// empty tape (parameters first). False if the tape is full or failed or
  /// the sizes are not valid(); params() is then kNoView.
  bool create(Tape<T>& tape, const CnnOptions& c, Rng& rng) noexcept {
    options_ = c;
    params_ = kNoView;
    if (!valid(c)) {
      static_cast<void>(tape.report(Status::kInvalidArgument));
      return false;
    }
    pool_.options = pool_options(c);
    const bool ok = conv1_.create(tape, conv1_options(c), rng) && conv2_.create(tape, conv2_options(c), rng) &&
                    head_.create(tape, head_options(c), rng);
    params_ = model_params(ok, conv1_.params(), head_.params(), parameters(c));
    return params_.count != 0U;
  }

  /// Every parameter (kNoView before a successful create()).
  View params() const noexcept { return params_; }
  /// The head's weights and biases: the last parameters.
  View head_params() const noexcept { return head_.params(); }
  /// The sizes given to create().
  const CnnOptions& options() const noexcept { return options_; }

  /// Records the input (inputs() values, channels-last) as leaves, both
  /// convolutions and the pool; returns the conv2 pooled features.
  View features(Tape<T>& tape, const float* pixels) const noexcept {
    if ((params_.count == 0U) || (pixels == nullptr)) {  // before anything is recorded
      static_cast<void>(tape.report(Status::kInvalidArgument));
      return kNoView;
    }
    return all_or_nothing(tape, kNoView, [&]() noexcept {
      const View in = burtorch::record_view(tape, static_cast<Index>(inputs(options_)),
                                            [&](Index i) noexcept { return tape.leaf(static_cast<T>(pixels[i])); });
      const View h1 = conv1_.forward(tape, in, Size2d{options_.side, options_.side});
      const View h2 = conv2_.forward(tape, h1, size1(options_));
      return pool_.forward(tape, h2, size2(options_));
    });
  }
  /// The logits of one input.
  View logits(Tape<T>& tape, const float* pixels) const noexcept {
    return all_or_nothing(tape, kNoView,
                          [&]() noexcept { return head_.forward(tape, flatten(features(tape, pixels))); });
  }
  /// The loss of one input: cross-entropy of its logits against `label`.
  Value<T> loss(Tape<T>& tape, const float* pixels, Index label) const noexcept {
    if (label >= options_.classes) {  // before the logits are recorded
      static_cast<void>(tape.report(Status::kInvalidArgument));
      return Value<T>(&tape, kNoIndex);
    }
    return all_or_nothing(tape, Value<T>(&tape, kNoIndex),
                          [&]() noexcept { return cross_entropy(tape, logits(tape, pixels), label); });
  }

  /// The logits of N pictures on a tape of N lanes (lane l: pixels[l]),
  /// the parameters shared from their own tape through p
  /// (nn::lane_params); the pictures are recorded as inputs.
  template <std::size_t N>
  View logits(Tape<Lanes<T, N>>& tape, const LaneParams<T>& p, const float* const* pixels) const noexcept {
    if ((pixels == nullptr) || !burtorch::detail::params_cover(p, params_.first, params_.count)) {
      static_cast<void>(tape.report(Status::kInvalidArgument));
      return kNoView;
    }
    for (std::size_t l = 0U; l < N; ++l) {
      if (pixels[l] == nullptr) {
        static_cast<void>(tape.report(Status::kInvalidArgument));
        return kNoView;
      }
    }
    return all_or_nothing(tape, kNoView, [&]() noexcept {
      const View in = burtorch::record_view(tape, static_cast<Index>(inputs(options_)), [&](Index i) noexcept {
        Lanes<T, N> x;
        for (std::size_t l = 0U; l < N; ++l) {
          x.lane[l] = static_cast<T>(pixels[l][i]);
        }
        return tape.input(x);
      });
      const View h1 = conv1_.forward(tape, p, in, Size2d{options_.side, options_.side});
      const View h2 = conv2_.forward(tape, p, h1, size1(options_));
      return head_.forward(tape, p, flatten(pool_.forward(tape, h2, size2(options_))));
    });
  }
  /// The losses of N pictures at once (lane l: pixels[l], class labels[l]).
  template <std::size_t N>
  Value<Lanes<T, N>> loss(Tape<Lanes<T, N>>& tape, const LaneParams<T>& p, const float* const* pixels,
                          const Index* labels) const noexcept {
    bool ok = labels != nullptr;
    for (std::size_t l = 0U; ok && (l < N); ++l) {
      ok = labels[l] < options_.classes;
    }
    if (!ok) {  // before the logits are recorded
      static_cast<void>(tape.report(Status::kInvalidArgument));
      return Value<Lanes<T, N>>(&tape, kNoIndex);
    }
    return all_or_nothing(tape, Value<Lanes<T, N>>(&tape, kNoIndex), [&]() noexcept {
      const View z = logits(tape, p, pixels);
      return (z.count != 0U) ? cross_entropy(tape, z, labels) : Value<Lanes<T, N>>(&tape, kNoIndex);
    });
  }

 private:
  CnnOptions options_;
  View params_ = kNoView;
  Conv2d<T> conv1_;
  Conv2d<T> conv2_;
  AvgPool2d<T> pool_;
  Linear<T> head_;
};

}  // namespace nn
}  // namespace burtorch

#endif  // BURTORCH_NN_CNN_HPP
