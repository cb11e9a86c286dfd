// SPDX-License-Identifier: Apache-2.0
// The build machine's half of the compiled peer trainer (mlp_peer.cpp with
// PEER_COMPILED=1): records one sample of the library's 16-32-4 ReLU
// cross-entropy trainer after its parameters, as that trainer records it,
// and writes its step (peer_step.hpp, peer_step.cpp) into the directory
// given.
#include <burtorch/burtorch.hpp>
#include <burtorch/compile/emit.hpp>
#include <burtorch/nn/linear.hpp>
#include <burtorch/nn/losses.hpp>

#include "compile_step_main.hpp"

namespace bt = burtorch;
namespace nn = burtorch::nn;

namespace {
constexpr bt::Index kIn = 16U;
constexpr bt::Index kHidden = 32U;
constexpr bt::Index kOut = 4U;
constexpr nn::LinearOptions layer(bt::Index in, bt::Index out, nn::Activation act) noexcept {
  nn::LinearOptions o{};
  o.in = in;
  o.out = out;
  o.act = act;
  return o;
}
constexpr nn::LinearOptions kL1 = layer(kIn, kHidden, nn::Activation::kRelu);
constexpr nn::LinearOptions kL2 = layer(kHidden, kOut, nn::Activation::kIdentity);
constexpr std::size_t kParams = nn::Linear<float>::parameters(kL1) + nn::Linear<float>::parameters(kL2);
constexpr std::size_t kNodes = kParams + kIn + kHidden + kOut + nn::kCrossEntropyNodes;
constexpr std::size_t kSlots = nn::Linear<float>::view_slots(kL1) + nn::Linear<float>::view_slots(kL2);
bt::FixedTape<float, kNodes, kSlots, kParams> g_tape;
float g_zeros[kParams];
}  // namespace

int main(int argc, char** argv) {
  const char* dir = burtorch_compile::output_dir(argc, argv);
  if (dir == nullptr) {
    return 2;
  }
  nn::Linear<float> l1;
  nn::Linear<float> l2;
  if (!l1.create(g_tape, kL1, g_zeros) || !l2.create(g_tape, kL2, &g_zeros[nn::Linear<float>::parameters(kL1)])) {
    return 1;
  }
  const bt::Mark m = g_tape.mark();
  const bt::Index in = static_cast<bt::Index>(g_tape.size());
  for (bt::Index k = 0U; k < kIn; ++k) {
    static_cast<void>(g_tape.input(0.0F));
  }
  const bt::View h = l1.forward<nn::Activation::kRelu>(g_tape, bt::View{in, kIn});
  const bt::Value<float> loss = nn::cross_entropy(g_tape, l2.forward<nn::Activation::kIdentity>(g_tape, h), 0U);
  bt::compile::StepSpec spec;
  spec.name = "peer_step";
  spec.params = bt::View{0U, static_cast<bt::Index>(kParams)};
  spec.inputs = bt::View{in, kIn};
  spec.class_loss = loss.index();
  return burtorch_compile::write_step(dir, g_tape, m, loss, spec) ? 0 : 1;
}
