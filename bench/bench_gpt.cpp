// The paper's GPT-like model (Table 7) in FP32: time per SGD step with a
// serial batch of B sequences of 8 characters (6 layers, 6 heads, width 24,
// feed-forward 24-96-24 with ReLU, pre-LayerNorm; vocabulary = the text's
// characters, 65 for tinyshakespeare). The loss of a sequence is the mean
// cross-entropy over its 8 positions; a step's loss is the batch mean.
//
// Usage: bench_gpt --batch B [--steps N] [--warmup W] [--data FILE]
//                  [--lr X] [--seed S]
// Prints READY once data and model are initialised, then one JSON line.
#include <burtorch/burtorch.hpp>
#include <burtorch/nn/nn.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include "bench_util.hpp"

namespace bt = burtorch;
namespace nn = burtorch::nn;

namespace {

// Token windows of a text file (or of generated text), read on demand.
struct Corpus {
  int fd = -1;
  std::string generated;
  std::size_t size = 0U;
  std::uint8_t code[256] = {};
  unsigned vocab = 0U;

  Corpus() = default;
  Corpus(const Corpus&) = delete;
  Corpus& operator=(const Corpus&) = delete;
  ~Corpus() {
    if (fd >= 0) {
      ::close(fd);
    }
  }

  bool open(const char* path) {
    bool present[256] = {};
    if (path == nullptr) {
      bench::Sampler s(11U);
      for (int i = 0; i < 20000; ++i) {
        generated.push_back(static_cast<char>(' ' + s.below(65U)));
      }
      for (char c : generated) {
        present[static_cast<unsigned char>(c)] = true;
      }
      size = generated.size();
    } else {
      fd = ::open(path, O_RDONLY | O_CLOEXEC);
      if (fd < 0) {
        return false;
      }
      unsigned char chunk[65536];
      ssize_t got = 0;
      while ((got = ::read(fd, chunk, sizeof(chunk))) > 0) {
        for (ssize_t i = 0; i < got; ++i) {
          present[chunk[i]] = true;
        }
        size += static_cast<std::size_t>(got);
      }
    }
    // Vocabulary: the distinct bytes in ascending order (as the PyTorch side).
    for (unsigned c = 0U; c < 256U; ++c) {
      if (present[c]) {
        code[c] = static_cast<std::uint8_t>(vocab++);
      }
    }
    return size >= 64U;
  }

  // The tokens of characters [at, at + count).
  bool read(std::size_t at, std::size_t count, std::uint8_t* out) const {
    if (fd < 0) {
      for (std::size_t i = 0U; i < count; ++i) {
        out[i] = code[static_cast<unsigned char>(generated[at + i])];
      }
      return true;
    }
    if (::pread(fd, out, count, static_cast<off_t>(at)) != static_cast<ssize_t>(count)) {
      return false;
    }
    for (std::size_t i = 0U; i < count; ++i) {
      out[i] = code[out[i]];
    }
    return true;
  }
};

}  // namespace

int main(int argc, char** argv) {
  const bench::Flags flags(argc, argv);
  if (!flags.check({"--batch", "--steps", "--warmup", "--data", "--lr", "--seed"}, {})) {
    std::fprintf(stderr, "usage: bench_gpt --batch B [--steps N] [--warmup W] [--data FILE] [--lr X]\n");
    return 2;
  }
  const double t_start = bench::now_seconds();
  const long batch = flags.get_long("--batch", 1);
  const long steps = flags.get_long("--steps", 20);
  const long warmup = flags.get_long("--warmup", 2);
  const float lr = static_cast<float>(flags.get_double("--lr", 0.01));
  const std::uint64_t seed = static_cast<std::uint64_t>(flags.get_long("--seed", 1));
  const char* data_path = flags.get("--data", nullptr);
  if ((batch < 1) || (steps < 1) || (warmup < 0)) {
    std::fprintf(stderr, "bench_gpt: bad sizes\n");
    return 2;
  }

  // The text. A file is not loaded: one pass finds its alphabet, then each
  // sample's 9 characters are read with pread (one system call per sample,
  // about a microsecond next to a sample's ~400 us), so the data costs the
  // process no memory, as the per-sample design intends (the file stays in
  // the kernel's page cache). Without --data: 20,000 generated characters.
  Corpus corpus;
  if (!corpus.open(data_path)) {
    std::fprintf(stderr, "bench_gpt: cannot read %s\n", data_path);
    return 1;
  }
  const unsigned vocab = corpus.vocab;

  nn::GptConfig config;
  config.vocab = static_cast<bt::Index>(vocab);
  const bt::Index block = config.block;
  const nn::MemoryPlan plan = nn::Gpt<float>::plan(config, nn::OptimizerKind::kSgd);
  std::unique_ptr<std::uint64_t[]> storage(new std::uint64_t[(plan.tape_bytes + 63U) / 8U]);
  void* buffer = reinterpret_cast<void*>((reinterpret_cast<std::uintptr_t>(storage.get()) + 31U) & ~std::uintptr_t{31U});
  bt::Tape<float> tape(buffer, plan.tape_bytes, plan.nodes, plan.slots, plan.parameters);
  nn::Rng rng(seed);
  static nn::Gpt<float> model;
  if (!model.create(tape, config, rng)) {
    std::fprintf(stderr, "bench_gpt: cannot create the model: %s\n", bt::status_name(tape.status()));
    return 1;
  }
  const bt::Index first = model.first_parameter();
  const std::size_t n = model.parameter_count();
  nn::OptimizerConfig<float> oc;
  oc.kind = nn::OptimizerKind::kSgd;
  oc.lr = lr;
  nn::Optimizer<float> opt(oc, nullptr, n);
  const double t_ready = bench::now_seconds();
  bench::ready();

  bench::Sampler sampler(seed + 1U);
  const std::uint32_t windows = static_cast<std::uint32_t>(corpus.size - block - 1U);
  std::vector<std::uint8_t> window(static_cast<std::size_t>(batch) * (block + 1U));
  std::vector<std::uint32_t> picks(static_cast<std::size_t>(batch));
  std::vector<double> times;
  double first_loss = 0.0;
  double last_loss = 0.0;
  for (long step = 0; step < warmup + steps; ++step) {
    const double t0 = bench::now_seconds();
    for (std::size_t i = 0U; i < picks.size(); ++i) {
      picks[i] = sampler.below(windows);
      if (!corpus.read(picks[i], block + 1U, &window[i * (block + 1U)])) {
        std::fprintf(stderr, "bench_gpt: read failed\n");
        return 1;
      }
    }
    const float loss = nn::serial_batch(tape, first, n, picks.size(), [&](bt::Tape<float>& tp, std::size_t i) {
      const std::uint8_t* at = &window[i * (block + 1U)];
      return model.loss(tp, at, at + 1, block);
    });
    opt.step(tape.values() + first, tape.grads() + first);
    const double t1 = bench::now_seconds();
    if (!std::isfinite(loss)) {
      std::fprintf(stderr, "bench_gpt: loss is not finite at step %ld (%s)\n", step, bt::status_name(tape.status()));
      return 1;
    }
    if (step == 0) {
      first_loss = static_cast<double>(loss);
    }
    last_loss = static_cast<double>(loss);
    if (step >= warmup) {
      times.push_back((t1 - t0) * 1e3);
    }
  }
  const bench::Stats s = bench::stats(times);
  std::printf(
      "{\"bench\":\"gpt\",\"impl\":\"burtorch\",\"batch\":%ld,\"params\":%zu,\"vocab\":%u,\"steps\":%ld,"
      "\"median_ms\":%.6f,\"p10_ms\":%.6f,\"p90_ms\":%.6f,\"init_ms\":%.3f,\"tape_bytes\":%zu,"
      "\"sample_nodes\":%zu,\"first_loss\":%.5f,\"last_loss\":%.5f",
      batch, n, vocab, steps, s.median, s.p10, s.p90, (t_ready - t_start) * 1e3, plan.tape_bytes, plan.sample_nodes,
      first_loss, last_loss);
  bench::end_json(times);
  return 0;
}
