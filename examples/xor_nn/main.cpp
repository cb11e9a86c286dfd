// SPDX-License-Identifier: Apache-2.0
// XOR with nn layers on the host: the tape and the optimizer state are
// sized by the model's constexpr memory plan (../common/xor_model.hpp), declared
// static, and checked against what one sample really records.
//
// Prints the plan, "epoch n loss x" every 100 epochs, the four predictions
// and "final loss x"; exits non-zero if the tape or the plan failed.
#include <burtorch/port/port.hpp>

#include <array>
#include <cmath>
#include <cstddef>

#include "xor_model.hpp"

namespace bt = burtorch;
namespace nn = burtorch::nn;
using xor_example::XorNet;

namespace {

using Real = double;
constexpr nn::MemoryPlan kPlan = XorNet<Real>::plan();
static_assert(kPlan.bytes < 4096U, "the XOR model fits in 4 KB");

// The tape and the optimizer state: one object, kPlan.bytes in size, for
// the whole run: a static inside the one function that hands it out (not a
// global variable: nothing else can reach it).
using Memory = nn::TrainingMemory<Real, kPlan>;
static_assert(sizeof(Memory) == kPlan.bytes, "the plan counts every byte");
Memory& training_memory() {
  static Memory g_memory;
  return g_memory;
}

void print(const char* label, double value) {
  std::array<char, 32U> text{};
  const std::size_t n = bt::format_double(value, text.data(), text.size(), 6);
  bt::port::write(label);
  bt::port::write(text.data(), n);
}

}  // namespace

int main() {
  print("plan: parameters ", static_cast<double>(kPlan.parameters));
  print(" nodes ", static_cast<double>(kPlan.nodes));
  print(" slots ", static_cast<double>(kPlan.slots));
  print(" bytes ", static_cast<double>(kPlan.bytes));
  bt::port::write("\n");

  Memory& memory = training_memory();
  bt::Tape<Real>& tape = memory.tape;
  nn::Rng rng(7U);
  XorNet<Real> net;
  if (!net.create(tape, rng)) {
    bt::port::write("could not create the model\n");
    return 1;
  }
  nn::OptimizerOptions<Real> config;
  config.kind = xor_example::kOptimizer;
  config.lr = 0.05;
  nn::Optimizer<Real> optimizer = memory.optimizer(config);  // over the memory's state

  std::size_t peak_nodes = 0U;
  std::size_t peak_slots = 0U;
  Real loss = 0.0;
  for (int epoch = 1; epoch <= 1000; ++epoch) {
    loss = xor_example::train_epoch(tape, net, optimizer, &peak_nodes, &peak_slots);
    if (std::isnan(static_cast<double>(loss))) {
      bt::port::write("training failed: the tape failed or the optimizer step was refused\n");
      return 1;
    }
    if ((epoch % 100) == 0) {
      print("epoch ", static_cast<double>(epoch));
      print(" loss ", loss);
      bt::port::write("\n");
    }
  }
  // What one sample recorded must be what the plan says.
  print("used: nodes ", static_cast<double>(peak_nodes));
  print(" slots ", static_cast<double>(peak_slots));
  bt::port::write("\n");
  const bt::Mark start = tape.mark();
  for (const auto& c : xor_example::kCases<Real>) {
    static_cast<void>(net.loss(tape, c.a, c.b, c.target));
    // The prediction is the sigmoid node just before the loss's two nodes.
    print("xor ", c.a);
    print(" ", c.b);
    print(" -> ", tape.value(static_cast<bt::Index>(tape.size() - 3U)));
    bt::port::write("\n");
    static_cast<void>(tape.rewind(start));
  }
  print("final loss ", loss);
  bt::port::write("\n");
  const bool plan_exact = (peak_nodes == kPlan.nodes) && (peak_slots == kPlan.slots);
  if (!plan_exact) {
    bt::port::write("the memory plan does not match what a sample records\n");
  }
  return ((tape.status() == bt::Status::kOk) && plan_exact) ? 0 : 1;
}
