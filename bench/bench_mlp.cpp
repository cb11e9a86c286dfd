// SPDX-License-Identifier: Apache-2.0
// The paper's makemore MLP (Tables 5/6) in FP32: time per SGD step with
// serial batches (forward, backward, rewind per sample; then one update).
// Vocabulary 27, context 16, embedding 64, tanh hidden layer of width e,
// d = 1,755 + 1,052 e parameters. Data: a word list (names.txt) encoded as
// in makemore; without --data a small generated list is used (smoke tests).
//
// Usage: bench_mlp --hidden E --batch B [--steps N] [--warmup W]
//                  [--data FILE] [--lr X] [--seed S] [--lanes L]
// --lanes L: samples per sweep (nn::lane_batch; 1: the per-sample serial
// batch); by default the target's vector width (burtorch::kHardwareLanes)
// when B > 1, else 1.
// Prints READY once data and model are initialised, then one JSON line.
#include <burtorch/burtorch.hpp>
#include <burtorch/nn/nn.hpp>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "bench_train.hpp"

namespace bt = burtorch;
namespace nn = burtorch::nn;

namespace {

constexpr std::size_t kContext = 16U;
constexpr std::uint32_t kVocab = 27U;  // boundary and a..z

// The words as one token stream ".emma.olivia.ava." (0 = boundary, 1..26 =
// a..z). Every position p >= 1 is one makemore sample: target stream[p],
// context the (up to) 16 tokens before it back to the word's start, zero
// padded, exactly as makemore's (X, Y) rows. One byte per sample instead of
// 17: the data set does not dominate the program's memory.
struct Data {
  std::vector<std::uint8_t> stream;
  std::uint32_t samples() const { return static_cast<std::uint32_t>(stream.size() - 1U); }
  // Sample k (0-based): writes its context, returns its target.
  std::uint8_t sample(std::uint32_t k, std::uint8_t* context) const {
    const std::size_t p = static_cast<std::size_t>(k) + 1U;
    std::size_t start = p;  // first token of the word that p belongs to
    while ((start > 0U) && (stream[start - 1U] != 0U)) {
      --start;
    }
    for (std::size_t i = 0U; i < kContext; ++i) {
      const std::size_t back = kContext - i;  // context[i] is stream[p - back]
      context[i] = ((p >= back) && ((p - back) >= start)) ? stream[p - back] : 0U;
    }
    return stream[p];
  }
};

void add_word(const std::string& w, Data& d) {
  for (char c : w) {
    d.stream.push_back(static_cast<std::uint8_t>(c - 'a' + 1));
  }
  d.stream.push_back(0U);
}

bool load(const char* path, Data& d) {
  d.stream.push_back(0U);
  if (path == nullptr) {
    // A fixed pseudo-random word list (smoke runs without ../shared/data).
    bench::Sampler s(7U);
    for (int i = 0; i < 2000; ++i) {
      std::string w;
      const std::uint32_t len = 3U + s.below(6U);
      for (std::uint32_t k = 0U; k < len; ++k) {
        w.push_back(static_cast<char>('a' + s.below(26U)));
      }
      add_word(w, d);
    }
    return true;
  }
  std::string text;
  if (!bench::read_file(path, text)) {
    return false;
  }
  std::size_t at = 0U;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    end = (end == std::string::npos) ? text.size() : end;
    std::string w;
    for (std::size_t i = at; i < end; ++i) {
      const char c = text[i];
      if ((c >= 'a') && (c <= 'z')) {
        w.push_back(c);
      } else if ((c >= 'A') && (c <= 'Z')) {
        w.push_back(static_cast<char>(c - 'A' + 'a'));
      }
    }
    if (!w.empty()) {
      add_word(w, d);
    }
    at = end + 1U;
  }
  std::string().swap(text);
  d.stream.shrink_to_fit();
  return d.stream.size() > 1U;
}

}  // namespace

int main(int argc, char** argv) {
  const bench::Flags flags(argc, argv);
  bench::StepOptions o;
  if (!bench::parse_step_options(flags, "bench_mlp",
                                 "bench_mlp --hidden E --batch B [--steps N] [--warmup W] [--data FILE] [--lr X] "
                                 "[--contexts data|random]",
                                 {"--hidden", "--contexts"}, 0.1, o)) {
    return 2;
  }
  // --contexts random: every context token drawn at random (the targets
  // still from the data), so no context position is shared by the samples
  // of a sweep: the lane batches' cost without shared rows.
  const std::string contexts_from = flags.get("--contexts", "data");
  if ((contexts_from != "data") && (contexts_from != "random")) {
    std::fprintf(stderr, "bench_mlp: --contexts must be data or random\n");
    return 2;
  }
  const bool random_contexts = (contexts_from == "random");
  const double t_start = bench::now_seconds();
  const long hidden = flags.get_long("--hidden", 64);
  if (hidden < 1) {
    std::fprintf(stderr, "bench_mlp: bad sizes\n");
    return 2;
  }

  Data data;
  if (!load(o.data, data)) {
    std::fprintf(stderr, "bench_mlp: cannot read %s\n", (o.data != nullptr) ? o.data : "(generated)");
    return 1;
  }
  const std::uint32_t n_samples = data.samples();

  nn::MlpOptions config;
  config.hidden = static_cast<bt::Index>(hidden);
  static nn::MakemoreMlp<float> model;
  bench::Sampler sampler(o.seed + 1U);
  std::vector<std::uint8_t> contexts(static_cast<std::size_t>(o.batch) * kContext);
  std::vector<std::uint8_t> targets(static_cast<std::size_t>(o.batch));
  bench::StepRun run;
  std::uint64_t shared_positions = 0U;  // lane batches: (sweep, position) pairs every lane shares
  std::uint64_t positions = 0U;
  const int failed = bench::time_steps(
      "bench_mlp", model, config, o, t_start,
      [&](std::size_t i) {
        targets[i] = data.sample(sampler.below(n_samples), &contexts[i * kContext]);
        if (random_contexts) {
          for (std::size_t q = 0U; q < kContext; ++q) {
            contexts[(i * kContext) + q] = static_cast<std::uint8_t>(sampler.below(kVocab));
          }
        }
        return true;
      },
      [&](bt::Tape<float>& tp, std::size_t i) { return model.loss(tp, &contexts[i * kContext], targets[i]); },
      [&](auto& lanes, const bt::LaneParams<float>& p, std::size_t first, std::size_t active) {
        // Lane l: sample first + l; the lanes past the batch's end repeat its first sample.
        const std::uint8_t* ctx[bench::kMaxLanes];
        std::uint8_t tgt[bench::kMaxLanes];
        for (std::size_t l = 0U; l < bench::kMaxLanes; ++l) {
          const std::size_t i = first + ((l < active) ? l : 0U);
          ctx[l] = &contexts[i * kContext];
          tgt[l] = targets[i];
        }
        // Context positions whose token every lane of the sweep shares.
        for (std::size_t q = 0U; q < kContext; ++q) {
          bool same = true;
          for (std::size_t l = 1U; l < static_cast<std::size_t>(o.lanes); ++l) {
            same = same && (ctx[l][q] == ctx[0][q]);
          }
          shared_positions += same ? 1U : 0U;
          positions += 1U;
        }
        return model.loss(lanes, p, ctx, tgt);
      },
      run);
  if (failed != 0) {
    return failed;
  }
  std::printf("{\"bench\":\"mlp\",\"impl\":\"burtorch\",\"e\":%ld,\"batch\":%ld,\"lanes\":%ld,\"params\":%zu,\"steps\":%ld,",
              hidden, o.batch, o.lanes, run.params, o.steps);
  bench::print_step_fields(run);
  std::printf(",\"first_loss\":%.5f,\"last_loss\":%.5f,\"data_samples\":%u", run.first_loss, run.last_loss,
              n_samples);
  std::printf(",\"contexts\":\"%s\",\"shared_positions\":%.4f", contexts_from.c_str(),
              (positions != 0U) ? (static_cast<double>(shared_positions) / static_cast<double>(positions)) : 0.0);
  bench::end_json(run.times_ms);
  return 0;
}
