// SPDX-License-Identifier: Apache-2.0
// A 2-8-1 network for XOR: Linear(2, 8) tanh, Linear(8, 1) sigmoid, mean
// squared error. Its memory plan is a constexpr function of the layer
// sizes, built from the layers' own node and slot counts, so the tape is
// sized at compile time and a model that does not fit does not compile.
#ifndef XOR_MODEL_HPP
#define XOR_MODEL_HPP

#include <burtorch/burtorch.hpp>
#include <burtorch/nn/nn.hpp>

#include <cstddef>

namespace xor_example {

namespace bt = burtorch;
namespace nn = burtorch::nn;

constexpr std::size_t kHidden = 8U;
constexpr nn::OptimizerKind kOptimizer = nn::OptimizerKind::kAdam;

template <class T>
struct XorNet {
  nn::Linear<T> hidden;
  nn::Linear<T> output;

  static constexpr std::size_t parameters() noexcept {
    return nn::Linear<T>::parameters(2U, kHidden, true) + nn::Linear<T>::parameters(kHidden, 1U, true);
  }
  // One sample: 2 input leaves, the two layers on views, the loss.
  static constexpr std::size_t sample_nodes() noexcept {
    return 2U + nn::Linear<T>::nodes(kHidden, nn::Activation::kTanh) +
           nn::Linear<T>::nodes(1U, nn::Activation::kSigmoid) + 2U;  // mse of one output: 1 + 1
  }
  static constexpr std::size_t sample_slots() noexcept {
    return nn::Linear<T>::view_slots(kHidden) + nn::Linear<T>::view_slots(1U);
  }
  static constexpr nn::MemoryPlan plan() noexcept {
    return nn::make_plan<T>(parameters(), sample_nodes(), sample_slots(), kOptimizer);
  }

  bool create(bt::Tape<T>& tape, nn::Rng& rng) noexcept {
    return hidden.create(tape, 2U, static_cast<bt::Index>(kHidden), true, nn::Activation::kTanh,
                         nn::Init::fan_in_uniform(nn::kGainTanh), nn::Init::zeros(), rng) &&
           output.create(tape, static_cast<bt::Index>(kHidden), 1U, true, nn::Activation::kSigmoid,
                         nn::Init::fan_in_uniform(nn::kGainSigmoid), nn::Init::zeros(), rng);
  }

  // Records one sample; returns its loss (invalid if the tape failed).
  bt::Value<T> loss(bt::Tape<T>& tape, T a, T b, T target) const noexcept {
    const bt::Value<T> x0 = tape.leaf(a);
    static_cast<void>(tape.leaf(b));
    const nn::View h = hidden.forward(tape, nn::View{x0.index(), 2U});
    const nn::View y = output.forward(tape, h);
    return nn::mse(tape, y, &target);
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
constexpr Case<T> kCases[4] = {{T(0), T(0), T(0)}, {T(0), T(1), T(1)}, {T(1), T(0), T(1)}, {T(1), T(1), T(0)}};

// One epoch: the four cases as one serial batch (nn::serial_batch: per
// case forward, backward and rewind, so the tape holds one case's graph at
// a time; the parameters' gradients accumulate to the batch mean), then one
// optimizer step. Records the most nodes and slots a case used. Returns the
// mean loss, NaN if the tape failed.
template <class T>
T train_epoch(bt::Tape<T>& tape, const XorNet<T>& net, nn::Optimizer<T>& optimizer, std::size_t parameters,
              std::size_t* peak_nodes, std::size_t* peak_slots) noexcept {
  const T loss = nn::serial_batch(tape, 0U, parameters, 4U, [&](bt::Tape<T>& t, std::size_t i) {
    const Case<T>& c = kCases<T>[i];
    const bt::Value<T> sample_loss = net.loss(t, c.a, c.b, c.target);
    *peak_nodes = (t.size() > *peak_nodes) ? t.size() : *peak_nodes;
    *peak_slots = (t.slots_used() > *peak_slots) ? t.slots_used() : *peak_slots;
    return sample_loss;
  });
  optimizer.step(tape.values(), tape.grads());
  return loss;
}

}  // namespace xor_example

#endif  // XOR_MODEL_HPP
