// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the on-device trainers: text output through the port
// layer (no stdio on the boards) and emulated-time measurement.
#ifndef BURTORCH_TARGETS_FIRMWARE_HPP
#define BURTORCH_TARGETS_FIRMWARE_HPP

#include <burtorch/nn/models.hpp>
#include <burtorch/port/port.hpp>
#include <burtorch/stream.hpp>

#include <cstddef>
#include <cstdint>

namespace firmware {

inline void print(const char* text) { burtorch::port::write(text); }

inline void print_number(double v) {
  char buffer[32];
  const std::size_t n = burtorch::format_double(v, buffer, sizeof(buffer));
  burtorch::port::write(buffer, n);
}

inline void print_unsigned(std::uint64_t v) {
  char buffer[24];
  const std::size_t n = burtorch::format_unsigned(v, buffer, sizeof(buffer));
  burtorch::port::write(buffer, n);
}

inline double seconds() {
  return static_cast<double>(burtorch::port::ticks()) / static_cast<double>(burtorch::port::ticks_per_second());
}

// "  memory plan: tape B bytes (N nodes: S per sample; K slots)"
inline void print_plan(const burtorch::nn::MemoryPlan& plan) {
  print("  memory plan: tape ");
  print_unsigned(plan.tape_bytes);
  print(" bytes (");
  print_unsigned(plan.nodes);
  print(" nodes: ");
  print_unsigned(plan.sample_nodes);
  print(" per sample; ");
  print_unsigned(plan.slots);
  print(" slots)\n");
}

// The first lines a trainer prints: "<title> (P parameters), FP32, SGD,
// batch B<unit>" and its memory plan.
inline void print_banner(const char* title, const burtorch::nn::MemoryPlan& plan, std::uint64_t batch,
                         const char* unit) {
  print(title);
  print(" (");
  print_unsigned(plan.parameters);
  print(" parameters), FP32, SGD, batch ");
  print_unsigned(batch);
  print(unit);
  print("\n");
  print_plan(plan);
}

// Plain SGD at learning rate lr: no optimizer state to store.
inline burtorch::nn::OptimizerConfig<float> sgd(float lr) {
  burtorch::nn::OptimizerConfig<float> oc;
  oc.kind = burtorch::nn::OptimizerKind::kSgd;
  oc.lr = lr;
  return oc;
}

// Creates the model's parameters from `rng` (which then goes on to draw the
// training samples) or exits with code 1.
template <class Model, class Tape, class Config>
void create_model(Model& model, Tape& tape, const Config& config, burtorch::nn::Rng& rng) {
  if (!model.create(tape, config, rng)) {
    print("model creation failed\n");
    burtorch::port::exit(1);
  }
}

// One optimizer step over the model's parameters, or exits with code 1
// naming why it was refused.
template <class Optimizer, class Tape>
void step(Optimizer& opt, Tape& tape, burtorch::View params) {
  const burtorch::Status s = opt.step(tape, params);
  if (s != burtorch::Status::kOk) {
    print("optimizer step failed: ");
    print(burtorch::status_name(s));
    print("\n");
    burtorch::port::exit(1);
  }
}

}  // namespace firmware

#endif  // BURTORCH_TARGETS_FIRMWARE_HPP
