// SPDX-License-Identifier: Apache-2.0
// XOR trained on the device by a compiled step: the 2-4-1 tanh MLP, MSE and
// SGD of examples/tiny_xor_firmware, the same initial weights, learning
// rate and batches, but no tape: the step was recorded on the build
// machine from model.hpp and emitted as C++ (burtorch_compile_step, see
// CMakeLists.txt); the firmware holds the values and gradients of the
// sample's nodes in two arrays of xor_step::kNodes floats.
//
// Prints "epoch <n> loss <x>" every 100 epochs and "final loss <x>";
// returns 0 (QEMU's exit code) if the loss went below 0.01.
#include <burtorch/port/port.hpp>
#include <burtorch/tools/stream.hpp>

#include <cstddef>
#include <cstdint>

#include "xor_step.hpp"

namespace bt = burtorch;

namespace {

// The sample's nodes: parameters first (where the tape held them), then
// the activations; their gradients.
float g_v[xor_step::kNodes];
float g_g[xor_step::kNodes];

constexpr float kCases[4][3] = {{0.0F, 0.0F, 0.0F}, {0.0F, 1.0F, 1.0F}, {1.0F, 0.0F, 1.0F}, {1.0F, 1.0F, 0.0F}};

// Uniform in [-bound, bound) from a 32-bit xorshift, in float arithmetic
// (tiny_xor_firmware's initial weights).
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

void print(const char* label, float value) {
  char text[24];
  const std::size_t n = bt::format_float(value, text, sizeof(text), 6);
  bt::port::write(label);
  bt::port::write(text, n);
}

}  // namespace

int main() {
  Draw draw;
  for (bt::Index k = 0U; k < xor_step::kParams; ++k) {
    g_v[xor_step::kParamFirst + k] = draw(0.9F);
  }
  float loss = 0.0F;
  bool ok = true;
  for (unsigned epoch = 1U; epoch <= 1000U; ++epoch) {
    float total = 0.0F;
    for (const auto& c : kCases) {
      ok = ok && (xor_step::step(g_v, g_g, &c[0], &c[2], 0U) == bt::Status::kOk);
      total += g_v[xor_step::kLoss];
    }
    xor_step::sgd(g_v, g_g, 0.1F, 0.25F);  // the batch's mean gradient
    loss = total / 4.0F;
    if ((epoch % 100U) == 0U) {
      print("epoch ", static_cast<float>(epoch));
      print(" loss ", loss);
      bt::port::write("\n");
    }
  }
  print("final loss ", loss);
  bt::port::write("\n");
  return (ok && (loss < 0.01F)) ? 0 : 1;
}
