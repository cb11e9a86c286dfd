// SPDX-License-Identifier: Apache-2.0
// Getting started on a microcontroller (docs/getting-started-mcu.md): a
// 2-4-1 network learns XOR on the device -- a tanh hidden layer, a linear
// output, mean squared error, SGD -- and prints its loss on the console.
// The document shows this file block by block, and
// tools/check.d/44-make-firmware.sh checks that the two are the same.
#include <burtorch/burtorch.hpp>
#include <burtorch/nn/nn.hpp>
#include <burtorch/port/port.hpp>

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace bt = burtorch;
namespace nn = burtorch::nn;

namespace {

// The model: Linear(2 -> 4) with tanh, then Linear(4 -> 1), initialised as
// torch.nn.Linear is (uniform in +-1/sqrt(inputs)).
constexpr nn::LinearOptions kHidden{2U, 4U, nn::Activation::kTanh};
constexpr nn::LinearOptions kOutput{4U, 1U, nn::Activation::kIdentity};

// What the model takes on the tape: its parameters, then per sample the 2
// inputs, the two layers' outputs and the loss (the output minus the
// target, and the mean of the squares: kOutput.out + 1 nodes).
constexpr std::size_t kParameters = nn::Linear<float>::parameters(kHidden) + nn::Linear<float>::parameters(kOutput);
constexpr std::size_t kSampleNodes =
    2U + nn::Linear<float>::nodes(kHidden) + nn::Linear<float>::nodes(kOutput) + (kOutput.out + 1U);
constexpr std::size_t kSampleSlots = nn::Linear<float>::view_slots(kHidden) + nn::Linear<float>::view_slots(kOutput);
constexpr nn::MemoryPlan kPlan = nn::make_plan<float>(kParameters, kSampleNodes, kSampleSlots, nn::OptimizerKind::kSgd);

// Everything the plan counts -- the tape with its buffer and the optimizer
// state (none for SGD) -- is this one object, and the budget holds for it.
// It lives for the whole program, as a static inside the one function that
// hands it out (not a global variable: nothing else can reach it).
constexpr std::size_t kModelBudget = 2048U;
static_assert(kPlan.bytes <= kModelBudget, "the model does not fit its share of RAM");
using Memory = nn::TrainingMemory<float, kPlan>;
static_assert(sizeof(Memory) == kPlan.bytes, "the plan counts every byte");
Memory& training_memory() {
  static Memory g_memory;
  return g_memory;
}

struct Model {
  nn::Linear<float> hidden;
  nn::Linear<float> output;
  bt::View params = bt::kNoView;  // every parameter: the hidden layer's, then the output's

  // Creates the parameters, first on the tape; false if they do not fit.
  bool create(bt::Tape<float>& tape, nn::Rng& rng) {
    const bool ok = hidden.create(tape, kHidden, rng) && output.create(tape, kOutput, rng);
    params = nn::model_params(ok, hidden.params(), output.params(), kParameters);
    return params.count == kParameters;
  }

  // The network on one sample: its inputs become input nodes, recorded one
  // after another, so they are one view that the first layer reads; each
  // layer returns its outputs as a view for the next.
  bt::View forward(bt::Tape<float>& tape, const std::array<float, 2U>& x) const {
    const bt::View in = bt::record_view(tape, 2U, [&](bt::Index k) { return tape.input(x[k]); });
    const bt::View h = hidden.forward<nn::Activation::kTanh>(tape, in);
    return output.forward<nn::Activation::kIdentity>(tape, h);
  }

  // One sample's loss: the mean squared error of its output.
  bt::Value<float> loss(bt::Tape<float>& tape, const std::array<float, 2U>& x, float target) const {
    return nn::mse(tape, forward(tape, x), target);
  }
};

// XOR: the four inputs and their targets.
constexpr std::array<std::array<float, 2U>, 4U> kX = {{{0.0F, 0.0F}, {0.0F, 1.0F}, {1.0F, 0.0F}, {1.0F, 1.0F}}};
constexpr std::array<float, 4U> kY = {0.0F, 1.0F, 1.0F, 0.0F};

// Writes a label and a number on the console (6 significant digits).
void print(const char* label, float value) {
  std::array<char, 32U> text{};
  bt::port::write(label);
  bt::port::write(text.data(), bt::format_double(value, text.data(), text.size(), 6));
}

}  // namespace

int main() {
  print("memory plan: ", static_cast<float>(kPlan.bytes));
  bt::port::write(" bytes of tape and optimizer state\n");
  Memory& memory = training_memory();
  nn::Rng rng(1U);
  Model model;
  if (!model.create(memory.tape, rng)) {
    bt::port::write("the model does not fit its tape\n");
    return 1;
  }
  nn::OptimizerOptions<float> sgd;
  sgd.kind = nn::OptimizerKind::kSgd;
  sgd.lr = 0.2F;
  nn::Optimizer<float> opt = memory.optimizer(sgd);

  float loss = 0.0F;
  for (int epoch = 1; epoch <= 400; ++epoch) {
    // The four cases as one batch: forward, backward and rewind per case,
    // then one SGD step on the mean gradient.
    loss = nn::serial_batch<nn::OptimizerKind::kSgd>(
        memory.tape, model.params, 4U,
        [&](bt::Tape<float>& tape, std::size_t i) { return model.loss(tape, kX[i], kY[i]); }, opt);
    if (std::isnan(loss)) {
      bt::port::write("training failed: ");
      bt::port::write(bt::status_name(memory.tape.status()));
      bt::port::write("\n");
      return 1;
    }
    if ((epoch % 50) == 0) {
      print("epoch ", static_cast<float>(epoch));
      print(" loss ", loss);
      bt::port::write("\n");
    }
  }

  // What the trained model says, one forward pass per case.
  for (std::size_t i = 0U; i < 4U; ++i) {
    const bt::Mark before = memory.tape.mark();
    const bt::View y = model.forward(memory.tape, kX[i]);
    print("xor ", kX[i][0]);
    print(" ", kX[i][1]);
    print(" -> ", memory.tape.value(y.first));
    bt::port::write("\n");
    static_cast<void>(memory.tape.rewind(before));
  }
  return (loss < 0.01F) ? 0 : 1;
}
