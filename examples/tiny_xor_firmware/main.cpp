// SPDX-License-Identifier: Apache-2.0
// The smallest trainer: XOR learned on the device by a 2-4-1 MLP (tanh
// hidden layer, linear output), mean squared error, plain SGD over the four
// cases as one batch, FP32. The loss goes to the port's console every 200
// epochs through burtorch::format_float: no printf, no heap, no double.
//
// The tape, the parameters and their gradients live in one FixedTape sized
// at compile time; SGD keeps no state. The initial weights come from a
// 32-bit xorshift drawn in float arithmetic, given to nn::Linear::create
// as values: no Rng and no Init code linked (create(tape, options, rng)
// draws in float too, and links the Rng and, for constexpr options with
// the default uniform init, only the uniform draw).
//
// Built with TINY_XOR_DEFAULTS=1 (target tiny_xor_firmware_defaults) it is
// the same trainer written as docs/getting-started-mcu.md teaches: the
// layers made by create(tape, options, rng) (torch.nn.Linear's
// initialisation, drawn in float) and the numbers printed with
// burtorch::format_double.
//
// Prints "epoch <n> loss <x>" and "final loss <x>"; returns 0 (QEMU's exit
// code) if the loss went below 0.01 without a tape error.
#include <burtorch/nn/linear.hpp>
#include <burtorch/nn/losses.hpp>
#include <burtorch/nn/optim.hpp>
#include <burtorch/nn/train.hpp>
#include <burtorch/port/port.hpp>
#include <burtorch/tools/stream.hpp>

#include <cstddef>
#include <cstdint>

#ifndef TINY_XOR_DEFAULTS
#define TINY_XOR_DEFAULTS 0
#endif

namespace bt = burtorch;
namespace nn = burtorch::nn;

namespace {

constexpr nn::LinearOptions layer(bt::Index in, bt::Index out, nn::Activation act) noexcept {
  nn::LinearOptions o{};
  o.in = in;
  o.out = out;
  o.act = act;
  return o;
}
constexpr nn::LinearOptions kHidden = layer(2U, 4U, nn::Activation::kTanh);
constexpr nn::LinearOptions kOutput = layer(4U, 1U, nn::Activation::kIdentity);

// What one sample records after the parameters: 2 inputs, the layers'
// outputs, mse's difference and its mean.
constexpr std::size_t kParams = nn::Linear<float>::parameters(kHidden) + nn::Linear<float>::parameters(kOutput);
constexpr std::size_t kNodes = kParams + 2U + nn::Linear<float>::nodes(kHidden) + nn::Linear<float>::nodes(kOutput) + 2U;
constexpr std::size_t kSlots = nn::Linear<float>::view_slots(kHidden) + nn::Linear<float>::view_slots(kOutput);

bt::FixedTape<float, kNodes, kSlots, kParams> g_tape;

constexpr float kCases[4][3] = {{0.0F, 0.0F, 0.0F}, {0.0F, 1.0F, 1.0F}, {1.0F, 0.0F, 1.0F}, {1.0F, 1.0F, 0.0F}};

#if !TINY_XOR_DEFAULTS
// Uniform in [-bound, bound) from a 32-bit xorshift, in float arithmetic.
struct Draw {
  std::uint32_t state = 2463534242U;
  float operator()(float bound) noexcept {
    state ^= state << 13U;
    state ^= state >> 17U;
    state ^= state << 5U;
    const float unit = static_cast<float>(state >> 8U) * (1.0F / 16777216.0F);  // [0, 1), exact
    return bound * ((2.0F * unit) - 1.0F);
  }
};
#endif

void print(const char* label, float value) {
#if TINY_XOR_DEFAULTS
  char text[32];
  const std::size_t n = bt::format_double(value, text, sizeof(text), 6);
#else
  char text[24];
  const std::size_t n = bt::format_float(value, text, sizeof(text), 6);
#endif
  bt::port::write(label);
  bt::port::write(text, n);
}

}  // namespace

int main() {
  nn::Linear<float> hidden;
  nn::Linear<float> output;
#if TINY_XOR_DEFAULTS
  nn::Rng rng(1U);
  if (!hidden.create(g_tape, kHidden, rng) || !output.create(g_tape, kOutput, rng)) {
    return 1;
  }
#else
  float initial[kParams];
  Draw draw;
  for (float& w : initial) {
    w = draw(0.9F);
  }
  if (!hidden.create(g_tape, kHidden, initial) ||
      !output.create(g_tape, kOutput, &initial[nn::Linear<float>::parameters(kHidden)])) {
    return 1;
  }
#endif
  const bt::View params{hidden.weight, static_cast<bt::Index>(kParams)};
  nn::OptimizerOptions<float> sgd;
  sgd.lr = 0.1F;
  nn::Optimizer<float> optimizer(sgd);  // SGD: no state

  const auto sample_loss = [&](bt::Tape<float>& tape, std::size_t i) {
    const bt::Index first = static_cast<bt::Index>(tape.size());
    static_cast<void>(tape.input(kCases[i][0]));
    static_cast<void>(tape.input(kCases[i][1]));
    const bt::View h = hidden.forward<nn::Activation::kTanh>(tape, bt::View{first, 2U});
    const bt::View y = output.forward<nn::Activation::kIdentity>(tape, h);
    return nn::mse(tape, y, &kCases[i][2]);
  };
  float loss = 0.0F;
  for (unsigned epoch = 1U; epoch <= 1000U; ++epoch) {
    loss = nn::serial_batch<nn::OptimizerKind::kSgd>(g_tape, params, 4U, sample_loss, optimizer);
    if ((epoch % 100U) == 0U) {
      print("epoch ", static_cast<float>(epoch));
      print(" loss ", loss);
      bt::port::write("\n");
    }
  }
  print("final loss ", loss);
  bt::port::write("\n");
  return ((g_tape.status() == bt::Status::kOk) && (loss < 0.01F)) ? 0 : 1;
}
