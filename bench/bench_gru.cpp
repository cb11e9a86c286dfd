// SPDX-License-Identifier: Apache-2.0
// A character-level GRU language model (nn::CharGru: Embedding(V -> 16),
// GRU(16 -> H), Linear(H -> V) at every position, the mean cross-entropy
// over the positions) in FP32: time per SGD step on B random windows of
// T + 1 characters of a text (names.txt: V = 27). Batch 1: one sequence at
// a time (forward, backward, rewind; then one update); larger batches by
// lane batches of L sequences per sweep (nn::lane_batch; --lanes L, 1: the
// per-sequence serial batch; default the build's vector width).
//
// Usage: bench_gru --hidden H --batch B [--seq T] [--steps N] [--warmup W]
//                  [--data FILE] [--lr X] [--seed S] [--lanes L]
// Prints READY once data and model are initialised, then one JSON line.
#include <burtorch/burtorch.hpp>
#include <burtorch/nn/nn.hpp>

#include <cstdint>
#include <cstdio>
#include <vector>

#include "bench_corpus.hpp"
#include "bench_train.hpp"

namespace bt = burtorch;
namespace nn = burtorch::nn;

int main(int argc, char** argv) {
  const bench::Flags flags(argc, argv);
  bench::StepOptions o;
  const char* const usage =
      "bench_gru --hidden H --batch B [--seq T] [--steps N] [--warmup W] [--data FILE] [--lr X] [--seed S] "
      "[--lanes L]";
  if (!bench::parse_step_options(flags, "bench_gru", usage, {"--hidden", "--seq"}, 0.1, o)) {
    return 2;
  }
  const double t_start = bench::now_seconds();
  const long hidden = flags.get_long("--hidden", 32);
  const long seq = flags.get_long("--seq", 16);
  if ((hidden < 1) || (hidden > 128) || (seq < 1) || (seq > static_cast<long>(nn::CharGru<float>::kMaxSteps))) {
    std::fprintf(stderr, "bench_gru: --hidden must be 1 to 128, --seq 1 to %u\n", nn::CharGru<float>::kMaxSteps);
    return 2;
  }
  bench::Corpus corpus;
  if (!corpus.open(o.data)) {
    std::fprintf(stderr, "bench_gru: cannot read %s\n", o.data);
    return 1;
  }
  nn::CharGruOptions config;
  config.vocab = static_cast<bt::Index>(corpus.vocab);
  config.hidden = static_cast<bt::Index>(hidden);
  config.steps = static_cast<bt::Index>(seq);
  const std::size_t span = static_cast<std::size_t>(seq) + 1U;
  static nn::CharGru<float> model;
  bench::Sampler sampler(o.seed + 1U);
  const std::uint32_t windows = static_cast<std::uint32_t>(corpus.size - span);
  std::vector<std::uint8_t> window(static_cast<std::size_t>(o.batch) * span);
  bench::StepRun run;
  const int failed = bench::time_steps(
      "bench_gru", model, config, o, t_start,
      [&](std::size_t i) {
        if (!corpus.read(sampler.below(windows), span, &window[i * span])) {
          std::fprintf(stderr, "bench_gru: read failed\n");
          return false;
        }
        return true;
      },
      [&](bt::Tape<float>& tp, std::size_t i) {
        const std::uint8_t* at = &window[i * span];
        return model.loss(tp, at, at + 1);
      },
      // Lane l: sequence first + l; the lanes past the batch's end repeat its first sequence.
      [&](auto& lanes, const bt::LaneParams<float>& p, std::size_t first, std::size_t active) {
        const std::uint8_t* in[bench::kMaxLanes];
        const std::uint8_t* out[bench::kMaxLanes];
        for (std::size_t l = 0U; l < bench::kMaxLanes; ++l) {
          in[l] = &window[(first + ((l < active) ? l : 0U)) * span];
          out[l] = in[l] + 1;
        }
        return model.loss(lanes, p, in, out);
      },
      run);
  if (failed != 0) {
    return failed;
  }
  std::printf("{\"bench\":\"gru\",\"impl\":\"burtorch\",\"hidden\":%ld,\"seq\":%ld,\"batch\":%ld,\"lanes\":%ld,"
              "\"params\":%zu,\"vocab\":%u,\"steps\":%ld,",
              hidden, seq, o.batch, o.lanes, run.params, corpus.vocab, o.steps);
  bench::print_step_fields(run);
  std::printf(",\"sample_nodes\":%zu,\"first_loss\":%.5f,\"last_loss\":%.5f", run.plan.sample_nodes, run.first_loss,
              run.last_loss);
  bench::end_json(run.times_ms);
  return 0;
}
