// SPDX-License-Identifier: Apache-2.0
// The model of the compiled XOR trainer: a 2-4-1 MLP (tanh hidden layer,
// linear output), mean squared error, as examples/tiny_xor_firmware trains
// it on the tape. Recorded by generate.cpp on the build machine; the
// firmware (main.cpp) runs the compiled step and needs none of this.
#ifndef COMPILED_STEP_MODEL_HPP
#define COMPILED_STEP_MODEL_HPP

#include <burtorch/burtorch.hpp>
#include <burtorch/compile/emit.hpp>
#include <burtorch/nn/linear.hpp>
#include <burtorch/nn/losses.hpp>

#include <cstddef>

namespace xor_model {

namespace bt = burtorch;
namespace nn = burtorch::nn;

constexpr nn::LinearOptions layer(bt::Index in, bt::Index out, nn::Activation act) noexcept {
  nn::LinearOptions o{};
  o.in = in;
  o.out = out;
  o.act = act;
  return o;
}
constexpr nn::LinearOptions kHidden = layer(2U, 4U, nn::Activation::kTanh);
constexpr nn::LinearOptions kOutput = layer(4U, 1U, nn::Activation::kIdentity);
constexpr std::size_t kParams = nn::Linear<float>::parameters(kHidden) + nn::Linear<float>::parameters(kOutput);
constexpr std::size_t kNodes = kParams + 2U + nn::Linear<float>::nodes(kHidden) + nn::Linear<float>::nodes(kOutput) + 2U;
constexpr std::size_t kSlots = nn::Linear<float>::view_slots(kHidden) + nn::Linear<float>::view_slots(kOutput);

// Records one sample (inputs a, b, target y) after the parameters on
// `tape` and writes its step through the caller's writer:
// write(tape, mark, loss, spec) (burtorch_compile::write_step on the host).
template <class Write>
bool record_and_write(bt::Tape<float>& tape, Write write) {
  // The values do not matter: the compiled step reads the parameters from
  // the caller's array. Zeros, so nothing depends on a generator.
  const float zeros[kParams] = {};
  nn::Linear<float> hidden;
  nn::Linear<float> output;
  if (!hidden.create(tape, kHidden, zeros) || !output.create(tape, kOutput, &zeros[nn::Linear<float>::parameters(kHidden)])) {
    return false;
  }
  const bt::Mark m = tape.mark();
  const bt::Index first = static_cast<bt::Index>(tape.size());
  static_cast<void>(tape.input(0.0F));
  static_cast<void>(tape.input(0.0F));
  const bt::View h = hidden.forward<nn::Activation::kTanh>(tape, bt::View{first, 2U});
  const bt::View y = output.forward<nn::Activation::kIdentity>(tape, h);
  const float target = 0.0F;
  const bt::Value<float> loss = nn::mse(tape, y, &target);
  bt::compile::StepSpec spec;
  spec.name = "xor_step";
  spec.params = bt::View{hidden.weight, static_cast<bt::Index>(kParams)};
  spec.inputs = bt::View{first, 2U};
  spec.targets = bt::View{loss.index() - 1U, 1U};  // mse: the difference, then its mean
  return write(tape, m, loss, spec);
}

}  // namespace xor_model

#endif  // COMPILED_STEP_MODEL_HPP
