// SPDX-License-Identifier: Apache-2.0
// The skeleton of the SGD-step benchmarks (bench_mlp, bench_gpt), FP32:
// their common flags, the model on a tape of exactly its memory plan, the
// timed steps and the timing fields of their JSON line. A driver keeps only
// what is its model's: the data, how one sample is drawn, its loss, and the
// other fields of its JSON line.
#ifndef BURTORCH_BENCH_TRAIN_HPP
#define BURTORCH_BENCH_TRAIN_HPP

#include <burtorch/burtorch.hpp>
#include <burtorch/nn/nn.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bench_util.hpp"

namespace bench {

// --batch B --steps N --warmup W --data FILE --lr X --seed S.
struct StepOptions {
  long batch = 1;
  long steps = 20;
  long warmup = 2;
  float lr = 0.1F;
  std::uint64_t seed = 1U;
  const char* data = nullptr;  // null: generated data
};

// Reads the common flags; `extra` are the model's own (the driver reads
// them). Returns false after a message on stderr (an unknown flag: the
// `usage` line; a count out of range).
inline bool parse_step_options(const Flags& flags, const char* program, const char* usage,
                               const std::vector<std::string>& extra, double default_lr, StepOptions& o) {
  std::vector<std::string> known = extra;
  for (const char* f : {"--batch", "--steps", "--warmup", "--data", "--lr", "--seed"}) {
    known.emplace_back(f);
  }
  if (!flags.check(known, {})) {
    std::fprintf(stderr, "usage: %s\n", usage);
    return false;
  }
  o.batch = flags.get_long("--batch", 1);
  o.steps = flags.get_long("--steps", 20);
  o.warmup = flags.get_long("--warmup", 2);
  o.lr = static_cast<float>(flags.get_double("--lr", default_lr));
  o.seed = static_cast<std::uint64_t>(flags.get_long("--seed", 1));
  o.data = flags.get("--data", nullptr);
  if ((o.batch < 1) || (o.steps < 1) || (o.warmup < 0)) {
    std::fprintf(stderr, "%s: bad sizes\n", program);
    return false;
  }
  return true;
}

struct StepRun {
  burtorch::nn::MemoryPlan plan;
  std::size_t params = 0U;
  double init_ms = 0.0;          // from t_start to READY
  double first_loss = 0.0;       // of step 0 (a warm-up step if there are any)
  double last_loss = 0.0;
  std::vector<double> times_ms;  // each measured step
  Stats stats;                   // of times_ms
};

// Creates `model` on a tape of exactly its memory plan for SGD (one buffer,
// 32-byte aligned), prints READY, then runs o.warmup + o.steps SGD steps
// and times the last o.steps. Timed, per step: draw(i) for each sample i of
// the batch (picks it and reads its tokens; false after a message on
// stderr ends the run), nn::serial_batch of loss(tape, i) (forward,
// backward and rewind per sample), one optimizer step. Returns 0, or 1
// after a message on stderr.
template <class Model, class Config, class Draw, class Loss>
int time_sgd_steps(const char* program, Model& model, const Config& config, const StepOptions& o, double t_start,
                   Draw draw, Loss loss, StepRun& run) {
  namespace bt = burtorch;
  namespace nn = burtorch::nn;
  run.plan = Model::plan(config, nn::OptimizerKind::kSgd);
  std::unique_ptr<std::uint64_t[]> storage(new std::uint64_t[(run.plan.tape_bytes + 63U) / 8U]);
  void* buffer = reinterpret_cast<void*>((reinterpret_cast<std::uintptr_t>(storage.get()) + 31U) & ~std::uintptr_t{31U});
  bt::Tape<float> tape(buffer, run.plan.tape_bytes, run.plan.nodes, run.plan.slots, run.plan.parameters);
  nn::Rng rng(o.seed);
  if (!model.create(tape, config, rng)) {
    std::fprintf(stderr, "%s: cannot create the model: %s\n", program, bt::status_name(tape.status()));
    return 1;
  }
  const bt::View params = model.params();
  run.params = params.count;
  nn::OptimizerConfig<float> oc;
  oc.kind = nn::OptimizerKind::kSgd;
  oc.lr = o.lr;
  nn::Optimizer<float> opt(oc);  // SGD: no state
  run.init_ms = (now_seconds() - t_start) * 1e3;
  ready();

  const std::size_t batch = static_cast<std::size_t>(o.batch);
  for (long step = 0; step < o.warmup + o.steps; ++step) {
    const double t0 = now_seconds();
    for (std::size_t i = 0U; i < batch; ++i) {
      if (!draw(i)) {
        return 1;
      }
    }
    const float l = nn::serial_batch(tape, params, batch, loss);
    const bt::Status stepped = opt.step(tape, params);
    const double t1 = now_seconds();
    if (stepped != bt::Status::kOk) {
      std::fprintf(stderr, "%s: the optimizer step failed at step %ld (%s)\n", program, step,
                   bt::status_name(stepped));
      return 1;
    }
    if (!std::isfinite(l)) {
      std::fprintf(stderr, "%s: loss is not finite at step %ld (%s)\n", program, step,
                   bt::status_name(tape.status()));
      return 1;
    }
    if (step == 0) {
      run.first_loss = static_cast<double>(l);
    }
    run.last_loss = static_cast<double>(l);
    if (step >= o.warmup) {
      run.times_ms.push_back((t1 - t0) * 1e3);
    }
  }
  run.stats = stats(run.times_ms);
  return 0;
}

// The timing fields of a step benchmark's JSON line, between the driver's
// own: "median_ms":..,"p10_ms":..,"p90_ms":..,"init_ms":..,"tape_bytes":..
inline void print_step_fields(const StepRun& run) {
  std::printf("\"median_ms\":%.6f,\"p10_ms\":%.6f,\"p90_ms\":%.6f,\"init_ms\":%.3f,\"tape_bytes\":%zu",
              run.stats.median, run.stats.p10, run.stats.p90, run.init_ms, run.plan.tape_bytes);
}

}  // namespace bench

#endif  // BURTORCH_BENCH_TRAIN_HPP
