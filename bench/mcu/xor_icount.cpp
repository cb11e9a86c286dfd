// SPDX-License-Identifier: Apache-2.0
// Instructions per training step of the XOR trainer (2-4-1 tanh MLP, MSE,
// SGD, the four cases as one batch, FP32), trained on the tape as
// examples/tiny_xor_firmware trains it and by the compiled step of
// examples/compiled_step (burtorch_compile_step), from the same initial
// weights for the same number of epochs, timed under QEMU -icount
// (icount.hpp). Prints the calibration lines, then
//   "icount xor <variant> <epochs> <ticks> <final loss>"
// for variant interpreted and compiled; exits 1 unless the two final losses
// have the same bits.
#include <burtorch/nn/linear.hpp>
#include <burtorch/nn/losses.hpp>
#include <burtorch/nn/optim.hpp>
#include <burtorch/nn/train.hpp>
#include <burtorch/port/port.hpp>

#include <cstdint>
#include <cstring>

#include "icount.hpp"
#include "model.hpp"
#include "xor_step.hpp"

namespace bt = burtorch;
namespace nn = burtorch::nn;

namespace {

constexpr unsigned kEpochs = 200U;
constexpr float kLr = 0.1F;
// The model: examples/compiled_step's, which its step was compiled from.
using xor_model::kHidden;
using xor_model::kNodes;
using xor_model::kOutput;
using xor_model::kParams;
using xor_model::kSlots;
static_assert(xor_step::kParams == kParams, "the compiled step trains the same model");

bt::FixedTape<float, kNodes, kSlots, kParams> g_tape;
float g_v[xor_step::kNodes];
float g_g[xor_step::kNodes];
float g_initial[kParams];
constexpr float kCases[4][3] = {{0.0F, 0.0F, 0.0F}, {0.0F, 1.0F, 1.0F}, {1.0F, 0.0F, 1.0F}, {1.0F, 1.0F, 0.0F}};

struct Draw {
  std::uint32_t state = 2463534242U;
  float operator()(float bound) noexcept {
    state ^= state << 13U;
    state ^= state >> 17U;
    state ^= state << 5U;
    const float unit = static_cast<float>(state >> 8U) * (1.0F / 16777216.0F);
    return bound * ((2.0F * unit) - 1.0F);
  }
};

void report(const char* variant, std::uint64_t ticks, float loss) {
  icount::print("icount xor ");
  icount::print(variant);
  icount::print(" ");
  icount::print_u(kEpochs);
  icount::print(" ");
  icount::print_u(ticks);
  icount::print(" ");
  icount::print_d(static_cast<double>(loss));
  icount::print("\n");
}

}  // namespace

int main() {
  icount::print("burtorch-xor-icount: XOR 2-4-1 tanh MSE SGD, interpreted and compiled\n");
  icount::calibrate(100000U);
  Draw draw;
  for (float& w : g_initial) {
    w = draw(0.9F);
  }
  // On the tape, as examples/tiny_xor_firmware.
  nn::Linear<float> hidden;
  nn::Linear<float> output;
  if (!hidden.create(g_tape, kHidden, g_initial) ||
      !output.create(g_tape, kOutput, &g_initial[nn::Linear<float>::parameters(kHidden)])) {
    return 1;
  }
  const bt::View params{hidden.weight, static_cast<bt::Index>(kParams)};
  nn::OptimizerOptions<float> sgd;
  sgd.lr = kLr;
  nn::Optimizer<float> optimizer(sgd);
  const auto sample_loss = [&](bt::Tape<float>& tape, std::size_t i) {
    const bt::Index first = static_cast<bt::Index>(tape.size());
    static_cast<void>(tape.input(kCases[i][0]));
    static_cast<void>(tape.input(kCases[i][1]));
    const bt::View h = hidden.forward<nn::Activation::kTanh>(tape, bt::View{first, 2U});
    const bt::View y = output.forward<nn::Activation::kIdentity>(tape, h);
    return nn::mse(tape, y, &kCases[i][2]);
  };
  float interpreted = 0.0F;
  std::uint64_t t0 = icount::ticks();
  for (unsigned epoch = 0U; epoch < kEpochs; ++epoch) {
    interpreted = nn::serial_batch<nn::OptimizerKind::kSgd>(g_tape, params, 4U, sample_loss, optimizer);
  }
  report("interpreted", icount::ticks() - t0, interpreted);
  // Compiled.
  std::memcpy(&g_v[xor_step::kParamFirst], g_initial, sizeof(g_initial));
  float compiled = 0.0F;
  bool ok = true;
  t0 = icount::ticks();
  for (unsigned epoch = 0U; epoch < kEpochs; ++epoch) {
    float total = 0.0F;
    for (const auto& c : kCases) {
      ok = ok && (xor_step::step(g_v, g_g, &c[0], &c[2], 0U) == bt::Status::kOk);
      total += g_v[xor_step::kLoss];
    }
    xor_step::sgd(g_v, g_g, kLr, 0.25F);
    compiled = total / 4.0F;
  }
  report("compiled", icount::ticks() - t0, compiled);
  std::uint32_t a = 0U;
  std::uint32_t b = 0U;
  std::memcpy(&a, &interpreted, sizeof(a));
  std::memcpy(&b, &compiled, sizeof(b));
  ok = ok && (a == b) && (g_tape.status() == bt::Status::kOk);
  icount::print(ok ? "icount end\n" : "icount failed: the final losses differ\n");
  bt::port::exit(ok ? 0 : 1);
}
