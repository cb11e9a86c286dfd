// SPDX-License-Identifier: Apache-2.0
// A 2-8-1 network for XOR: Linear(2, 8) tanh, Linear(8, 1) sigmoid, mean
// squared error. Its memory plan is a constexpr function of the layer
// sizes, built from the layers' own node and slot counts, so the tape is
// sized at compile time and a model that does not fit does not compile.
#ifndef XOR_MODEL_HPP
#define XOR_MODEL_HPP

#include <burtorch/burtorch.hpp>
#include <burtorch/nn/nn.hpp>

#include <array>
#include <cstddef>
#include <limits>

namespace xor_example {

namespace bt = burtorch;
namespace nn = burtorch::nn;

constexpr std::size_t kHidden = 8U;
constexpr nn::OptimizerKind kOptimizer = nn::OptimizerKind::kAdam;

// The two layers: sizes, activation, initialisation (biases start at 0).
constexpr nn::LinearOptions hidden_options() noexcept {
  nn::LinearOptions o{};
  o.in = 2U;
  o.out = static_cast<bt::Index>(kHidden);
  o.act = nn::Activation::kTanh;
  o.weight_init = nn::Init::fan_in_uniform(nn::kGainTanh);
  o.bias_init = nn::Init::zeros();
  return o;
}
constexpr nn::LinearOptions output_options() noexcept {
  nn::LinearOptions o{};
  o.in = static_cast<bt::Index>(kHidden);
  o.out = 1U;
  o.act = nn::Activation::kSigmoid;
  o.weight_init = nn::Init::fan_in_uniform(nn::kGainSigmoid);
  o.bias_init = nn::Init::zeros();
  return o;
}

template <class T>
struct XorNet {
  nn::Linear<T> hidden;
  nn::Linear<T> output;

  static constexpr std::size_t parameters() noexcept {
    return nn::Linear<T>::parameters(hidden_options()) + nn::Linear<T>::parameters(output_options());
  }
  // One sample: 2 input leaves, the two layers on views, the loss.
  static constexpr std::size_t sample_nodes() noexcept {
    return 2U + nn::Linear<T>::nodes(hidden_options()) + nn::Linear<T>::nodes(output_options()) +
           2U;  // mse of one output: 1 + 1
  }
  static constexpr std::size_t sample_slots() noexcept {
    return nn::Linear<T>::view_slots(hidden_options()) + nn::Linear<T>::view_slots(output_options());
  }
  static constexpr nn::MemoryPlan plan() noexcept {
    return nn::make_plan<T>(parameters(), sample_nodes(), sample_slots(), kOptimizer);
  }

  bool create(bt::Tape<T>& tape, nn::Rng& rng) noexcept {
    return hidden.create(tape, hidden_options(), rng) && output.create(tape, output_options(), rng);
  }

  // The parameters on the tape: the hidden layer's, then the output's.
  bt::View params() const noexcept {
    const bt::View h = hidden.params();
    const bt::View o = output.params();
    const bool adjacent = (h.count != 0U) && (o.count != 0U) && (o.first == (h.first + h.count));
    return adjacent ? bt::View{h.first, h.count + o.count} : bt::kNoView;
  }

  // Records one sample; returns its loss (invalid if the tape failed).
  bt::Value<T> loss(bt::Tape<T>& tape, T a, T b, T target) const noexcept {
    const bt::Value<T> x0 = tape.leaf(a);
    static_cast<void>(tape.leaf(b));
    const bt::View h = hidden.forward(tape, bt::View{x0.index(), 2U});
    const bt::View y = output.forward(tape, h);
    return nn::mse(tape, y, target);
  }
};

// The four XOR cases: inputs and target.
template <class T>
struct Case {
  T a;
  T b;
  T target;
};
template <class T>
constexpr std::array<Case<T>, 4U> kCases = {{{T(0), T(0), T(0)}, {T(0), T(1), T(1)}, {T(1), T(0), T(1)}, {T(1), T(1), T(0)}}};

// One epoch: the four cases as one serial batch (nn::serial_batch: per
// case forward, backward and rewind, so the tape holds one case's graph at
// a time; the parameters' gradients accumulate to the batch mean), then one
// optimizer step. Records the most nodes and slots a case used. Returns the
// mean loss, NaN if the tape failed or the step was refused.
template <class T>
T train_epoch(bt::Tape<T>& tape, const XorNet<T>& net, nn::Optimizer<T>& optimizer, std::size_t* peak_nodes,
              std::size_t* peak_slots) noexcept {
  const T loss = nn::serial_batch(tape, net.params(), 4U, [&](bt::Tape<T>& t, std::size_t i) {
    const Case<T>& c = kCases<T>[i];
    const bt::Value<T> sample_loss = net.loss(t, c.a, c.b, c.target);
    *peak_nodes = (t.size() > *peak_nodes) ? t.size() : *peak_nodes;
    *peak_slots = (t.usage().slots > *peak_slots) ? t.usage().slots : *peak_slots;
    return sample_loss;
  });
  const bt::Status stepped = optimizer.step(tape, net.params());
  return (stepped == bt::Status::kOk) ? loss : std::numeric_limits<T>::quiet_NaN();
}

}  // namespace xor_example

#endif  // XOR_MODEL_HPP
