// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the on-device trainers: text output through the port
// layer (no stdio on the boards) and emulated-time measurement.
#ifndef BURTORCH_TARGETS_FIRMWARE_HPP
#define BURTORCH_TARGETS_FIRMWARE_HPP

#include <burtorch/nn/gpt.hpp>
#include <burtorch/nn/mlp.hpp>
#include <burtorch/nn/optim.hpp>
#include <burtorch/nn/plan.hpp>
#include <burtorch/nn/train.hpp>
#include <burtorch/port/port.hpp>
#include <burtorch/tools/stream.hpp>

#include <cstddef>
#include <cstdint>

namespace firmware {

inline void print(const char* text) { burtorch::port::write(text); }

// A float, without converting it to double (format_double's float form):
// the firmware are FP32 and link no soft-double code.
inline void print_number(float v) {
  char buffer[32];
  const std::size_t n = burtorch::format_double(v, buffer, sizeof(buffer));
  burtorch::port::write(buffer, n);
}

inline void print_unsigned(std::uint64_t v) {
  char buffer[24];
  const std::size_t n = burtorch::format_unsigned(v, buffer, sizeof(buffer));
  burtorch::port::write(buffer, n);
}

inline float seconds() {
  return static_cast<float>(burtorch::port::ticks()) / static_cast<float>(burtorch::port::ticks_per_second());
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

// "  lanes L: lane batches, L <samples> per sweep"
inline void print_lanes(std::size_t lanes, const char* samples) {
  print("  lanes ");
  print_unsigned(lanes);
  print(": lane batches, ");
  print_unsigned(lanes);
  print(" ");
  print(samples);
  print(" per sweep");
}

// "  lane plan: L lanes, parameter tape P bytes, lane tape B bytes (N nodes
// per sweep; K slots)"
inline void print_lane_plan(const burtorch::nn::LanePlan& plan) {
  print("  lane plan: ");
  print_unsigned(plan.lanes);
  print(" lanes, parameter tape ");
  print_unsigned(plan.params.tape_bytes);
  print(" bytes, lane tape ");
  print_unsigned(plan.lane_tape_bytes);
  print(" bytes (");
  print_unsigned(plan.sample_nodes);
  print(" nodes per sweep; ");
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
inline burtorch::nn::OptimizerOptions<float> sgd(float lr) {
  burtorch::nn::OptimizerOptions<float> oc;
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

// ticks / steps in float, exact to float's precision however large the
// count (the whole part by integer division, then the remainder).
inline float per_step(std::uint64_t ticks, std::uint64_t steps) {
  return static_cast<float>(ticks / steps) + (static_cast<float>(ticks % steps) / static_cast<float>(steps));
}

// "<indent>step N loss X", the trainers' progress line.
inline void print_step(const char* indent, std::uint64_t step, float loss) {
  print(indent);
  print("step ");
  print_unsigned(step);
  print(" loss ");
  print_number(loss);
  print("\n");
}

// "steps per second (emulated core clock): R" for `steps` steps in
// `elapsed` seconds of the board's clock.
inline void print_rate(int steps, float elapsed) {
  print("steps per second (emulated core clock): ");
  print_number(static_cast<float>(steps) / elapsed);
  print("\n");
}

// "<what>: <the tape's status>", then exit code 1.
template <class Tape>
void fail(const char* what, const Tape& tape) {
  print(what);
  print(": ");
  print(burtorch::status_name(tape.status()));
  print("\n");
  burtorch::port::exit(1);
}

// The samples of one sweep of a lane batch (nn::lane_batch): lane l gets
// sample first + l of the batch (inputs xs, classes ys), the lanes from
// `active` on repeat sample `first`.
template <std::size_t N, class X, class Y>
void sweep_samples(const X* xs, const Y* ys, std::size_t first, std::size_t active, const float* (&lane_x)[N],
                   burtorch::Index (&lane_y)[N]) {
  for (std::size_t l = 0U; l < N; ++l) {
    const std::size_t i = first + ((l < active) ? l : 0U);
    lane_x[l] = xs[i];
    lane_y[l] = static_cast<burtorch::Index>(ys[i]);
  }
}

// True if record() records exactly `nodes` nodes and `slots` argument
// slots on the tape without an error (a memory plan's check); the tape is
// rewound after.
template <class Tape, class Record>
bool records_exactly(Tape& tape, std::size_t nodes, std::size_t slots, Record&& record) {
  const burtorch::Mark start = tape.mark();
  const std::size_t nodes0 = tape.size();
  const std::size_t slots0 = tape.usage().slots;
  record();
  const bool exact = (tape.status() == burtorch::Status::kOk) && ((tape.size() - nodes0) == nodes) &&
                     ((tape.usage().slots - slots0) == slots);
  static_cast<void>(tape.rewind(start));
  return exact;
}

// The class with the largest logit of z (the first of equals).
template <class Tape>
std::uint32_t argmax(const Tape& tape, burtorch::View z) {
  std::uint32_t best = 0U;
  for (std::uint32_t c = 1U; c < z.count; ++c) {
    best = (tape.value(z.first + c) > tape.value(z.first + best)) ? c : best;
  }
  return best;
}

}  // namespace firmware

#endif  // BURTORCH_TARGETS_FIRMWARE_HPP
