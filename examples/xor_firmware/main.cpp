// SPDX-License-Identifier: Apache-2.0
// XOR trained on a Cortex-M4 in FP32. Everything lives in static storage
// sized at compile time by the model's memory plan (../common/xor_model.hpp); the
// linker script holds the whole firmware to XOR_RAM_BUDGET bytes of RAM.
// Output goes through the port's console (semihosting under QEMU) and
// numbers through burtorch::format_double (given a float: no double
// arithmetic, no soft-double code): no printf, no heap.
//
// Prints "epoch n loss x" every 100 epochs and "final loss x"; returns 0
// (the exit code QEMU reports) if training ran without a tape error.
#include <burtorch/port/port.hpp>

#include <array>
#include <cmath>
#include <cstddef>

#include "xor_model.hpp"

namespace bt = burtorch;
namespace nn = burtorch::nn;
using xor_example::XorNet;

namespace {

using Real = float;
constexpr nn::MemoryPlan kPlan = XorNet<Real>::plan();
#ifdef XOR_RAM_BUDGET
static_assert(kPlan.bytes < XOR_RAM_BUDGET / 4U, "the model takes at most a quarter of the RAM budget");
#endif

// The tape and the optimizer state: one object, kPlan.bytes in size, for
// the whole run: a static inside the one function that hands it out (not a
// global variable: nothing else can reach it).
using Memory = nn::TrainingMemory<Real, kPlan>;
static_assert(sizeof(Memory) == kPlan.bytes, "the plan counts every byte");
Memory& training_memory() {
  static Memory g_memory;
  return g_memory;
}

void print(const char* label, float value) {
  std::array<char, 32U> text{};
  const std::size_t n = bt::format_double(value, text.data(), text.size(), 6);
  bt::port::write(label);
  bt::port::write(text.data(), n);
}

}  // namespace

int main() {
  print("xor on the device: model ", static_cast<float>(kPlan.bytes));
  bt::port::write(" bytes\n");
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
  config.lr = 0.05F;
  nn::Optimizer<Real> optimizer = memory.optimizer(config);  // over the memory's state

  std::size_t peak_nodes = 0U;
  std::size_t peak_slots = 0U;
  Real loss = 0.0F;
  for (int epoch = 1; epoch <= 1000; ++epoch) {
    loss = xor_example::train_epoch(tape, net, optimizer, &peak_nodes, &peak_slots);
    if (std::isnan(loss)) {
      bt::port::write("training failed: the tape failed or the optimizer step was refused\n");
      return 1;
    }
    if ((epoch % 100) == 0) {
      print("epoch ", static_cast<float>(epoch));
      print(" loss ", loss);
      bt::port::write("\n");
    }
  }
  print("final loss ", loss);
  bt::port::write("\n");
  return (tape.status() == bt::Status::kOk) ? 0 : 1;
}
