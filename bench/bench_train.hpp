// SPDX-License-Identifier: Apache-2.0
// The skeleton of the SGD-step benchmarks (bench_mlp, bench_gpt), FP32:
// their common flags, the model on a tape of exactly its memory plan, the
// timed steps and the timing fields of their JSON line. A driver keeps only
// what is its model's: the data, how one sample is drawn, its loss, and the
// other fields of its JSON line.
#ifndef BURTORCH_BENCH_TRAIN_HPP
#define BURTORCH_BENCH_TRAIN_HPP

#include <burtorch/burtorch.hpp>
#include <burtorch/lanes/ops.hpp>  // a tape of Lanes: the lane ops and the tape's templates for it
#include <burtorch/lanes/lanes.hpp>
#include <burtorch/nn/nn.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "bench_util.hpp"

namespace bench {

// --batch B --steps N --warmup W --data FILE --lr X --seed S --lanes L.
struct StepOptions {
  long batch = 1;
  long lanes = 1;  // samples per sweep: 1 is the per-sample serial batch
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
  for (const char* f : {"--batch", "--steps", "--warmup", "--data", "--lr", "--seed", "--lanes"}) {
    known.emplace_back(f);
  }
  if (!flags.check(known, {}, usage)) {
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
  // Lane batches by default whenever the batch has more than one sample.
  o.lanes = flags.get_long("--lanes", (o.batch > 1) ? static_cast<long>(burtorch::kHardwareLanes) : 1L);
  if ((o.lanes != 1) && (o.lanes != 2) && (o.lanes != 4) && (o.lanes != 8) && (o.lanes != 16) && (o.lanes != 32)) {
    std::fprintf(stderr, "%s: --lanes must be 1, 2, 4, 8, 16 or 32\n", program);
    return false;
  }
  return true;
}

// The largest --lanes.
constexpr std::size_t kMaxLanes = 32U;


struct StepRun {
  burtorch::nn::MemoryPlan plan;
  std::size_t params = 0U;
  double init_ms = 0.0;          // from t_start to READY
  double first_loss = 0.0;       // of step 0 (a warm-up step if there are any)
  double last_loss = 0.0;
  std::vector<double> times_ms;  // each measured step
  Stats stats;                   // of times_ms
};

// The timed loop: o.warmup + o.steps calls of step(), which draws a batch,
// computes its loss and gradients and takes one optimizer step (false after
// a message on stderr ends the run); the last o.steps are timed.
template <class Step>
int run_steps(const char* program, const StepOptions& o, Step step, StepRun& run) {
  for (long s = 0; s < o.warmup + o.steps; ++s) {
    float l = 0.0F;
    const double t0 = now_seconds();
    if (!step(s, l)) {
      return 1;
    }
    const double t1 = now_seconds();
    if (!std::isfinite(l)) {
      std::fprintf(stderr, "%s: loss is not finite at step %ld\n", program, s);
      return 1;
    }
    if (s == 0) {
      run.first_loss = static_cast<double>(l);
    }
    run.last_loss = static_cast<double>(l);
    if (s >= o.warmup) {
      run.times_ms.push_back((t1 - t0) * 1e3);
    }
  }
  run.stats = stats(run.times_ms);
  return 0;
}

// One buffer of `bytes`, 32-byte aligned, owned by `storage`.
inline void* aligned_buffer(std::unique_ptr<std::uint64_t[]>& storage, std::size_t bytes) {
  storage.reset(new std::uint64_t[(bytes + 63U) / 8U]);
  return reinterpret_cast<void*>((reinterpret_cast<std::uintptr_t>(storage.get()) + 31U) & ~std::uintptr_t{31U});
}

// Creates `model` on `tape` (its parameters first), prints READY, then runs
// o.warmup + o.steps steps and times the last o.steps. Timed, per step:
// draw(i) for each sample i of the batch (picks it and reads its tokens;
// false after a message on stderr ends the run), then batch_step(opt, step,
// l): the batch's loss l, its gradients and the SGD step with 1/B folded in
// (false after a message on stderr ends the run). Returns 0, or 1 after a
// message on stderr.
template <class Model, class Config, class Draw, class BatchStep>
int create_and_time(const char* program, Model& model, const Config& config, burtorch::Tape<float>& tape,
                    const StepOptions& o, double t_start, Draw& draw, BatchStep batch_step, StepRun& run) {
  namespace bt = burtorch;
  namespace nn = burtorch::nn;
  nn::Rng rng(o.seed);
  if (!model.create(tape, config, rng)) {
    std::fprintf(stderr, "%s: cannot create the model: %s\n", program, bt::status_name(tape.status()));
    return 1;
  }
  run.params = model.params().count;
  nn::OptimizerOptions<float> oc;
  oc.kind = nn::OptimizerKind::kSgd;
  oc.lr = o.lr;
  nn::Optimizer<float> opt(oc);  // SGD: no state
  run.init_ms = (now_seconds() - t_start) * 1e3;
  ready();
  const std::size_t batch = static_cast<std::size_t>(o.batch);
  return run_steps(program, o, [&](long step, float& l) {
    for (std::size_t i = 0U; i < batch; ++i) {
      if (!draw(i)) {
        return false;
      }
    }
    if (!batch_step(opt, step, l)) {
      return false;
    }
    const bt::Status stepped = tape.status();
    if (stepped != bt::Status::kOk) {
      std::fprintf(stderr, "%s: the optimizer step failed at step %ld (%s)\n", program, step, bt::status_name(stepped));
      return false;
    }
    return true;
  }, run);
}

// The model on a tape of exactly its memory plan for SGD (one buffer,
// 32-byte aligned), each step nn::serial_batch of loss(tape, i) (forward,
// backward and rewind per sample) with the optimizer step (1/B folded in);
// see create_and_time.
template <class Model, class Config, class Draw, class Loss>
int time_sgd_steps(const char* program, Model& model, const Config& config, const StepOptions& o, double t_start,
                   Draw draw, Loss loss, StepRun& run) {
  namespace bt = burtorch;
  namespace nn = burtorch::nn;
  run.plan = Model::plan(config, nn::OptimizerKind::kSgd);
  std::unique_ptr<std::uint64_t[]> storage;
  void* buffer = aligned_buffer(storage, run.plan.tape_bytes);
  bt::Tape<float> tape(buffer, run.plan.tape_bytes, run.plan.nodes, run.plan.slots, run.plan.parameters);
  const std::size_t batch = static_cast<std::size_t>(o.batch);
  return create_and_time(program, model, config, tape, o, t_start, draw,
                         [&](nn::Optimizer<float>& opt, long /*step*/, float& l) {
                           l = nn::serial_batch(tape, model.params(), batch, loss, opt);
                           return true;
                         },
                         run);
}

// The same with lane batches of N samples per sweep (nn::lane_batch): the
// parameters on a tape of their own, N samples' graph on a tape of lanes
// (both sized by the model's lane plan). lane_loss(lanes, p, first, active)
// records the losses of samples first .. first + active - 1. A lane_loss
// that also takes the mask and the losses' address (lanes, p, first,
// active, mask, &losses) is a sweep that runs its own backward
// (nn::lane_batch_sweeps): gradient checkpointing, the lane tape sized by
// the model's checkpoint_plan.
template <std::size_t N, class Model, class Config, class Draw, class LaneLoss>
int time_lane_steps(const char* program, Model& model, const Config& config, const StepOptions& o, double t_start,
                    Draw draw, LaneLoss lane_loss, StepRun& run) {
  namespace bt = burtorch;
  namespace nn = burtorch::nn;
  using U = bt::Lanes<float, N>;
  constexpr bool kSweeps = std::is_invocable_v<LaneLoss&, bt::Tape<U>&, const bt::LaneParams<float>&, std::size_t,
                                               std::size_t, const U&, U*>;
  nn::LanePlan plan;
  if constexpr (kSweeps) {
    plan = Model::template checkpoint_plan<N>(config, nn::OptimizerKind::kSgd);
  } else {
    plan = Model::template lane_plan<N>(config, nn::OptimizerKind::kSgd);
  }
  run.plan = plan.params;
  run.plan.sample_nodes = plan.sample_nodes;
  run.plan.slots = plan.slots;
  run.plan.tape_bytes = plan.params.tape_bytes + plan.lane_tape_bytes;
  run.plan.bytes = plan.bytes;
  std::unique_ptr<std::uint64_t[]> params_storage;
  std::unique_ptr<std::uint64_t[]> lane_storage;
  void* params_buffer = aligned_buffer(params_storage, plan.params.tape_bytes);
  void* lane_buffer = aligned_buffer(lane_storage, plan.lane_tape_bytes);
  bt::Tape<float> tape(params_buffer, plan.params.tape_bytes, plan.params.nodes, 0U, plan.params.parameters);
  bt::Tape<U> lanes(lane_buffer, plan.lane_tape_bytes, plan.sample_nodes, plan.slots);
  const std::size_t batch = static_cast<std::size_t>(o.batch);
  return create_and_time(program, model, config, tape, o, t_start, draw,
                         [&](nn::Optimizer<float>& opt, long step, float& l) {
                           if constexpr (kSweeps) {
                             l = nn::lane_batch_sweeps(tape, model.params(), lanes, batch, lane_loss, opt);
                           } else {
                             l = nn::lane_batch(tape, model.params(), lanes, batch, lane_loss, opt);
                           }
                           if (!std::isfinite(l)) {
                             std::fprintf(stderr, "%s: lane batch failed at step %ld (%s / %s)\n", program, step,
                                          bt::status_name(tape.status()), bt::status_name(lanes.status()));
                             return false;
                           }
                           return true;
                         },
                         run);
}

// time_sgd_steps for o.lanes == 1, else time_lane_steps with o.lanes lanes.
template <class Model, class Config, class Draw, class Loss, class LaneLoss>
int time_steps(const char* program, Model& model, const Config& config, const StepOptions& o, double t_start, Draw draw,
               Loss loss, LaneLoss lane_loss, StepRun& run) {
  switch (o.lanes) {
    case 2:
      return time_lane_steps<2>(program, model, config, o, t_start, draw, lane_loss, run);
    case 4:
      return time_lane_steps<4>(program, model, config, o, t_start, draw, lane_loss, run);
    case 8:
      return time_lane_steps<8>(program, model, config, o, t_start, draw, lane_loss, run);
    case 16:
      return time_lane_steps<16>(program, model, config, o, t_start, draw, lane_loss, run);
    case 32:
      return time_lane_steps<32>(program, model, config, o, t_start, draw, lane_loss, run);
    default:
      return time_sgd_steps(program, model, config, o, t_start, draw, loss, run);
  }
}

// The timing fields of a step benchmark's JSON line, between the driver's
// own: "median_ms":..,"p10_ms":..,"p90_ms":..,"init_ms":..,"tape_bytes":..
inline void print_step_fields(const StepRun& run) {
  std::printf("\"median_ms\":%.6f,\"p10_ms\":%.6f,\"p90_ms\":%.6f,\"init_ms\":%.3f,\"tape_bytes\":%zu",
              run.stats.median, run.stats.p10, run.stats.p90, run.init_ms, run.plan.tape_bytes);
}

}  // namespace bench

#endif  // BURTORCH_BENCH_TRAIN_HPP
