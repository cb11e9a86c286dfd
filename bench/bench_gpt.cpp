// SPDX-License-Identifier: Apache-2.0
// The paper's GPT-like model (Table 7) in FP32: time per SGD step with a
// serial batch of B sequences of 8 characters (6 layers, 6 heads, width 24,
// feed-forward 24-96-24 with ReLU, pre-LayerNorm; vocabulary = the text's
// characters, 65 for tinyshakespeare). The loss of a sequence is the mean
// cross-entropy over its 8 positions; a step's loss is the batch mean.
//
// Usage: bench_gpt --batch B [--steps N] [--warmup W] [--data FILE]
//                  [--lr X] [--seed S] [--lanes L] [--checkpoint on|off]
// --lanes L: sequences per sweep (nn::lane_batch; 1: the per-sample serial
// batch); by default the target's vector width when B > 1, else 1.
// --checkpoint: lane batches with gradient checkpointing (Gpt::lane_sweep:
// half a block's graph on the lane tape, each block's forward run twice; the
// default) or with every block's graph recorded (off).
// Prints READY once data and model are initialised, then one JSON line.
#include <burtorch/burtorch.hpp>
#include <burtorch/nn/nn.hpp>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "bench_corpus.hpp"
#include "bench_train.hpp"

namespace bt = burtorch;
namespace nn = burtorch::nn;

int main(int argc, char** argv) {
  const bench::Flags flags(argc, argv);
  bench::StepOptions o;
  const char* const usage =
      "bench_gpt --batch B [--steps N] [--warmup W] [--data FILE] [--lr X] [--seed S] [--lanes L] "
      "[--checkpoint on|off]";
  if (!bench::parse_step_options(flags, "bench_gpt", usage, {"--checkpoint"}, 0.01, o)) {
    return 2;
  }
  const std::string checkpoint_flag = flags.get("--checkpoint", "on");
  if ((checkpoint_flag != "on") && (checkpoint_flag != "off")) {
    std::fprintf(stderr, "bench_gpt: --checkpoint must be on or off\nusage: %s\n", usage);
    return 2;
  }
  const bool checkpoint = (checkpoint_flag == "on") && (o.lanes > 1);
  const double t_start = bench::now_seconds();

  // The text. A file is not loaded: one pass finds its alphabet, then each
  // sample's 9 characters are read with pread (one system call per sample,
  // about a microsecond next to a sample's ~400 us), so the data costs the
  // process no memory, as the per-sample design intends (the file stays in
  // the kernel's page cache). Without --data: 20,000 generated characters.
  bench::Corpus corpus;
  if (!corpus.open(o.data)) {
    std::fprintf(stderr, "bench_gpt: cannot read %s\n", o.data);
    return 1;
  }
  const unsigned vocab = corpus.vocab;

  nn::GptOptions config;
  config.vocab = static_cast<bt::Index>(vocab);
  const std::size_t block = config.block;
  static nn::Gpt<float> model;
  bench::Sampler sampler(o.seed + 1U);
  const std::uint32_t windows = static_cast<std::uint32_t>(corpus.size - block - 1U);
  std::vector<std::uint8_t> window(static_cast<std::size_t>(o.batch) * (block + 1U));
  bench::StepRun run;
  const auto draw = [&](std::size_t i) {
    if (!corpus.read(sampler.below(windows), block + 1U, &window[i * (block + 1U)])) {
      std::fprintf(stderr, "bench_gpt: read failed\n");
      return false;
    }
    return true;
  };
  const auto loss = [&](bt::Tape<float>& tp, std::size_t i) {
    const std::uint8_t* at = &window[i * (block + 1U)];
    return model.loss(tp, at, at + 1, config.block);
  };
  // Lane l: sequence first + l; the lanes past the batch's end repeat its first sequence.
  const auto lane_windows = [&](std::size_t first, std::size_t active, const std::uint8_t** in,
                                const std::uint8_t** out) {
    for (std::size_t l = 0U; l < bench::kMaxLanes; ++l) {
      const std::size_t i = first + ((l < active) ? l : 0U);
      in[l] = &window[i * (block + 1U)];
      out[l] = in[l] + 1;
    }
  };
  const int failed =
      checkpoint
          ? bench::time_steps("bench_gpt", model, config, o, t_start, draw, loss,
                              [&](auto& lanes, const bt::LaneParams<float>& p, std::size_t first,
                                  std::size_t active, const auto& mask, auto* losses) {
                                const std::uint8_t* in[bench::kMaxLanes];
                                const std::uint8_t* out[bench::kMaxLanes];
                                lane_windows(first, active, in, out);
                                return model.lane_sweep(lanes, p, in, out, config.block, mask, losses);
                              },
                              run)
          : bench::time_steps("bench_gpt", model, config, o, t_start, draw, loss,
                              [&](auto& lanes, const bt::LaneParams<float>& p, std::size_t first,
                                  std::size_t active) {
                                const std::uint8_t* in[bench::kMaxLanes];
                                const std::uint8_t* out[bench::kMaxLanes];
                                lane_windows(first, active, in, out);
                                return model.loss(lanes, p, in, out, config.block);
                              },
                              run);
  if (failed != 0) {
    return failed;
  }
  std::printf("{\"bench\":\"gpt\",\"impl\":\"burtorch\",\"batch\":%ld,\"lanes\":%ld,\"checkpoint\":%s,\"params\":%zu,"
              "\"vocab\":%u,\"steps\":%ld,",
              o.batch, o.lanes, checkpoint ? "true" : "false", run.params, vocab, o.steps);
  bench::print_step_fields(run);
  std::printf(",\"sample_nodes\":%zu,\"first_loss\":%.5f,\"last_loss\":%.5f", run.plan.sample_nodes, run.first_loss,
              run.last_loss);
  bench::end_json(run.times_ms);
  return 0;
}
