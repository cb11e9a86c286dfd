// SPDX-License-Identifier: Apache-2.0
// On-device training of the paper's makemore MLP with e = 4 (5,963
// parameters) in FP32 with SGD, on names generated on the fly from
// data/default_data.hpp (nothing stored but the model). The whole state --
// parameters, gradients, one sample's activations -- is one statically
// allocated tape sized by the model's memory plan; the link's RAM budget
// (targets/firmware/CMakeLists.txt) is the enforced limit.
// Prints the mean loss every kPrintEvery steps; exits 0 only if the last
// printed loss is below kThreshold.
#include <burtorch/burtorch.hpp>
#include <burtorch/nn/nn.hpp>
#include <burtorch/port/port.hpp>

#include <cstdint>

#include "default_data.hpp"
#include "firmware.hpp"
#include "plans.hpp"

namespace bt = burtorch;
namespace nn = burtorch::nn;

namespace {

// The model and its memory plan: plans.hpp (tests/nn/test_nn_memory.cpp checks the plan).
using firmware::mlp::kConfig;
using firmware::mlp::kPlan;
static_assert(kPlan.parameters == 5963U, "d = 1,755 + 1,052 e");
constexpr int kSteps = 800;
constexpr int kBatch = 8;
constexpr int kPrintEvery = 100;
constexpr float kLr = 0.3F;
// ln(27) = 3.30 is the loss of a uniform guess; the generated names' letter
// statistics alone give about 2.9: below 3.0 the model has learned them.
constexpr float kThreshold = 3.0F;
constexpr std::uint32_t kWords = 4000U;

// The tape (SGD: no optimizer state): one object of kPlan.bytes.
nn::TrainingMemory<float, kPlan> g_memory;
static_assert(sizeof(g_memory) == kPlan.bytes, "the plan counts every byte");
bt::Tape<float>& g_tape = g_memory.tape;
nn::MakemoreMlp<float> g_model;

void sample(nn::Rng& rng, std::uint8_t* context, std::uint8_t* target) {
  char word[default_data::kMaxNameLength + 1U];
  const std::size_t len = default_data::name(rng.below(kWords), word);
  const std::size_t pos = rng.below(static_cast<std::uint32_t>(len + 1U));
  for (std::size_t k = 0U; k < 16U; ++k) {
    const std::size_t back = 16U - k;
    context[k] = (back <= pos) ? static_cast<std::uint8_t>(word[pos - back] - 'a' + 1) : std::uint8_t{0};
  }
  *target = (pos < len) ? static_cast<std::uint8_t>(word[pos] - 'a' + 1) : std::uint8_t{0};
}

}  // namespace

int main() {
  using firmware::print;
  firmware::print_banner("burtorch-train-mlp: makemore MLP e=4", kPlan, kBatch, "");
  nn::Rng rng(42U);
  firmware::create_model(g_model, g_tape, kConfig, rng);
  nn::Optimizer<float> opt(firmware::sgd(kLr));  // SGD: no state
  const bt::View params = g_model.params();
  float since = 0.0F;
  float last = 1e9F;
  const float t0 = firmware::seconds();
  for (int step = 1; step <= kSteps; ++step) {
    std::uint8_t ctx[kBatch][16];
    std::uint8_t y[kBatch];
    for (int b = 0; b < kBatch; ++b) {
      sample(rng, ctx[b], &y[b]);
    }
    const float loss = nn::serial_batch(g_tape, params, kBatch, [&](bt::Tape<float>& tp, std::size_t i) {
      return g_model.loss(tp, ctx[i], y[i]);
    });
    if (g_tape.status() != bt::Status::kOk) {
      firmware::fail("training failed", g_tape);
    }
    firmware::step(opt, g_tape, params);
    since += loss;
    if ((step % kPrintEvery) == 0) {
      last = since / kPrintEvery;
      since = 0.0F;
      firmware::print_step("", static_cast<std::uint64_t>(step), last);
    }
  }
  const float elapsed = firmware::seconds() - t0;
  firmware::print_rate(kSteps, elapsed);
  const bool ok = last < kThreshold;
  print(ok ? "PASS: loss below " : "FAIL: loss not below ");
  firmware::print_number(kThreshold);
  print("\n");
  bt::port::exit(ok ? 0 : 1);
}
